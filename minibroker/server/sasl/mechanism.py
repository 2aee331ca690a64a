"""The SASL mechanisms the broker serves, behind one interface, and the factory that picks one.

Usage by the connection's SaslAuthenticate handling (no sockets here):

    server = new_sasl_server("SCRAM-SHA-512", credentials, config)
    answer = server.evaluate(auth_bytes)  # the SaslAuthenticate answer's auth_bytes (or a v0 frame)
    # SaslAuthenticationError e: answer SASL_AUTHENTICATION_FAILED with e.message, then close;
    # SaslFatalError: close without an answer, as Kafka does;
    # server.complete: the principal is User:<server.authorization_id>, and
    #   server.credential_expiry_ms (OAUTHBEARER's exp) bounds the KIP-368 session lifetime.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ...core.clock import Clock, SystemClock
from ...core.credentials import SCRAM_MECHANISMS, CredentialStore
from .base import (
    SaslAuthenticationError,
    SaslError,
    SaslFatalError,
    SaslServer,
    generic_failure_message,
)
from .oauthbearer import OAUTHBEARER_MECHANISM, OAuthBearerSaslServer, UnsecuredValidatorOptions
from .plain import PLAIN_MECHANISM, PlainSaslServer
from .scram import ScramSaslServer

__all__ = [
    "SUPPORTED_MECHANISMS",
    "SaslAuthenticationError",
    "SaslError",
    "SaslFatalError",
    "SaslServer",
    "SaslServerConfig",
    "UnsupportedSaslMechanismError",
    "generic_failure_message",
    "new_sasl_server",
]

SUPPORTED_MECHANISMS = (PLAIN_MECHANISM, "SCRAM-SHA-256", "SCRAM-SHA-512", OAUTHBEARER_MECHANISM)


class UnsupportedSaslMechanismError(ValueError):
    """A mechanism this broker does not implement (GSSAPI, a typo); Kafka's UnsupportedSaslMechanismException."""


@dataclass(frozen=True, slots=True)
class SaslServerConfig:
    """What a listener's mechanisms need besides credentials.

    `oauthbearer_options`: the module options of the listener's `oauthbearer.sasl.jaas.config`
    (the `unsecuredValidator*` keys); `clock`: the time OAUTHBEARER checks `exp` and `iat` against.
    """

    oauthbearer_options: Mapping[str, str] = field(default_factory=dict)
    clock: Clock = field(default_factory=SystemClock)

    def validator_options(self) -> UnsecuredValidatorOptions:
        """The OAUTHBEARER validator's options; OAuthBearerConfigError (a ValueError) if one is invalid."""
        return UnsecuredValidatorOptions.from_jaas_options(self.oauthbearer_options)


def new_sasl_server(mechanism: str, credentials: CredentialStore, config: SaslServerConfig | None = None, *,
                    reauthenticating: bool = False) -> SaslServer:
    """A server for one exchange of `mechanism` (KIP-368: a new one for each re-authentication).

    `reauthenticating` only changes the generic failure message ("... during re-authentication ...").
    """
    config = config or SaslServerConfig()
    if mechanism == PLAIN_MECHANISM:
        return PlainSaslServer(credentials, reauthenticating)
    if mechanism in SCRAM_MECHANISMS:
        return ScramSaslServer(mechanism, credentials, reauthenticating)
    if mechanism == OAUTHBEARER_MECHANISM:
        return OAuthBearerSaslServer(config.validator_options(), config.clock, reauthenticating)
    raise UnsupportedSaslMechanismError(f"Unsupported SASL mechanism {mechanism}")
