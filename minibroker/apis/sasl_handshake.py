"""SaslHandshake (17): on a PLAINTEXT listener, ILLEGAL_SASL_STATE, as Kafka answers it.

Versions 0-1: v1 has the client send its tokens in SaslAuthenticate requests rather than as raw frames. Mirrors
KafkaApis.handleSaslHandshakeRequest.

Only a SASL listener authenticates (SaslServerAuthenticator, before any request reaches KafkaApis). On a
PLAINTEXT listener the handshake reaches KafkaApis, which answers error 34 and no mechanisms; the connection
stays open.
"""

from __future__ import annotations

from ..protocol.errors import ErrorCode
from ..protocol.messages import SaslHandshakeRequest, SaslHandshakeResponse
from .context import RequestContext

API_KEY = 17
MIN_VERSION, MAX_VERSION = 0, 1


def handle(request: SaslHandshakeRequest, ctx: RequestContext) -> SaslHandshakeResponse:
    return SaslHandshakeResponse(error_code=ErrorCode.ILLEGAL_SASL_STATE, mechanisms=[])
