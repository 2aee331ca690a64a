"""kafka-python, aiokafka, KafkaJS and kcat over SASL: SCRAM-SHA-512 on SASL_SSL, PLAIN on SASL_PLAINTEXT.

Each client produces a few records and reads them back, and a wrong password fails quickly with that
client's own authentication error where the client can report one. One broker serves the whole
module; every test has its own topic.

Two clients cannot show everything Kafka would let them show, for reasons of their own:

- kafka-python 3.0.12 drops bytes that arrive together with the end of the stream
  (kafka/net/transport.py: `_sock_recv` returns data and an error, and the caller aborts without
  delivering the data). Kafka answers a failed SaslAuthenticate (after
  connection.failed.authentication.delay.ms) and closes the connection straight after, so the
  client sees "socket disconnected" instead of SaslAuthenticationFailedError and retries until its
  bootstrap times out. Its wrong-password test asserts that timeout and the broker's own
  "Failed authentication" log line.
- librdkafka before 2.6.1 (kcat 1.7.1 here links 2.0.2) sends the client nonce twice in its SCRAM
  client-final message (confluentinc/librdkafka#4895). Kafka 4 compares the nonce strictly
  (CVE-2024-56128) and refuses it, and so does this broker; kcat's SCRAM test asserts that refusal
  with such a librdkafka, and a round trip with a newer one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka import TopicPartition as AioTopicPartition
from aiokafka.errors import KafkaConnectionError
from aiokafka.errors import SaslAuthenticationFailed as AioSaslAuthenticationFailed
from aiokafka.helpers import create_ssl_context
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaTopicPartition
from kafka.errors import KafkaTimeoutError

from minibroker.core.credentials import scram_from_password
from minibroker.testing.certs import CertificateAuthority, make_broker_certificate, make_ca
from minibroker.testing.embedded import BrokerThread
from tests.helpers import unique_topic
from tests.integration.clients import ClientRun, node_dir, require_binary, run_client

PLAIN_USER, PLAIN_PASSWORD = "alice", "alice-secret"
SCRAM_USER, SCRAM_PASSWORD = "bob", "bob-secret"
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              f'password="admin-secret" user_admin="admin-secret" user_{PLAIN_USER}="{PLAIN_PASSWORD}";')
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
COUNT = 3
VALUES = [f"value-{i}" for i in range(COUNT)]

# What the broker answers a wrong password with, as Kafka does (PlainServerCallbackHandler, SaslServerAuthenticator)
PLAIN_REFUSAL = "Authentication failed: Invalid username or password"
SCRAM_REFUSAL = ("Authentication failed during authentication due to invalid credentials with SASL mechanism "
                 "SCRAM-SHA-512")

# (listener, mechanism, user, password): SCRAM over TLS, PLAIN over plain TCP
SCRAM_SSL = ("SASL_SSL", "SCRAM-SHA-512", SCRAM_USER, SCRAM_PASSWORD)
PLAIN_TCP = ("SASL_PLAINTEXT", "PLAIN", PLAIN_USER, PLAIN_PASSWORD)
SETUPS = pytest.mark.parametrize("setup", [SCRAM_SSL, PLAIN_TCP],
                                 ids=["scram-sha-512-sasl-ssl", "plain-sasl-plaintext"])
REFUSAL = {"PLAIN": PLAIN_REFUSAL, "SCRAM-SHA-512": SCRAM_REFUSAL}

CLIENT_TIMEOUT = 30.0  # one client program run; each normally takes well under a second


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> CertificateAuthority:
    """A throwaway CA; the broker's certificate covers localhost and 127.0.0.1."""
    return make_ca(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def secure(ca: CertificateAuthority) -> Iterator[BrokerThread]:
    """One broker for the module: PLAINTEXT (topic creation), SASL_PLAINTEXT and SASL_SSL, PLAIN and SCRAM-SHA-512."""
    config = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512",
        **{f"listener.name.{listener}.{mechanism}.sasl.jaas.config": jaas
           for listener in ("sasl_plaintext", "sasl_ssl")
           for mechanism, jaas in (("plain", PLAIN_JAAS), ("scram-sha-512", SCRAM_JAAS))},
        **make_broker_certificate(ca).keystore_configs("PEM"),
    }
    with BrokerThread(config=config) as broker:
        broker.call(broker.cluster.credentials.put_scram, SCRAM_USER, "SCRAM-SHA-512",
                    scram_from_password(SCRAM_PASSWORD, "SCRAM-SHA-512", 4096))
        yield broker


