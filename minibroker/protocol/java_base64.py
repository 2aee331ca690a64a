"""Base64 text as Java's `java.util.Base64.getDecoder()` reads it, for what Kafka decodes with it.

SCRAM credentials and `add-scram` salts (core/credentials.py) and the parts of an unsecured OAUTHBEARER token
(server/sasl/oauthbearer.py) are read as the basic decoder reads them: the standard alphabet only (`-` and `_`
are refused), padding optional but never wrong.
"""

from __future__ import annotations

import base64
import binascii
import re

_BASIC = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def java_base64_decode(text: str) -> bytes:
    """The bytes of `text`; ValueError where Java's basic decoder throws IllegalArgumentException."""
    if not _BASIC.fullmatch(text):
        raise ValueError(text)
    body = text.rstrip("=")
    if len(body) % 4 == 1 or (text != body and len(text) % 4 != 0):
        raise ValueError(text)
    try:
        return base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
    except binascii.Error as e:
        raise ValueError(text) from e
