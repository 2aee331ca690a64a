"""SASL listeners with real clients: PLAIN over SASL_PLAINTEXT, SCRAM over SASL_SSL, refusals as Kafka's."""

from __future__ import annotations

import base64
import json
import logging
import socket
import struct
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from minibroker.core.clock import ManualClock
from minibroker.core.config import ConfigError
from minibroker.core.credentials import scram_from_password
from minibroker.protocol.messages import (
    ApiVersionsRequest,
    MetadataRequest,
    SaslAuthenticateRequest,
    SaslHandshakeRequest,
)
from minibroker.testing.certs import make_broker_certificate, make_ca
from minibroker.testing.embedded import BrokerThread
from minibroker.testing.wire import WireClient
from tests.helpers import read_ready_file
from tests.integration.clients import JAVA_CURRENT, JavaClients

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Any:
    ca = make_ca(tmp_path_factory.mktemp("pki"))
    return ca, make_broker_certificate(ca)


def secure_config(pki: Any) -> dict[str, str]:
    ca, broker = pki
    return {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": SCRAM_JAAS,
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
        "listener.name.sasl_ssl.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config": SCRAM_JAAS,
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
        **broker.keystore_configs("PEM"),
    }


@pytest.fixture(scope="module")
def secure(pki: Any) -> Any:
    with BrokerThread(config=secure_config(pki)) as broker:
        for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            credential = scram_from_password("bob-secret", mechanism, 4096)
            broker.call(broker.cluster.credentials.put_scram, "bob", mechanism, credential)
        broker.create_topic("secured", partitions=1)
        yield broker


def address(broker: BrokerThread, listener: str) -> str:
    host, port = broker.cluster.nodes[0].address(listener)
    return f"{host}:{port}"


def port_of(broker: BrokerThread, listener: str) -> int:
    return broker.cluster.nodes[0].address(listener)[1]


def confluent_settings(broker: BrokerThread, protocol: str, mechanism: str, user: str, password: str,
                       ca_path: Path | None = None) -> dict[str, Any]:
    settings = {"bootstrap.servers": address(broker, protocol), "security.protocol": protocol,
                "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password}
    if ca_path is not None:
        settings["ssl.ca.location"] = str(ca_path)
    return settings


def produce_and_consume(settings: dict[str, Any], topic: str, count: int = 3) -> list[bytes]:
    producer = Producer({**settings, "message.timeout.ms": 20000})
    for i in range(count):
        producer.produce(topic, f"v{i}".encode())
    assert producer.flush(30) == 0
    consumer = Consumer({**settings, "group.id": "sasl", "enable.auto.commit": False})
    high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=20)[1]
    consumer.assign([TopicPartition(topic, 0, high - count)])
    values = []
    try:
        while len(values) < count:
            message = consumer.poll(10)
            assert message is not None and message.error() is None, message and message.error()
            values.append(message.value())
    finally:
        consumer.close()
    return values


def delivery_errors(settings: dict[str, Any]) -> list[Any]:
    producer = Producer({**settings, "message.timeout.ms": 3000})
    errors: list[Any] = []
    producer.produce("secured", b"x", on_delivery=lambda err, _msg: errors.append(err))
    producer.flush(10)
    return errors


def test_confluent_kafka_over_sasl_plaintext_with_plain(secure: BrokerThread) -> None:
    settings = confluent_settings(secure, "SASL_PLAINTEXT", "PLAIN", "alice", "alice-secret")
    assert produce_and_consume(settings, "secured") == [b"v0", b"v1", b"v2"]
    producer = Producer(settings)  # still connected while the broker is asked who it is
    producer.produce("secured", b"who")
    assert producer.flush(20) == 0
    assert principals_on(secure, "SASL_PLAINTEXT") == {"User:alice"}


def principals_on(broker: BrokerThread, listener: str) -> set[str]:
    return broker.call(lambda: {c.session.principal for c in broker.broker.connections
                                if c.session.listener == listener})


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_confluent_kafka_over_sasl_ssl_with_scram(secure: BrokerThread, pki: Any, mechanism: str) -> None:
    ca, _broker = pki
    settings = confluent_settings(secure, "SASL_SSL", mechanism, "bob", "bob-secret", ca.ca_path)
    assert produce_and_consume(settings, "secured") == [b"v0", b"v1", b"v2"]


@pytest.mark.parametrize(("mechanism", "user", "password"), [
    ("PLAIN", "alice", "wrong"), ("SCRAM-SHA-512", "bob", "wrong"), ("SCRAM-SHA-512", "nobody", "x")])