def address(broker: BrokerThread, listener: str) -> str:
    host, port = broker.cluster.nodes[0].address(listener)
    return f"{host}:{port}"


def new_topic(broker: BrokerThread, client: str) -> str:
    return broker.create_topic(unique_topic(f"sasl-{client}"), partitions=1)


def broker_refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The broker's "Failed authentication" connection-close reasons logged so far."""
    return [r.getMessage().split(": ", 1)[1] for r in caplog.records
            if r.name == "minibroker.connection" and "Failed authentication" in r.getMessage()]


# -- kafka-python -----------------------------------------------------------------

def kafka_python_settings(broker: BrokerThread, ca: CertificateAuthority, setup: tuple[str, ...],
                          password: str | None = None) -> dict[str, Any]:
    listener, mechanism, user, secret = setup
    settings: dict[str, Any] = {"bootstrap_servers": address(broker, listener), "security_protocol": listener,
                                "sasl_mechanism": mechanism, "sasl_plain_username": user,
                                "sasl_plain_password": secret if password is None else password}
    if listener == "SASL_SSL":
        settings["ssl_cafile"] = str(ca.ca_path)
    return settings


@SETUPS
def test_kafka_python_produces_and_consumes(secure: BrokerThread, ca: CertificateAuthority,
                                            setup: tuple[str, ...]) -> None:
    topic = new_topic(secure, "kafka-python")
    settings = kafka_python_settings(secure, ca, setup)
    producer = KafkaProducer(**settings, acks="all")
    try:
        for value in VALUES:
            producer.send(topic, value.encode(), partition=0).get(timeout=20)
    finally:
        producer.close()
    consumer = KafkaConsumer(**settings, group_id=None, enable_auto_commit=False)
    try:
        partition = KafkaTopicPartition(topic, 0)
        consumer.assign([partition])
        consumer.seek_to_beginning(partition)
        values: list[str] = []
        deadline = time.monotonic() + 20
        while len(values) < COUNT and time.monotonic() < deadline:
            for records in consumer.poll(timeout_ms=500).values():
                values.extend(r.value.decode() for r in records)
    finally:
        consumer.close()
    assert values == VALUES


@SETUPS
def test_kafka_python_with_a_wrong_password_never_bootstraps(secure: BrokerThread, ca: CertificateAuthority,
                                                             setup: tuple[str, ...],
                                                             caplog: pytest.LogCaptureFixture) -> None:
    """kafka-python cannot report SaslAuthenticationFailedError (see the module docstring): it times out."""
    caplog.set_level(logging.INFO, logger="minibroker.connection")
    started = time.monotonic()
    with pytest.raises(KafkaTimeoutError, match="Unable to bootstrap"):
        KafkaProducer(**kafka_python_settings(secure, ca, setup, password="wrong"), bootstrap_timeout_ms=1500)
    assert time.monotonic() - started < 10
    assert f"Failed authentication: {REFUSAL[setup[1]]}" in broker_refusals(caplog)


# -- aiokafka ---------------------------------------------------------------------

def aiokafka_settings(broker: BrokerThread, ca: CertificateAuthority, setup: tuple[str, ...],
                      password: str | None = None) -> dict[str, Any]:
    listener, mechanism, user, secret = setup
    settings: dict[str, Any] = {"bootstrap_servers": address(broker, listener), "security_protocol": listener,
                                "sasl_mechanism": mechanism, "sasl_plain_username": user,
                                "sasl_plain_password": secret if password is None else password,
                                "request_timeout_ms": 10000}
    if listener == "SASL_SSL":
        settings["ssl_context"] = create_ssl_context(cafile=str(ca.ca_path))
    return settings


async def aiokafka_round_trip(settings: dict[str, Any], topic: str) -> list[str]:
    producer = AIOKafkaProducer(**settings, acks="all")
    await producer.start()
    try:
        for value in VALUES:
            await producer.send_and_wait(topic, value.encode(), partition=0)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(**settings, group_id=None, enable_auto_commit=False)
    await consumer.start()
    values: list[str] = []
    try:
        partition = AioTopicPartition(topic, 0)
        consumer.assign([partition])
        await consumer.seek_to_beginning(partition)
        async with asyncio.timeout(20):
            while len(values) < COUNT:
                for records in (await consumer.getmany(timeout_ms=500)).values():
                    values.extend(r.value.decode() for r in records if r.value is not None)
    finally:
        await consumer.stop()
    return values


