"""What every SASL server mechanism shares: the exchange's states and the three ways an exchange fails.

Kafka's SaslServerAuthenticator tells its SaslServers' failures apart by class, and a client sees
a different thing for each; the mechanisms here raise the matching one of:

- `SaslAuthenticationError`: SaslAuthenticate answers SASL_AUTHENTICATION_FAILED with `message`,
  then the connection closes. Kafka's SaslAuthenticationException carries a message meant for the
  client; its plain SaslException does not, and the client gets the generic "Authentication failed
  during authentication due to invalid credentials with SASL mechanism X" instead (the reason
  stays in `reason`, for the broker's log).
- `SaslFatalError`: Kafka answers nothing and closes the connection (an IllegalSaslStateException,
  or a runtime exception escaping the mechanism, as some malformed tokens cause in Kafka).
"""

from __future__ import annotations

from abc import ABC, abstractmethod


class SaslError(Exception):
    """A failed SASL exchange; `reason` says why, for the broker's log."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class SaslAuthenticationError(SaslError):
    """Answer SASL_AUTHENTICATION_FAILED with `message` (what Kafka tells the client), then close."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(reason if reason is not None else message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class SaslFatalError(SaslError):
    """Close the connection without an answer, as Kafka does for this failure."""


class SaslException(Exception):
    """A mechanism's failure whose reason Kafka keeps from the client (javax.security.sasl.SaslException)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def generic_failure_message(mechanism: str, reauthenticating: bool = False) -> str:
    """The message SaslServerAuthenticator sends instead of a SaslException's own (KIP-152)."""
    phase = "re-authentication" if reauthenticating else "authentication"
    return f"Authentication failed during {phase} due to invalid credentials with SASL mechanism {mechanism}"


class SaslServer(ABC):
    """The server side of one SASL exchange: client tokens in, challenges or the final server message out.

    No I/O. `evaluate` is called with each token the client sends (the auth_bytes of a
    SaslAuthenticate request, or a raw v0 frame); what it returns goes back to the client. The
    exchange is over when `complete` turns True; `authorization_id` is then the principal's name.
    Any error fails the exchange for good: a later `evaluate` raises SaslFatalError.
    """

    mechanism: str

    def __init__(self, reauthenticating: bool = False) -> None:
        self._reauthenticating = reauthenticating
        self._state = "AUTHENTICATING"  # then COMPLETE or FAILED
        self._authorization_id: str | None = None

    @property
    def complete(self) -> bool:
        """True once the client has authenticated."""
        return self._state == "COMPLETE"

    @property
    def failed(self) -> bool:
        """True once the exchange has failed."""
        return self._state == "FAILED"

    @property
    def authorization_id(self) -> str:
        """The authenticated principal's name (Kafka's SaslServer.getAuthorizationID)."""
        if self._authorization_id is None or not self.complete:
            raise RuntimeError("Authentication exchange has not completed")
        return self._authorization_id

    @property
    def credential_expiry_ms(self) -> int | None:
        """When the credential used expires, in ms since the epoch, or None (KIP-368's session lifetime)."""
        return None

    def evaluate(self, token: bytes) -> bytes:
        """Take the client's next token; return the challenge or final message to send it."""
        if self._state != "AUTHENTICATING":
            # Kafka's ScramSaslServer: IllegalSaslStateException, which the authenticator does not answer
            raise SaslFatalError(f"Unexpected challenge in Sasl server state {self._state}")
        try:
            answer, done = self._evaluate(bytes(token))
        except SaslException as e:
            self._state = "FAILED"
            raise SaslAuthenticationError(generic_failure_message(self.mechanism, self._reauthenticating),
                                          reason=e.reason) from e
        except SaslError:
            self._state = "FAILED"
            raise
        if done:
            self._state = "COMPLETE"
        return answer

    def _complete_as(self, authorization_id: str) -> None:
        self._authorization_id = authorization_id

    @abstractmethod
    def _evaluate(self, token: bytes) -> tuple[bytes, bool]:
        """The mechanism's step: (what to send back, whether the exchange is now complete).

        Raise SaslException for a failure Kafka explains only in its log, SaslAuthenticationError
        for one it explains to the client, SaslFatalError where Kafka closes without answering.
        """