def test_wrong_credentials_fail_with_an_authentication_error(secure: BrokerThread, mechanism: str, user: str,
                                                            password: str) -> None:
    errors = delivery_errors(confluent_settings(secure, "SASL_PLAINTEXT", mechanism, user, password))
    assert errors and errors[0] is not None
    assert f"User:{user}" not in principals_on(secure, "SASL_PLAINTEXT")


def handshake(wire: WireClient, mechanism: str, version: int = 1) -> Any:
    return wire.request(SaslHandshakeRequest(mechanism=mechanism), version)


def test_an_unsupported_mechanism_gets_the_enabled_list_then_the_connection_closes(secure: BrokerThread) -> None:
    with WireClient("127.0.0.1", port_of(secure, "SASL_PLAINTEXT")) as wire:
        answer = handshake(wire, "GSSAPI")
        assert answer.error_code == 33  # UNSUPPORTED_SASL_MECHANISM
        # Kafka's order, not the config's: its ChannelBuilders keeps the mechanisms in a HashMap
        assert answer.mechanisms == ["PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256"]
        assert wire.is_closed_by_peer()


@pytest.mark.parametrize("version", [0, 2])
def test_a_successful_login_answers_an_empty_error_message(secure: BrokerThread, version: int) -> None:
    with WireClient("127.0.0.1", port_of(secure, "SASL_PLAINTEXT")) as wire:
        assert handshake(wire, "PLAIN").mechanisms == ["PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256"]
        answer = wire.request(SaslAuthenticateRequest(auth_bytes=b"\0alice\0alice-secret"), version)
        assert (answer.error_code, answer.error_message) == (0, "")  # Kafka's: "", not null


def test_a_request_before_authentication_closes_the_connection(secure: BrokerThread) -> None:
    with WireClient("127.0.0.1", port_of(secure, "SASL_PLAINTEXT")) as wire:
        assert wire.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"),
                            3).error_code == 0
        wire.send_raw(wire.encode_request(MetadataRequest(topics=[], allow_auto_topic_creation=False), 12))
        assert wire.is_closed_by_peer()


def test_bad_sasl_bytes_close_only_their_connection(secure: BrokerThread) -> None:
    port = port_of(secure, "SASL_PLAINTEXT")
    with WireClient("127.0.0.1", port) as wire:  # a v0 handshake, then a garbage SCRAM client-first
        assert handshake(wire, "SCRAM-SHA-512", version=0).error_code == 0
        wire.send_raw(struct.pack(">i", 9) + b"garbage!!")
        assert wire.is_closed_by_peer()
    with WireClient("127.0.0.1", port) as wire:  # a frame larger than sasl.server.max.receive.size
        wire.send_raw(struct.pack(">i", 600_000) + b"x" * 100)
        assert wire.is_closed_by_peer()
    with WireClient("127.0.0.1", port) as wire:  # a truncated SCRAM exchange: the client goes away
        assert handshake(wire, "SCRAM-SHA-256").error_code == 0
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass
    settings = confluent_settings(secure, "SASL_PLAINTEXT", "PLAIN", "alice", "alice-secret")
    assert produce_and_consume(settings, "secured", 1) == [b"v0"]


def test_the_java_client_produces_over_sasl_ssl_with_scram_and_plain(secure: BrokerThread, pki: Any,
                                                                     tmp_path: Path) -> None:
    ca, _broker = pki
    java = JavaClients(tmp_path, version=JAVA_CURRENT)
    target = SimpleNamespace(bootstrap_servers=address(secure, "SASL_SSL"))
    common = {"security.protocol": "SASL_SSL", "ssl.truststore.type": "PKCS12",
              "ssl.truststore.location": str(ca.truststore_path), "ssl.truststore.password": ca.truststore_password}
    scram = {**common, "sasl.mechanism": "SCRAM-SHA-512",
             "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" '
                                 'password="bob-secret";'}
    run = java.run(target, "ProduceRecords", "secured", 5, *(f"{k}={v}" for k, v in scram.items())).check()
    assert run.lines()[-1] == {"done": True, "sent": 5, "acked": 5, "failed": 0}, run.describe()
    wrong = {**scram, "sasl.jaas.config": scram["sasl.jaas.config"].replace("bob-secret", "nope"),
             # generous: a loaded machine took more than 8 s for the JVM's TLS and SCRAM exchange, and the
             # client then reported a metadata timeout instead of the authentication failure
             "delivery.timeout.ms": "40000", "max.block.ms": "40000", "request.timeout.ms": "30000"}
    failed = java.run(target, "ProduceRecords", "secured", 1, *(f"{k}={v}" for k, v in wrong.items()))
    assert "SaslAuthenticationException" in failed.stdout + failed.stderr, failed.describe()