@SETUPS
def test_aiokafka_produces_and_consumes(secure: BrokerThread, ca: CertificateAuthority,
                                        setup: tuple[str, ...]) -> None:
    topic = new_topic(secure, "aiokafka")
    assert asyncio.run(aiokafka_round_trip(aiokafka_settings(secure, ca, setup), topic)) == VALUES


@SETUPS
def test_aiokafka_with_a_wrong_password_fails_with_sasl_authentication_failed(
        secure: BrokerThread, ca: CertificateAuthority, setup: tuple[str, ...],
        caplog: pytest.LogCaptureFixture) -> None:
    """aiokafka logs each bootstrap server's error and raises KafkaConnectionError once all have failed."""
    async def start() -> None:
        producer = AIOKafkaProducer(**aiokafka_settings(secure, ca, setup, password="wrong"))
        try:
            await producer.start()
        finally:
            await producer.stop()

    caplog.set_level(logging.ERROR, logger="aiokafka")
    started = time.monotonic()
    with pytest.raises(KafkaConnectionError, match="Unable to bootstrap"):
        asyncio.run(start())
    assert time.monotonic() - started < 10
    causes = [arg for r in caplog.records if r.name.startswith("aiokafka") for arg in (r.args or ())
              if isinstance(arg, Exception)]
    assert causes and all(isinstance(c, AioSaslAuthenticationFailed) for c in causes), caplog.text
    assert REFUSAL[setup[1]] in str(causes[0])


# -- KafkaJS ----------------------------------------------------------------------

def kafkajs(broker: BrokerThread, ca: CertificateAuthority, setup: tuple[str, ...], topic: str,
            password: str | None = None) -> ClientRun:
    """Runs tests/clients/node/sasl_roundtrip.js with KafkaJS options for `setup`."""
    listener, mechanism, user, secret = setup
    options: dict[str, Any] = {
        "brokers": [address(broker, listener)],
        "sasl": {"mechanism": mechanism.lower(), "username": user,
                 "password": secret if password is None else password},
        "retry": {"retries": 2, "initialRetryTime": 100, "maxRetryTime": 500},
    }
    if listener == "SASL_SSL":
        options["ssl"] = {"caPath": str(ca.ca_path)}
    return run_client(["node", "sasl_roundtrip.js", json.dumps(options), topic, str(COUNT), "20000"],
                      cwd=node_dir(), env={"KAFKAJS_NO_PARTITIONER_WARNING": "1"}, timeout=CLIENT_TIMEOUT)


@pytest.mark.kafkajs
@SETUPS
def test_kafkajs_produces_and_consumes(secure: BrokerThread, ca: CertificateAuthority,
                                       setup: tuple[str, ...]) -> None:
    topic = new_topic(secure, "kafkajs")
    run = kafkajs(secure, ca, setup, topic).check()
    lines = run.lines()
    assert lines[0] == {"event": "produced", "count": COUNT}, run.describe()
    assert [(r["offset"], r["value"]) for r in lines if r.get("event") == "record"] == list(enumerate(VALUES)), \
        run.describe()
    assert lines[-1] == {"done": True, "count": COUNT, "timed_out": False}, run.describe()


@pytest.mark.kafkajs
@SETUPS
def test_kafkajs_with_a_wrong_password_fails_with_kafkajs_sasl_authentication_error(
        secure: BrokerThread, ca: CertificateAuthority, setup: tuple[str, ...]) -> None:
    started = time.monotonic()
    run = kafkajs(secure, ca, setup, new_topic(secure, "kafkajs-refused"), password="wrong")
    assert time.monotonic() - started < 10, run.describe()
    assert run.returncode == 3, run.describe()
    (failure,) = run.lines()
    assert failure["stage"] == "producer" and failure["error"] == "KafkaJSSASLAuthenticationError", run.describe()
    assert failure["message"].endswith(REFUSAL[setup[1]]), run.describe()


# -- kcat (librdkafka) --------------------------------------------------------------

