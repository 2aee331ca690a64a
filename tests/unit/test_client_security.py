"""Kafka client security settings as minibroker's client and Spark source/sink read them."""

from __future__ import annotations

import pytest

from minibroker.client.security import ClientSecurity, SecurityConfigError
from minibroker.spark.options import OptionError, SinkOptions, SourceOptions

JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="s3cret";'


def test_java_style_settings_give_protocol_mechanism_credentials_and_trust() -> None:
    security = ClientSecurity.from_config({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
                                           "sasl.jaas.config": JAAS, "ssl.truststore.type": "PEM",
                                           "ssl.truststore.location": "/tmp/ca.pem"})
    assert (security.protocol, security.mechanism, security.username, security.password, security.ca_file) == (
        "SASL_SSL", "SCRAM-SHA-512", "alice", "s3cret", "/tmp/ca.pem")
    assert security.uses_tls and security.uses_sasl
    librdkafka = ClientSecurity.from_config({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
                                             "sasl.username": "bob", "sasl.password": "pw"})
    assert (librdkafka.username, librdkafka.password, librdkafka.ssl_context()) == ("bob", "pw", None)


@pytest.mark.parametrize(("settings", "message"), [
    ({"security.protocol": "SASL_SSL"}, "sasl.mechanism GSSAPI is not supported"),
    ({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN"}, "needs a username and a password"),
    ({"security.protocol": "SSL", "ssl.truststore.location": "/x.p12", "ssl.truststore.type": "PKCS12"},
     "PEM trust stores only"),
    ({"security.protocol": "TLS"}, "security.protocol must be one of"),
])
def test_settings_this_client_cannot_honour_are_refused(settings: dict[str, str], message: str) -> None:
    with pytest.raises(SecurityConfigError, match=message):
        ClientSecurity.from_config(settings)


def test_spark_options_pass_kafka_prefixed_security_settings_to_the_client() -> None:
    read = SourceOptions.parse({"kafka.bootstrap.servers": "h:9095", "subscribe": "t",
                                "kafka.security.protocol": "SASL_SSL", "kafka.sasl.mechanism": "SCRAM-SHA-256",
                                "kafka.sasl.jaas.config": JAAS}, streaming=False)
    assert (read.security.protocol, read.security.mechanism, read.security.username) == (
        "SASL_SSL", "SCRAM-SHA-256", "alice")
    write = SinkOptions.parse({"kafka.bootstrap.servers": "h:9092", "topic": "t"})
    assert write.security.protocol == "PLAINTEXT"
    with pytest.raises(OptionError, match="needs a username"):
        SinkOptions.parse({"kafka.bootstrap.servers": "h:9092", "kafka.security.protocol": "SASL_SSL",
                           "kafka.sasl.mechanism": "PLAIN"})