def test_a_sasl_listener_without_a_jaas_entry_refuses_to_start(pki: Any) -> None:
    config = secure_config(pki)
    del config["listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config"]
    with pytest.raises(ConfigError, match="Could not find a 'KafkaServer' or 'sasl_ssl.KafkaServer' entry"):
        BrokerThread(config=config)
    with pytest.raises(ConfigError, match="GSSAPI"):
        BrokerThread(config={**secure_config(pki), "sasl.enabled.mechanisms": "GSSAPI"})


def test_scram_credentials_created_through_the_admin_api_log_in_and_deleted_ones_do_not(secure: BrokerThread) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin._users import UserScramCredentialDeletion, UserScramCredentialUpsertion

    admin = KafkaAdminClient(bootstrap_servers=address(secure, "SASL_PLAINTEXT"), security_protocol="SASL_PLAINTEXT",
                             sasl_mechanism="PLAIN", sasl_plain_username="admin", sasl_plain_password="admin-secret")
    try:
        assert admin.alter_user_scram_credentials([
            UserScramCredentialUpsertion("carol", "SCRAM-SHA-256", "carol-secret", iterations=8192)]) == {"carol": None}
        described = admin.describe_user_scram_credentials(["carol", "nobody"])
        assert described["carol"]["credential_infos"] == [{"mechanism": 1, "iterations": 8192}]
        assert described["nobody"]["error"] == "Attempt to describe a user credential that does not exist: nobody"
        settings = confluent_settings(secure, "SASL_PLAINTEXT", "SCRAM-SHA-256", "carol", "carol-secret")
        assert produce_and_consume(settings, "secured", 1) == [b"v0"]
        refused = admin.alter_user_scram_credentials([
            UserScramCredentialUpsertion("dave", "SCRAM-SHA-512", "x", iterations=1000),
            UserScramCredentialDeletion("carol", "SCRAM-SHA-512"),
            UserScramCredentialUpsertion("erin", "SCRAM-SHA-512", "x"),
            UserScramCredentialUpsertion("erin", "SCRAM-SHA-256", "x"),
        ])
        # one change per user and request, whatever the mechanism (ScramControlManager keys changes by user)
        assert refused == {"dave": "Too few iterations", "carol": "Attempt to delete a user credential that does "
                           "not exist", "erin": "A user credential cannot be altered twice in the same request"}
        assert "dave" not in admin.describe_user_scram_credentials() and "erin" not in \
            admin.describe_user_scram_credentials()
        assert admin.alter_user_scram_credentials([UserScramCredentialDeletion("carol", "SCRAM-SHA-256")]) == {
            "carol": None}
        assert delivery_errors(settings)[0] is not None
    finally:
        admin.close()