@pytest.fixture(scope="module")
def kcat() -> tuple[str, tuple[int, ...]]:
    """The kcat executable and the version of the librdkafka it links; it must have SSL and SASL SCRAM built in."""
    path = require_binary("kcat")
    version = run_client([path, "-V"], timeout=CLIENT_TIMEOUT).check().stdout
    features = re.search(r"builtin\.features=(\S+)", version)
    assert features and {"ssl", "sasl_plain", "sasl_scram"} <= set(features[1].split(",")), version
    librdkafka = re.search(r"librdkafka (\d+)\.(\d+)\.(\d+)", version)
    assert librdkafka, version
    return path, tuple(int(part) for part in librdkafka.groups())


def kcat_options(broker: BrokerThread, ca: CertificateAuthority, setup: tuple[str, ...],
                 password: str | None = None) -> list[str]:
    listener, mechanism, user, secret = setup
    settings = {"security.protocol": listener, "sasl.mechanisms": mechanism, "sasl.username": user,
                "sasl.password": secret if password is None else password}
    if listener == "SASL_SSL":
        settings["ssl.ca.location"] = str(ca.ca_path)
    options = ["-b", address(broker, listener)]
    for key, value in settings.items():
        options += ["-X", f"{key}={value}"]
    return options


def kcat_round_trip(kcat: str, options: list[str], topic: str) -> list[dict[str, Any]]:
    """Produces VALUES with kcat -P, then reads the partition to its end with kcat -C (no group), as JSON."""
    run_client([kcat, "-P", *options, "-t", topic, "-p", "0"], input="".join(f"{v}\n" for v in VALUES),
               timeout=CLIENT_TIMEOUT).check()
    run = run_client([kcat, "-C", *options, "-t", topic, "-o", "beginning", "-e", "-q", "-J"],
                     timeout=CLIENT_TIMEOUT).check()
    return run.lines()


def kcat_refused(kcat: str, options: list[str], topic: str) -> ClientRun:
    """kcat -P with the given options; librdkafka gives up at once when every broker refuses authentication."""
    started = time.monotonic()
    run = run_client([kcat, "-P", *options, "-t", topic, "-X", "message.timeout.ms=5000"], input="x\n",
                     timeout=CLIENT_TIMEOUT)
    assert time.monotonic() - started < 10, run.describe()
    return run


SASL_SSL_PLAIN = ("SASL_SSL", "PLAIN", PLAIN_USER, PLAIN_PASSWORD)
KCAT_PLAIN = pytest.mark.parametrize("setup", [PLAIN_TCP, SASL_SSL_PLAIN],
                                     ids=["plain-sasl-plaintext", "plain-sasl-ssl"])


@pytest.mark.kcat
@KCAT_PLAIN
def test_kcat_produces_and_consumes_with_plain(secure: BrokerThread, ca: CertificateAuthority,
                                               kcat: tuple[str, tuple[int, ...]], setup: tuple[str, ...]) -> None:
    topic = new_topic(secure, "kcat")
    messages = kcat_round_trip(kcat[0], kcat_options(secure, ca, setup), topic)
    assert [(m["offset"], m["payload"]) for m in messages] == list(enumerate(VALUES))


@pytest.mark.kcat
def test_kcat_over_sasl_ssl_with_scram_sha_512(secure: BrokerThread, ca: CertificateAuthority,
                                               kcat: tuple[str, tuple[int, ...]]) -> None:
    """A round trip with librdkafka >= 2.6.1; older ones double the client nonce and are refused, as by Kafka 4."""
    path, librdkafka = kcat
    topic = new_topic(secure, "kcat-scram")
    options = kcat_options(secure, ca, SCRAM_SSL)
    if librdkafka >= (2, 6, 1):
        messages = kcat_round_trip(path, options, topic)
        assert [(m["offset"], m["payload"]) for m in messages] == list(enumerate(VALUES))
    else:
        run = kcat_refused(path, options, topic)
        assert run.returncode != 0, run.describe()
        assert f"SASL authentication error: {SCRAM_REFUSAL}" in run.stderr, run.describe()


@pytest.mark.kcat
@KCAT_PLAIN
def test_kcat_with_a_wrong_password_fails_with_authentication_failure(
        secure: BrokerThread, ca: CertificateAuthority, kcat: tuple[str, tuple[int, ...]],
        setup: tuple[str, ...]) -> None:
    run = kcat_refused(kcat[0], kcat_options(secure, ca, setup, password="wrong"), new_topic(secure, "kcat-refused"))
    assert run.returncode != 0, run.describe()
    assert "Local: Authentication failure" in run.stderr, run.describe()
    assert f"SASL authentication error: {PLAIN_REFUSAL}" in run.stderr, run.describe()
