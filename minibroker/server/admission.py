"""What a connection may do, decided sans-IO: its connection-limit slot, its TLS principal, SASL before the rest.

The asyncio adapter (adapter.py) reports events (the TLS handshake is over, a request frame arrived, the
connection ended) and carries out what `Admission` answers: send an answer, close (now or after
`connection.failed.authentication.delay.ms`), or hand the frame to the APIs. Tested with bytes in
tests/unit/test_admission.py.

- connection limits: the acceptor counts the connection in the node's `ConnectionQuotas` (quotas.py);
  `release` gives the slot back once, however the connection ends;
- TLS: the principal from the client certificate (Kafka's DefaultKafkaPrincipalBuilder); on SASL_SSL the
  principal comes from SASL, and a certificate the mapping rules refuse closes the connection either way;
- SASL (authenticator.py): until authenticated, frames go to the authenticator and are read with
  `sasl.server.max.receive.size`; afterwards `socket.request.max.bytes`; a re-authentication goes back to it,
  and a request after the session's lifetime closes the connection (KIP-368).
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..apis.context import CloseConnection, Session
from ..apis.dispatch import Answer
from ..core.config import BrokerConfig
from ..protocol.errors import KafkaError
from .connection import Closed, Connection
from .quotas import ConnectionQuotas

if TYPE_CHECKING:
    from .authenticator import SaslAuthenticator

SESSION_EXPIRED = "the SASL session expired without re-authentication (connections.max.reauth.ms)"


@dataclass(frozen=True, slots=True)
class AuthAnswer:
    """The authenticator took the frame: send `answer` (None: complete the request with nothing written), then
    close when `close` gives a reason; both `delay_ms` late (Kafka's delayCloseOnAuthenticationFailure)."""

    answer: Answer | None
    close: str | None = None
    delay_ms: int = 0


class Admission:
    """The admission decisions of one connection; see the module docstring."""

    def __init__(self, connection: Connection, session: Session, config: BrokerConfig, *,
                 security_protocol: str | None = None, principal_mapping_rules: str = "DEFAULT",
                 authenticator: SaslAuthenticator | None = None, sasl_max_receive_size: int = 524288,
                 quotas: ConnectionQuotas | None = None, admitted_ip: str | None = None) -> None:
        self.connection = connection
        self.session = session
        self.config = config  # read at each use: dynamic updates apply at once
        self.security_protocol = security_protocol  # None: the node's first listener (PLAINTEXT or SSL)
        self.principal_mapping_rules = principal_mapping_rules
        self.authenticator = authenticator
        self._quotas = quotas
        self._admitted_ip = admitted_ip  # counted by the quotas until `release`
        if authenticator is not None:
            connection.limit_frames(sasl_max_receive_size, "sasl.server.max.receive.size")

    # -- events ----------------------------------------------------------------------------------

    def tls_established(self, certificate: bytes | None) -> Closed | None:
        """The TLS handshake is over with the peer's certificate (DER, None without one): Closed when refused."""
        from .tls_principal import PrincipalMappingError, principal_from_certificate  # TLS listeners only

        try:
            principal = principal_from_certificate(certificate, self.principal_mapping_rules)
        except PrincipalMappingError as exc:
            self.connection.close(str(exc))
            return Closed(str(exc))
        if self.security_protocol in (None, "SSL"):
            self.session.principal = principal
        return None

    def receive(self, frame: memoryview) -> AuthAnswer | Closed | None:
        """A request frame: what SASL makes of it, or None when it goes to the APIs."""
        authenticator = self.authenticator
        if authenticator is None:
            return None
        api_key = int.from_bytes(frame[:2], "big", signed=True) if len(frame) >= 2 else -1
        if not authenticator.wants(api_key):
            return Closed(SESSION_EXPIRED) if authenticator.session_expired() else None
        step = authenticator.receive(frame)
        if authenticator.complete and authenticator.principal is not None:
            self.session.principal = authenticator.principal
            self.connection.limit_frames(self.config["socket.request.max.bytes"], "socket.request.max.bytes")
        if step.close is None:
            return AuthAnswer(step.answer)
        return AuthAnswer(step.answer, step.close, max(self.config["connection.failed.authentication.delay.ms"], 0))

    def release(self) -> None:
        """The connection ended: give its connection-limit slot back (once)."""
        if self._quotas is not None and self._admitted_ip is not None:
            self._quotas.release(self._admitted_ip)
            self._admitted_ip = None


def close_reason(exc: Exception) -> str:
    """Why a request that raised closes its connection, as the close is logged."""
    if isinstance(exc, CloseConnection):
        return str(exc)
    if isinstance(exc, KafkaError):
        return f"refused: {exc.code.name}: {exc.message}"
    return f"internal error: {type(exc).__name__}: {exc}"


def setup_failure(exc: BaseException | None) -> str | None:
    """Why a connection whose transport was never set up ended, when it is worth an INFO line (a TLS handshake)."""
    if isinstance(exc, ssl.SSLError):
        return f"SSL handshake failed: {exc}"
    if isinstance(exc, TimeoutError):
        return "SSL handshake timed out"
    return None


def handshake_timeout_s(max_idle_ms: int) -> float:
    """The loop's own deadline for a TLS handshake: past `connections.max.idle.ms`, so that the idle expiry closes
    a silent handshake first, as in Kafka, whose handshakes have no deadline of their own (a day when it is off)."""
    return max_idle_ms / 1000 + 1 if max_idle_ms > 0 else 86_400.0
