"""SaslAuthenticate (36): on a PLAINTEXT listener, ILLEGAL_SASL_STATE, as Kafka answers it.

Versions 0-2: v1 answers the session lifetime; v2 is flexible. Mirrors KafkaApis.handleSaslAuthenticateRequest,
which a request reaches only once the connection counts as authenticated (always, on PLAINTEXT).

The answer is error 34 with Kafka's message, no auth bytes, session lifetime 0 (v1+). The connection stays
open.
"""

from __future__ import annotations

from ..protocol.errors import ErrorCode
from ..protocol.messages import SaslAuthenticateRequest, SaslAuthenticateResponse
from .context import RequestContext

API_KEY = 36
MIN_VERSION, MAX_VERSION = 0, 2

AFTER_AUTHENTICATION = "SaslAuthenticate request received after successful authentication"


def handle(request: SaslAuthenticateRequest, ctx: RequestContext) -> SaslAuthenticateResponse:
    return SaslAuthenticateResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, error_message=AFTER_AUTHENTICATION,
                                    auth_bytes=b"", session_lifetime_ms=0)