def test_serve_with_a_sasl_listener_and_scram_users_from_the_command_line(tmp_path: Path) -> None:
    import subprocess
    import sys

    from minibroker.testing.process import stop_process

    properties = tmp_path / "server.properties"
    properties.write_text("listeners=SASL_PLAINTEXT://127.0.0.1:0\n"
                          "sasl.enabled.mechanisms=SCRAM-SHA-512\n"
                          f"listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config={SCRAM_JAAS}\n")
    ready_file = tmp_path / "ready.json"
    popen = subprocess.Popen([sys.executable, "-m", "minibroker", "serve", "--config", str(properties),
                              "--add-scram", "SCRAM-SHA-512=[name=alice,password=alice-secret]",
                              "--ready-file", str(ready_file)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        bootstrap = read_ready_file(popen, ready_file)["bootstrap_servers"]
        settings = {"bootstrap.servers": bootstrap, "security.protocol": "SASL_PLAINTEXT",
                    "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "alice", "sasl.password": "alice-secret"}
        producer = Producer({**settings, "message.timeout.ms": 20000})
        producer.produce("from-cli", b"x")  # auto-created
        assert producer.flush(30) == 0
        assert delivery_errors({**settings, "sasl.password": "wrong"})[0] is not None
    finally:
        stop_process(popen)


def test_serve_refuses_an_unusable_sasl_listener_in_one_line() -> None:
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "minibroker", "serve", "--port", "0", "--set",
                             "listeners=SASL_PLAINTEXT://127.0.0.1:0"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "minibroker: refusing to start: minibroker does not implement the SASL mechanism(s) GSSAPI enabled on "
        "listener SASL_PLAINTEXT: set sasl.enabled.mechanisms to some of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, "
        "OAUTHBEARER")
    assert "Traceback" not in result.stderr


def test_kip_368_session_lifetime_reauthentication_and_expiry_on_the_core_clock() -> None:
    from minibroker.core.clock import ManualClock
    from minibroker.protocol.messages import SaslAuthenticateRequest

    clock = ManualClock()
    config = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN",
              "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS, "connections.max.reauth.ms": "60000"}
    metadata = MetadataRequest(topics=[], allow_auto_topic_creation=False)
    with BrokerThread(config=config, clock=clock) as broker:
        port = port_of(broker, "SASL_PLAINTEXT")
        with WireClient("127.0.0.1", port) as wire:
            assert handshake(wire, "PLAIN").error_code == 0
            answer = wire.request(SaslAuthenticateRequest(auth_bytes=b"\x00alice\x00alice-secret"), 2)
            assert (answer.error_code, answer.session_lifetime_ms) == (0, 60000)
            assert wire.request(metadata, 12).brokers
            clock.advance(50_000)  # re-authenticate before the lifetime is over: a new one starts
            assert handshake(wire, "PLAIN").error_code == 0
            again = wire.request(SaslAuthenticateRequest(auth_bytes=b"\x00alice\x00alice-secret"), 2)
            assert (again.error_code, again.session_lifetime_ms) == (0, 60000)
            clock.advance(50_000)  # past the first lifetime, inside the second
            assert wire.request(metadata, 12).brokers
            clock.advance(20_000)  # past the second: the next request closes the connection
            wire.send_raw(wire.encode_request(metadata, 12))
            assert wire.is_closed_by_peer()
        with WireClient("127.0.0.1", port) as wire:  # re-authenticating as someone else is refused
            assert handshake(wire, "PLAIN").error_code == 0
            assert wire.request(SaslAuthenticateRequest(auth_bytes=b"\x00alice\x00alice-secret"), 2).error_code == 0
            assert handshake(wire, "PLAIN").error_code == 0
            other = wire.request(SaslAuthenticateRequest(auth_bytes=b"\x00admin\x00admin-secret"), 2)
            assert other.error_code == 58  # SASL_AUTHENTICATION_FAILED
            assert other.error_message == ("Cannot change principals during re-authentication from User.alice: "
                                           "User.admin")
            assert wire.is_closed_by_peer()


@pytest.mark.parametrize(("listener", "mechanism", "user"), [
    ("SASL_SSL", "SCRAM-SHA-512", "bob"), ("SASL_SSL", "SCRAM-SHA-256", "bob"), ("SASL_PLAINTEXT", "PLAIN", "alice")])
async def test_minibrokers_own_producer_and_consumer_take_kafka_security_settings(
        secure: BrokerThread, pki: Any, listener: str, mechanism: str, user: str) -> None:
    from minibroker.client import KafkaClient
    from minibroker.client.consumer import fetch_range
    from minibroker.client.producer import Producer as Kip1269Producer
    from minibroker.client.security import ClientSecurity

    ca, _broker = pki
    password = {"bob": "bob-secret", "alice": "alice-secret"}[user]
    module = "plain.PlainLoginModule" if mechanism == "PLAIN" else "scram.ScramLoginModule"
    settings = {"security.protocol": listener, "sasl.mechanism": mechanism, "ssl.truststore.type": "PEM",
                "ssl.truststore.location": str(ca.ca_path),
                "sasl.jaas.config": f'org.apache.kafka.common.security.{module} required username="{user}" '
                                    f'password="{password}";'}
    security = ClientSecurity.from_config(settings)
    topic = f"own-client-{listener}-{mechanism}".lower()
    async with Kip1269Producer(address(secure, listener), security=security) as producer:
        for i in range(3):
            await producer.send(topic, f"own-{i}".encode(), partition=0)
        await producer.flush()
    client = KafkaClient(address(secure, listener), security=security)
    await client.start()
    try:
        values = [value for columns in [c async for c in fetch_range(client, topic, 0, 0, 3)]
                  for value in columns.values]
    finally:
        await client.close()
    assert values == [b"own-0", b"own-1", b"own-2"]
    wrong = ClientSecurity.from_config({**settings, "sasl.jaas.config": settings["sasl.jaas.config"].replace(
        password, "nope")})
    with pytest.raises(ConnectionError, match="Authentication failed"):
        await KafkaClient(address(secure, listener), security=wrong).start()


def test_a_failed_login_is_answered_and_closed_only_after_connection_failed_authentication_delay_ms() -> None:
    import time

    from minibroker.protocol.messages import SaslAuthenticateRequest

    config = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN",
              "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
              "connection.failed.authentication.delay.ms": "400"}
    with BrokerThread(config=config) as broker, WireClient("127.0.0.1", port_of(broker, "SASL_PLAINTEXT")) as wire:
        assert handshake(wire, "PLAIN").error_code == 0
        started = time.monotonic()
        answer = wire.request(SaslAuthenticateRequest(auth_bytes=b"\x00alice\x00wrong"), 2)
        assert time.monotonic() - started >= 0.35  # generous: only the lower bound is Kafka's rule
        assert (answer.error_code, answer.error_message) == (58, "Authentication failed: Invalid username or password")
        assert wire.is_closed_by_peer()


def test_confluent_kafka_logs_in_with_an_unsecured_oauthbearer_token() -> None:
    config = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "OAUTHBEARER",
              "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config":
                  "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"}
    with BrokerThread(config=config) as broker:
        settings = {"bootstrap.servers": address(broker, "SASL_PLAINTEXT"), "security.protocol": "SASL_PLAINTEXT",
                    "sasl.mechanism": "OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt": True,
                    "sasl.oauthbearer.config": "principal=carol"}
        producer = Producer({**settings, "message.timeout.ms": 20000})
        producer.produce("oauth", b"token")
        assert producer.flush(30) == 0
        assert principals_on(broker, "SASL_PLAINTEXT") == {"User:carol"}


