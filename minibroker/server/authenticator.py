"""SASL authentication of one connection, as Kafka's SaslServerAuthenticator does it (sans-IO).

On a SASL listener a client may send only ApiVersions (once) and SaslHandshake before it has
authenticated. SaslHandshake v0 makes the following frames raw SASL tokens, answered by raw
tokens (the last one too, even when empty); v1 makes them SaslAuthenticate requests. Anything else
is refused the way Kafka refuses it: "Unexpected Kafka request of type X during SASL handshake." and
the connection closes. A failed exchange answers SASL_AUTHENTICATION_FAILED with Kafka's message,
then closes; where Kafka builds no answer (a raw v0 token, a re-authentication asking for another
mechanism) it only closes, the message going to the log. Once
complete, the principal is `User:<authorization id>`; with `connections.max.reauth.ms` (or an
OAUTHBEARER token's expiry) the session has a lifetime (KIP-368): the client re-authenticates
with a new SaslHandshake, or its next request after the expiry closes the connection.

The exchange changes state only through `TRANSITIONS` (h11's model); a step outside it is an `IllegalTransition`.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from ..apis.context import CloseConnection
from ..apis.dispatch import Answer, RequestHeader, encode_response, parse_header
from ..core.credentials import CredentialStore
from ..core.transitions import EventTable
from ..protocol.errors import ErrorCode
from ..protocol.messages import (
    MalformedRequest,
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
    api_name,
    decode_request,
)
from .sasl.mechanism import (
    SaslAuthenticationError,
    SaslFatalError,
    SaslServer,
    SaslServerConfig,
    UnsupportedSaslMechanismError,
    new_sasl_server,
)
from .sasl.scram import java_sized_hash_map_keys

API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36
_MAX_VERSIONS = {SASL_HANDSHAKE: 1, SASL_AUTHENTICATE: 2}


def _check_version(header: RequestHeader) -> None:
    """Kafka cannot even answer a SaslHandshake/SaslAuthenticate version it does not know: it closes."""
    highest = _MAX_VERSIONS.get(header.api_key)
    if highest is not None and not 0 <= header.api_version <= highest:
        raise CloseConnection(f"Version {header.api_version} is not supported for apiKey {api_name(header.api_key)}")


class SaslState(Enum):
    HANDSHAKE_OR_VERSIONS_REQUEST = "HANDSHAKE_OR_VERSIONS_REQUEST"
    HANDSHAKE_REQUEST = "HANDSHAKE_REQUEST"
    AUTHENTICATE = "AUTHENTICATE"
    REAUTH_BAD_MECHANISM = "REAUTH_BAD_MECHANISM"
    COMPLETE = "COMPLETE"
    FAILED = "FAILED"


class SaslEvent(Enum):
    API_VERSIONS = "API_VERSIONS"  # ApiVersions before the handshake, answered
    HANDSHAKE = "HANDSHAKE"  # SaslHandshake for an enabled mechanism
    BAD_REAUTH_MECHANISM = "BAD_REAUTH_MECHANISM"  # a re-authentication's handshake for another mechanism
    SUCCEEDED = "SUCCEEDED"  # the mechanism's exchange is complete
    REAUTHENTICATE = "REAUTHENTICATE"  # a SaslHandshake after completion (KIP-368)
    FAIL = "FAIL"  # anything refused: the connection closes


_S, _E = SaslState, SaslEvent
TRANSITIONS: EventTable[SaslState, SaslEvent] = EventTable("SASL exchange", {
    _S.HANDSHAKE_OR_VERSIONS_REQUEST: {_E.API_VERSIONS: _S.HANDSHAKE_REQUEST, _E.HANDSHAKE: _S.AUTHENTICATE,
                                       _E.FAIL: _S.FAILED},
    _S.HANDSHAKE_REQUEST: {_E.HANDSHAKE: _S.AUTHENTICATE, _E.BAD_REAUTH_MECHANISM: _S.REAUTH_BAD_MECHANISM,
                           _E.FAIL: _S.FAILED},
    _S.AUTHENTICATE: {_E.SUCCEEDED: _S.COMPLETE, _E.FAIL: _S.FAILED},
    _S.REAUTH_BAD_MECHANISM: {_E.FAIL: _S.FAILED},
    _S.COMPLETE: {_E.REAUTHENTICATE: _S.HANDSHAKE_REQUEST},
    _S.FAILED: {_E.FAIL: _S.FAILED},
})


@dataclass(slots=True)
class AuthStep:
    """What to do with one frame: send `answer` (None: nothing), then close when `close` gives a reason."""

    answer: Answer | None = None
    close: str | None = None


class SaslAuthenticator:
    """The SASL state of one connection on a SASL listener."""

    def __init__(self, enabled_mechanisms: list[str], credentials: CredentialStore, config: SaslServerConfig,
                 now_ms: Callable[[], int], max_reauth_ms: int, api_versions: Callable[[memoryview], Answer]) -> None:
        # in Kafka's order, which SaslHandshake lists: ChannelBuilders keeps them in a HashMap
        self.enabled_mechanisms = java_sized_hash_map_keys(enabled_mechanisms)
        self.credentials = credentials
        self.config = config
        self._now_ms = now_ms
        self.max_reauth_ms = max_reauth_ms
        self._api_versions = api_versions  # answers ApiVersions as the listener does
        self.state = SaslState.HANDSHAKE_OR_VERSIONS_REQUEST  # changed by `_step` only
        self._kafka_headers = False  # SaslHandshake v1: tokens travel in SaslAuthenticate requests
        self._server: SaslServer | None = None
        self.mechanism: str | None = None
        self.principal: str | None = None
        self.session_expires_ms: int | None = None
        self.client_supports_reauthentication = False
        self._previous: tuple[str, str] | None = None  # (mechanism, principal) while re-authenticating
        self._bad_mechanism_message = ""

    # -- state -------------------------------------------------------------------------------

    @property
    def complete(self) -> bool:
        return self.state is SaslState.COMPLETE

    @property
    def reauthenticating(self) -> bool:
        return self._previous is not None

    def _step(self, event: SaslEvent) -> None:
        self.state = TRANSITIONS.next(self.state, event)

    def session_expired(self) -> bool:
        """KIP-368: the session's lifetime is over (the client did not re-authenticate in time)."""
        return self.session_expires_ms is not None and self._now_ms() > self.session_expires_ms

    def wants(self, api_key: int) -> bool:
        """Whether this frame is the authenticator's: everything until complete, then a re-authentication."""
        if not self.complete:
            return True
        return api_key == SASL_HANDSHAKE and self.client_supports_reauthentication

    def begin_reauthentication(self) -> None:
        assert self.mechanism is not None and self.principal is not None
        self._previous = (self.mechanism, self.principal)
        self._step(SaslEvent.REAUTHENTICATE)
        self._server = None

    # -- one frame -------------------------------------------------------------------------------

    def receive(self, frame: memoryview) -> AuthStep:
        """Handle one frame that `wants` said is ours."""
        if self.complete:
            self.begin_reauthentication()
        try:
            if self.state is SaslState.REAUTH_BAD_MECHANISM:
                # Kafka fails on the frame after the handshake without reading it, and builds no answer
                self._step(SaslEvent.FAIL)
                return AuthStep(close=self._failure(self._bad_mechanism_message))
            if self.state is SaslState.AUTHENTICATE:
                return self._token(frame)
            return self._handshake_phase(frame)
        except CloseConnection as exc:
            self._step(SaslEvent.FAIL)
            return AuthStep(close=str(exc))

    def _handshake_phase(self, frame: memoryview) -> AuthStep:
        header = parse_header(frame)
        if header.api_key not in (API_VERSIONS, SASL_HANDSHAKE):
            raise CloseConnection(f"Unexpected Kafka request of type {api_name(header.api_key)} during SASL handshake.")
        _check_version(header)
        if header.api_key == API_VERSIONS:
            if self.state is not SaslState.HANDSHAKE_OR_VERSIONS_REQUEST:
                raise CloseConnection(f"Unexpected ApiVersions request received during SASL authentication state "
                                      f"{self.state.value}")
            self._step(SaslEvent.API_VERSIONS)
            return AuthStep(self._api_versions(frame))
        request = self._decode(header, frame)
        mechanism = request.mechanism
        self._kafka_headers = header.api_version >= 1
        if mechanism not in self.enabled_mechanisms:
            answer = encode_response(header, SaslHandshakeResponse(error_code=ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                                                                   mechanisms=list(self.enabled_mechanisms)))
            self._step(SaslEvent.FAIL)
            return AuthStep(answer, f"Unsupported SASL mechanism {mechanism}")
        answer = encode_response(header, SaslHandshakeResponse(error_code=0, mechanisms=list(self.enabled_mechanisms)))
        if self._previous is not None and self._previous[0] != mechanism:
            self._bad_mechanism_message = (f"SASL mechanism '{mechanism}' requested by client is not supported for "
                                           f"re-authentication of mechanism '{self._previous[0]}'")
            self._step(SaslEvent.BAD_REAUTH_MECHANISM)
            return AuthStep(answer)
        try:
            self._server = new_sasl_server(mechanism, self.credentials, self.config,
                                           reauthenticating=self.reauthenticating)
        except UnsupportedSaslMechanismError as exc:  # enabled but not built here (refused at start-up)
            raise CloseConnection(str(exc)) from None
        self.mechanism = mechanism
        self._step(SaslEvent.HANDSHAKE)
        return AuthStep(answer)

    def _token(self, frame: memoryview) -> AuthStep:
        server = self._server
        assert server is not None
        if not self._kafka_headers:  # SaslHandshake v0: the frame is the token, the answer a bare token
            try:
                response = server.evaluate(bytes(frame))
                if server.complete:
                    self._completed(server)
            except (SaslAuthenticationError, SaslFatalError) as exc:
                # a raw token has no error frame: Kafka closes (a changed principal included)
                self._step(SaslEvent.FAIL)
                return AuthStep(close=self._failure(str(exc)))
            # sent even when empty (PLAIN's and OAUTHBEARER's last answer): a v0 client may wait for it
            return AuthStep(struct.pack(">i", len(response)) + response)
        header = parse_header(frame)
        if header.api_key != SASL_AUTHENTICATE:
            raise CloseConnection(f"Unexpected Kafka request of type {api_name(header.api_key)} during SASL "
                                  "authentication.")
        _check_version(header)
        request = self._decode(header, frame)
        if header.api_version > 0:
            self.client_supports_reauthentication = True
        try:
            response = server.evaluate(bytes(request.auth_bytes))
            lifetime = self._completed(server) if server.complete else 0
        except SaslAuthenticationError as exc:
            self._step(SaslEvent.FAIL)
            answer = encode_response(header, SaslAuthenticateResponse(
                error_code=ErrorCode.SASL_AUTHENTICATION_FAILED, error_message=exc.message, auth_bytes=b"",
                session_lifetime_ms=0))
            return AuthStep(answer, self._failure(exc.message))
        except SaslFatalError as exc:
            self._step(SaslEvent.FAIL)
            return AuthStep(close=self._failure(str(exc)))
        answer = encode_response(header, SaslAuthenticateResponse(error_code=0, error_message="",
                                                                  auth_bytes=response or b"",
                                                                  session_lifetime_ms=lifetime))
        return AuthStep(answer)

    def _failure(self, message: str) -> str:
        """The close reason of a failed exchange, worded as Kafka's Selector logs it."""
        return f"Failed {'re-' if self.reauthenticating else ''}authentication: {message}"

    def _completed(self, server: SaslServer) -> int:
        """The exchange succeeded: the principal, and the session lifetime told to the client (KIP-368)."""
        principal = f"User:{server.authorization_id}"
        if self._previous is not None and self._previous[1] != principal:
            old, new = self._previous[1].split(":", 1), principal.split(":", 1)
            raise SaslAuthenticationError(f"Cannot change principals during re-authentication from "
                                          f"{old[0]}.{old[1]}: {new[0]}.{new[1]}")
        now = self._now_ms()
        expiry = server.credential_expiry_ms
        lifetime = 0
        if expiry is not None or self.max_reauth_ms > 0:
            if expiry is None:
                lifetime = self.max_reauth_ms
            elif self.max_reauth_ms <= 0:
                lifetime = max(expiry - now, 0)
            else:
                lifetime = max(min(expiry - now, self.max_reauth_ms), 0)
            self.session_expires_ms = now + lifetime
        else:
            self.session_expires_ms = None
        self.principal = principal
        self._step(SaslEvent.SUCCEEDED)
        self._previous = None
        return lifetime

    @staticmethod
    def _decode(header: RequestHeader, frame: memoryview) -> SaslHandshakeRequest | SaslAuthenticateRequest:
        try:
            return decode_request(header.api_key, header.api_version, frame[header.body_offset:])
        except MalformedRequest as exc:
            raise CloseConnection(f"malformed {api_name(header.api_key)} request: {exc}") from None
