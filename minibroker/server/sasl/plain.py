"""SASL/PLAIN (RFC 4616) as Kafka's PlainSaslServer with its PlainServerCallbackHandler.

message = [authzid] NUL authcid NUL passwd. The password is checked against the listener's JAAS
`user_<name>="<password>"` options (held by the CredentialStore). Every refusal is explained to
the client: Kafka's PlainSaslServer throws SaslAuthenticationException for all of them.
"""

from __future__ import annotations

import hmac

from ...core.credentials import CredentialStore
from .base import SaslAuthenticationError, SaslServer

PLAIN_MECHANISM = "PLAIN"


def split_plain_message(text: str) -> list[str]:
    """The message's NUL-separated fields as PlainSaslServer.extractTokens reads them: at most four."""
    fields = []
    start = 0
    for _ in range(4):
        end = text.find("\x00", start)
        if end == -1:
            fields.append(text[start:])
            break
        fields.append(text[start:end])
        start = end + 1
    return fields


class PlainSaslServer(SaslServer):
    """One SASL/PLAIN exchange: a single client message, an empty answer."""

    mechanism = PLAIN_MECHANISM

    def __init__(self, credentials: CredentialStore, reauthenticating: bool = False) -> None:
        super().__init__(reauthenticating)
        self._credentials = credentials

    def _evaluate(self, token: bytes) -> tuple[bytes, bool]:
        # Java decodes with replacement characters rather than failing on bad UTF-8
        fields = split_plain_message(token.decode("utf-8", errors="replace"))
        if len(fields) != 3:
            raise SaslAuthenticationError(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(fields)}")
        authorization_id, username, password = fields
        if not username:
            raise SaslAuthenticationError("Authentication failed: username not specified")
        if not password:
            raise SaslAuthenticationError("Authentication failed: password not specified")
        expected = self._credentials.plain_password(username)
        if expected is None or not hmac.compare_digest(password.encode("utf-8", "surrogatepass"),
                                                       expected.encode("utf-8", "surrogatepass")):
            raise SaslAuthenticationError("Authentication failed: Invalid username or password")
        if authorization_id and authorization_id != username:
            raise SaslAuthenticationError(
                "Authentication failed: Client requested an authorization id that is different from username")
        self._complete_as(username)
        return b"", True
