"""Client-side TLS and SASL (PLAIN, SCRAM-SHA-256/512) for minibroker's own client, Kafka's client settings.

`ClientSecurity.from_config` reads the Java client's names (`security.protocol`, `sasl.mechanism`,
`sasl.jaas.config` or `sasl.username`/`sasl.password`, `ssl.truststore.location`/`ssl.ca.location`,
`ssl.keystore.location`...), so the Spark source and the KIP-1269 producer take what users already
write for Kafka.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..protocol.jaas import load_server_jaas
from ..protocol.security_protocol import SECURITY_PROTOCOLS, uses_sasl, uses_tls

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
_SCRAM_HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}


class SecurityConfigError(ValueError):
    """Client security settings that cannot work."""


@dataclass(frozen=True)
class ClientSecurity:
    """How a client connects: the security protocol, TLS trust and identity, and SASL credentials."""

    protocol: str = "PLAINTEXT"
    mechanism: str = "PLAIN"
    username: str | None = None
    password: str | None = None
    ca_file: str | None = None  # PEM CA certificates to trust (default: the system's)
    cert_file: str | None = None  # a client certificate (PEM) for mutual TLS
    key_file: str | None = None
    key_password: str | None = None
    check_hostname: bool = True

    @property
    def uses_tls(self) -> bool:
        return uses_tls(self.protocol)

    @property
    def uses_sasl(self) -> bool:
        return uses_sasl(self.protocol)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> ClientSecurity:
        """From Kafka client settings; SecurityConfigError for what this client cannot do."""
        protocol = str(config.get("security.protocol", "PLAINTEXT")).upper()
        if protocol not in SECURITY_PROTOCOLS:
            raise SecurityConfigError(f"security.protocol must be one of {', '.join(SECURITY_PROTOCOLS)}, "
                                      f"got {protocol!r}")
        mechanism = str(config.get("sasl.mechanism", "GSSAPI" if uses_sasl(protocol) else "PLAIN")).upper()
        username, password = config.get("sasl.username"), config.get("sasl.password")
        if "sasl.jaas.config" in config:
            options = load_server_jaas(str(config["sasl.jaas.config"])).options
            username, password = options.get("username", username), options.get("password", password)
        if uses_sasl(protocol):
            if mechanism not in MECHANISMS:
                raise SecurityConfigError(f"sasl.mechanism {mechanism} is not supported by minibroker's client; "
                                          f"use one of {', '.join(MECHANISMS)}")
            if username is None or password is None:
                raise SecurityConfigError("SASL needs a username and a password (sasl.jaas.config, or sasl.username "
                                          "and sasl.password)")
        ca_file = config.get("ssl.ca.location") or config.get("ssl.truststore.location")
        if ca_file is not None and str(config.get("ssl.truststore.type", "PEM")).upper() != "PEM":
            raise SecurityConfigError("minibroker's client reads PEM trust stores only (ssl.truststore.type=PEM)")
        identification = str(config.get("ssl.endpoint.identification.algorithm", "https"))
        return cls(protocol, mechanism, None if username is None else str(username),
                   None if password is None else str(password), ca_file,
                   config.get("ssl.certificate.location") or config.get("ssl.keystore.location"),
                   config.get("ssl.key.location"), config.get("ssl.key.password"), identification != "")

    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context for SSL and SASL_SSL, None otherwise."""
        if not self.uses_tls:
            return None
        context = ssl.create_default_context(cafile=self.ca_file)
        context.check_hostname = self.check_hostname
        if self.cert_file is not None:
            context.load_cert_chain(self.cert_file, self.key_file, self.key_password)
        return context

    def sasl_exchange(self) -> SaslClient:
        """A new client side of the SASL exchange for one connection."""
        assert self.username is not None and self.password is not None
        if self.mechanism == "PLAIN":
            return PlainClient(self.username, self.password)
        return ScramClient(self.mechanism, self.username, self.password)


class SaslClient:
    """One SASL exchange: `first()` is the first token; `respond(challenge)` the next, None when done."""

    def first(self) -> bytes:
        raise NotImplementedError

    def respond(self, challenge: bytes) -> bytes | None:
        raise NotImplementedError


class PlainClient(SaslClient):
    """RFC 4616: one message, `\\0user\\0password`."""

    def __init__(self, username: str, password: str) -> None:
        self.username, self.password = username, password

    def first(self) -> bytes:
        return b"\x00" + self.username.encode() + b"\x00" + self.password.encode()

    def respond(self, challenge: bytes) -> bytes | None:
        return None


class ScramClient(SaslClient):
    """RFC 5802 / 7677, as Kafka's ScramSaslClient: client-first, client-final, the server signature checked."""

    def __init__(self, mechanism: str, username: str, password: str) -> None:
        self.hash = _SCRAM_HASHES[mechanism]
        self.username, self.password = username, password
        self.nonce = base64.b64encode(secrets.token_bytes(18)).decode()
        self._bare = "n=" + username.replace("=", "=3D").replace(",", "=2C") + ",r=" + self.nonce
        self._server_signature: bytes | None = None

    def first(self) -> bytes:
        return ("n,," + self._bare).encode()

    def _hmac(self, key: bytes, data: bytes) -> bytes:
        return hmac.new(key, data, self.hash).digest()

    def respond(self, challenge: bytes) -> bytes | None:
        text = challenge.decode()
        fields = dict(item.split("=", 1) for item in text.split(",") if "=" in item)
        if self._server_signature is not None:  # server-final
            if "e" in fields:
                raise ConnectionError(f"SCRAM authentication failed: {fields['e']}")
            if base64.b64decode(fields.get("v", "")) != self._server_signature:
                raise ConnectionError("SCRAM authentication failed: the server's signature does not match")
            return None
        nonce, salt, iterations = fields["r"], base64.b64decode(fields["s"]), int(fields["i"])
        if not nonce.startswith(self.nonce):
            raise ConnectionError("SCRAM authentication failed: the server's nonce does not extend ours")
        salted = hashlib.pbkdf2_hmac(self.hash, self.password.encode(), salt, iterations)
        client_key = self._hmac(salted, b"Client Key")
        stored_key = hashlib.new(self.hash, client_key).digest()
        without_proof = "c=biws,r=" + nonce
        auth_message = ",".join((self._bare, text, without_proof)).encode()
        proof = bytes(a ^ b for a, b in zip(client_key, self._hmac(stored_key, auth_message), strict=True))
        self._server_signature = self._hmac(self._hmac(salted, b"Server Key"), auth_message)
        return (without_proof + ",p=" + base64.b64encode(proof).decode()).encode()
