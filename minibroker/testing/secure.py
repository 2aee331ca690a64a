"""A broker with every kind of listener for tests: SSL, SASL_PLAINTEXT and SASL_SSL, a throwaway CA, users.

    with BrokerThread.secured() as broker:
        settings = broker.security.librdkafka("SASL_SSL", "SCRAM-SHA-512")  # confluent-kafka / kcat
        producer = confluent_kafka.Producer(settings)

The listeners are PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL on free ports; PLAIN, SCRAM-SHA-256 and
SCRAM-SHA-512 are enabled on both SASL listeners; the users `admin` and `alice` (passwords
`admin-secret`, `alice-secret`) exist for PLAIN and both SCRAM mechanisms, and `User:admin` is in
`super.users`, so with `config={"authorizer.class.name": STANDARD_AUTHORIZER}` ACLs apply to everyone
else while the fixtures (topic creation, logged in as admin) keep working. `broker.security.ca_path` is
the CA clients trust; `client_certificate()` issues one for mutual TLS.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..client.security import ClientSecurity
from .certs import CertificateAuthority, IssuedCertificate, make_broker_certificate, make_ca, make_client_certificate

USERS = {"admin": "admin-secret", "alice": "alice-secret"}
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
LISTENERS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
_SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"


def _jaas_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass
class Security:
    """The PKI and users of a secure test broker, and client settings for each of its listeners."""

    ca: CertificateAuthority
    certificate: IssuedCertificate
    users: dict[str, str] = field(default_factory=lambda: dict(USERS))
    broker: Any = None  # the BrokerThread, once seed_users ran (embedded.py imports this module, not the reverse)
    temporary: bool = False  # the PKI's directory was made for it: remove_files() deletes it

    def remove_files(self) -> None:
        """Delete the keys and certificates when their directory was a temporary one made for them."""
        if self.temporary:
            shutil.rmtree(self.ca.directory, ignore_errors=True)

    @property
    def ca_path(self) -> Path:
        """The CA certificate (PEM) clients trust: `ssl.ca.location`, `ssl_cafile`."""
        return self.ca.ca_path

    def broker_config(self) -> dict[str, str]:
        """Kafka configs for the four listeners, TLS keystore and SASL mechanisms with their JAAS entries."""
        plain_users = " ".join(f"user_{user}={_jaas_string(password)}" for user, password in self.users.items())
        admin = next(iter(self.users))
        plain = (f"{_PLAIN_MODULE} required username={_jaas_string(admin)} "
                 f"password={_jaas_string(self.users[admin])} {plain_users};")
        configs = {"listeners": ",".join(f"{name}://127.0.0.1:0" for name in LISTENERS),
                   "sasl.enabled.mechanisms": ",".join(MECHANISMS), "super.users": f"User:{admin}",
                   **self.certificate.keystore_configs("PEM")}
        for listener in ("sasl_plaintext", "sasl_ssl"):
            configs[f"listener.name.{listener}.plain.sasl.jaas.config"] = plain
            for mechanism in MECHANISMS[1:]:
                configs[f"listener.name.{listener}.{mechanism.lower()}.sasl.jaas.config"] = f"{_SCRAM_MODULE} required;"
        return configs

    def seed_users(self, broker: Any) -> None:
        """Give every user a SCRAM credential for both mechanisms (as `kafka-storage format --add-scram`)."""
        from ..core.credentials import scram_from_password

        for user, password in self.users.items():
            for mechanism in MECHANISMS[1:]:
                broker.call(broker.cluster.credentials.put_scram, user, mechanism,
                            scram_from_password(password, mechanism, 4096))
        self.broker = broker

    def bootstrap(self, listener: str = "SASL_SSL") -> str:
        """`host:port` of every node's `listener`."""
        assert self.broker is not None, "seed_users(broker) first"
        return ",".join("{}:{}".format(*node.address(listener)) for node in self.broker.cluster.nodes)

    def librdkafka(self, listener: str = "SASL_SSL", mechanism: str = "SCRAM-SHA-512", user: str = "alice",
                   password: str | None = None) -> dict[str, Any]:
        """confluent-kafka / kcat settings for `listener` (mechanism and user only matter on SASL ones)."""
        settings: dict[str, Any] = {"bootstrap.servers": self.bootstrap(listener), "security.protocol": listener}
        if listener in ("SSL", "SASL_SSL"):
            settings["ssl.ca.location"] = str(self.ca_path)
        if listener.startswith("SASL"):
            settings.update({"sasl.mechanism": mechanism, "sasl.username": user,
                             "sasl.password": self.users[user] if password is None else password})
        return settings

    def java(self, listener: str = "SASL_SSL", mechanism: str = "SCRAM-SHA-512", user: str = "alice",
             password: str | None = None) -> dict[str, str]:
        """Java client properties for `listener`: a PKCS12 trust store and a JAAS line."""
        settings = {"bootstrap.servers": self.bootstrap(listener), "security.protocol": listener}
        if listener in ("SSL", "SASL_SSL"):
            settings.update({"ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(self.ca.truststore_path),
                             "ssl.truststore.password": self.ca.truststore_password})
        if listener.startswith("SASL"):
            module = _PLAIN_MODULE if mechanism == "PLAIN" else _SCRAM_MODULE
            secret = self.users[user] if password is None else password
            settings.update({"sasl.mechanism": mechanism, "sasl.jaas.config":
                             f"{module} required username={_jaas_string(user)} password={_jaas_string(secret)};"})
        return settings

    def admin(self) -> ClientSecurity:
        """How the fixtures log in: the first user (a super user) with PLAIN on SASL_PLAINTEXT."""
        admin = next(iter(self.users))
        return ClientSecurity("SASL_PLAINTEXT", "PLAIN", admin, self.users[admin])

    def client_certificate(self, common_name: str) -> IssuedCertificate:
        """A client certificate signed by the CA, for mutual TLS (principal `User:CN=<common_name>`)."""
        return make_client_certificate(self.ca, common_name)


def new_security(directory: str | Path | None = None) -> Security:
    """A fresh CA and broker certificate (for localhost and 127.0.0.1) in `directory` (a temporary one by default,
    which `remove_files()` deletes)."""
    ca = make_ca(directory)
    return Security(ca, make_broker_certificate(ca), temporary=directory is None)