# -- re-authentication failures, SaslHandshake v0's raw tokens, sasl.server.max.receive.size ----------------

OAUTHBEARER_JAAS = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;"
MIXED_MAX_RECEIVE = 4096
NOW_MS = 1_700_000_000_000  # the broker's manual clock: what an OAUTHBEARER token's iat and exp are checked against


@pytest.fixture(scope="module")
def mixed() -> Iterator[BrokerThread]:
    """One SASL_PLAINTEXT listener with PLAIN, SCRAM-SHA-512 and OAUTHBEARER, sessions of 60 s (KIP-368)."""
    config = {"listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512,OAUTHBEARER",
              "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
              "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
              "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": OAUTHBEARER_JAAS,
              "connections.max.reauth.ms": "60000", "sasl.server.max.receive.size": str(MIXED_MAX_RECEIVE)}
    with BrokerThread(config=config, clock=ManualClock(NOW_MS)) as broker:
        yield broker


def login(wire: WireClient, user: str, password: str) -> None:
    """PLAIN over SaslHandshake v1 and SaslAuthenticate v2, as a client that can re-authenticate (KIP-368)."""
    assert handshake(wire, "PLAIN").error_code == 0
    answer = wire.request(SaslAuthenticateRequest(auth_bytes=f"\x00{user}\x00{password}".encode()), 2)
    assert (answer.error_code, answer.session_lifetime_ms) == (0, 60000)


def sized(token: bytes) -> bytes:
    return struct.pack(">i", len(token)) + token


def oauthbearer_token(subject: str) -> bytes:
    """RFC 7628's client message carrying an unsecured JWS, as Kafka's unsecured login module builds it."""
    def b64url(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    jws = f"{b64url({'alg': 'none'})}.{b64url({'sub': subject, 'iat': NOW_MS / 1000, 'exp': NOW_MS / 1000 + 3600})}."
    return f"n,,\x01auth=Bearer {jws}\x01\x01".encode()


def connection_closes(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The reasons of the broker's "closing connection from <peer>: <reason>" lines."""
    return [r.getMessage().split(": ", 1)[1] for r in caplog.records
            if r.name == "minibroker.connection" and r.getMessage().startswith("closing connection from ")]


def assert_no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text


def assert_others_still_served(broker: BrokerThread) -> None:
    with WireClient("127.0.0.1", port_of(broker, "SASL_PLAINTEXT")) as wire:
        login(wire, "alice", "alice-secret")
        assert wire.request(MetadataRequest(topics=[], allow_auto_topic_creation=False), 12).brokers


def test_reauthenticating_with_another_mechanism_closes_without_an_answer_as_kafka(
        mixed: BrokerThread, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="minibroker.connection")
    with WireClient("127.0.0.1", port_of(mixed, "SASL_PLAINTEXT")) as wire:
        login(wire, "alice", "alice-secret")
        # Kafka answers the handshake (REAUTH_BAD_MECHANISM), then fails on the next frame without reading it:
        # no SaslAuthenticate answer is built, the connection closes
        assert handshake(wire, "SCRAM-SHA-512").error_code == 0
        wire.send_raw(wire.encode_request(SaslAuthenticateRequest(auth_bytes=b"n,,n=alice,r=abc"), 2))
        assert wire.is_closed_by_peer()  # EOF, no answer byte before it
    assert ("Failed re-authentication: SASL mechanism 'SCRAM-SHA-512' requested by client is not supported for "
            "re-authentication of mechanism 'PLAIN'") in connection_closes(caplog)
    assert_no_tracebacks(caplog)
    assert_others_still_served(mixed)


def test_reauthenticating_as_another_principal_over_saslhandshake_v0_closes_without_an_answer(
        mixed: BrokerThread, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="minibroker.connection")
    with WireClient("127.0.0.1", port_of(mixed, "SASL_PLAINTEXT")) as wire:
        login(wire, "alice", "alice-secret")
        assert handshake(wire, "PLAIN", version=0).error_code == 0
        wire.send_raw(sized(b"\x00admin\x00admin-secret"))  # a raw token: Kafka has no error frame for it
        assert wire.is_closed_by_peer()
    assert ("Failed re-authentication: Cannot change principals during re-authentication from User.alice: "
            "User.admin") in connection_closes(caplog)
    assert_no_tracebacks(caplog)
    assert_others_still_served(mixed)


@pytest.mark.parametrize(("mechanism", "token", "principal"), [
    ("PLAIN", b"\x00alice\x00alice-secret", "User:alice"),
    ("OAUTHBEARER", oauthbearer_token("carol"), "User:carol")])
def test_a_saslhandshake_v0_exchange_ends_with_kafkas_empty_frame(mixed: BrokerThread, mechanism: str, token: bytes,
                                                                 principal: str) -> None:
    with WireClient("127.0.0.1", port_of(mixed, "SASL_PLAINTEXT")) as wire:
        assert handshake(wire, mechanism, version=0).error_code == 0
        wire.send_raw(sized(token))
        wire.sock.settimeout(5)
        # SaslServerAuthenticator sends the mechanism's (empty) last answer size-prefixed: 4 zero bytes
        assert wire.read_frame() == b""
        assert principals_on(mixed, "SASL_PLAINTEXT") >= {principal}
        assert wire.request(MetadataRequest(topics=[], allow_auto_topic_creation=False), 12).brokers


def test_reauthenticating_over_saslhandshake_v0_as_the_same_principal_ends_with_the_empty_frame(
        mixed: BrokerThread) -> None:
    with WireClient("127.0.0.1", port_of(mixed, "SASL_PLAINTEXT")) as wire:
        login(wire, "alice", "alice-secret")
        assert handshake(wire, "PLAIN", version=0).error_code == 0
        wire.send_raw(sized(b"\x00alice\x00alice-secret"))
        wire.sock.settimeout(5)
        assert wire.read_frame() == b""
        assert wire.request(MetadataRequest(topics=[], allow_auto_topic_creation=False), 12).brokers


def test_a_frame_over_sasl_server_max_receive_size_before_authentication_is_refused_naming_that_bound(
        mixed: BrokerThread, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="minibroker.connection")
    port = port_of(mixed, "SASL_PLAINTEXT")
    with WireClient("127.0.0.1", port) as wire:
        wire.send_raw(struct.pack(">i", MIXED_MAX_RECEIVE + 1) + b"x" * 100)
        assert wire.is_closed_by_peer()
    refusals = [reason for reason in connection_closes(caplog) if f"{MIXED_MAX_RECEIVE + 1}" in reason]
    assert refusals == [f"frame size {MIXED_MAX_RECEIVE + 1} is outside 1..{MIXED_MAX_RECEIVE} "
                        "(sasl.server.max.receive.size)"]
    assert_no_tracebacks(caplog)
    # once authenticated, socket.request.max.bytes bounds frames again
    with WireClient("127.0.0.1", port) as wire:
        login(wire, "alice", "alice-secret")
        wire.client_id = "c" * MIXED_MAX_RECEIVE
        assert wire.request(MetadataRequest(topics=[], allow_auto_topic_creation=False), 12).brokers
