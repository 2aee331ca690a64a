"""Mutual TLS with the Java client, aiokafka and KafkaJS: the principal is the client certificate's subject,
and the StandardAuthorizer decides with it.

Each client produces a few records over an SSL listener with `ssl.client.auth=required` and reads them back.
The broker is asked for the principals of its open SSL connections while the client is still connected: the
Java and KafkaJS programs (HeldRoundTrip.java, held_roundtrip.js) hold their connections until their stdin
closes. With the default `ssl.principal.mapping.rules` the principal of subject `CN=alice` is `User:CN=alice`.
"""

from __future__ import annotations

import asyncio
import json
import queue
import ssl
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka import TopicPartition as AioTopicPartition
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from minibroker.core.acls import (
    STANDARD_AUTHORIZER,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
)
from minibroker.testing.certs import (
    CertificateAuthority,
    IssuedCertificate,
    KeystoreKind,
    make_broker_certificate,
    make_ca,
    make_client_certificate,
)
from minibroker.testing.embedded import BrokerThread
from tests.helpers import unique_topic, wait_until
from tests.integration.clients import JavaClients, node_dir

COUNT = 3
ALICE = "User:CN=alice"  # DEFAULT mapping: the whole subject, as Kafka's DefaultKafkaPrincipalBuilder gives it
MALLORY = "User:CN=mallory"
HOLD_TIMEOUT = 45.0  # bound on a client program reaching its "holding" line; a run normally takes a few seconds


class Pki(NamedTuple):
    """The test CA, the broker's certificate and two client certificates (CN=alice, CN=mallory)."""

    ca: CertificateAuthority
    broker: IssuedCertificate
    alice: IssuedCertificate
    mallory: IssuedCertificate


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    ca = make_ca(tmp_path_factory.mktemp("pki"))
    return Pki(ca, make_broker_certificate(ca), make_client_certificate(ca, "alice"),
               make_client_certificate(ca, "mallory"))


def mtls_config(pki: Pki, **extra: str) -> dict[str, str]:
    """PLAINTEXT (the fixtures' admin connection) and an SSL listener that requires a client certificate."""
    return {"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", **pki.broker.keystore_configs("PEM"),
            **pki.ca.truststore_configs("PEM"), "ssl.client.auth": "required", **extra}


@pytest.fixture(scope="module")
def broker(pki: Pki) -> Iterator[BrokerThread]:
    """One broker for the client tests, without an authorizer; each test has its own topic."""
    with BrokerThread(config=mtls_config(pki)) as started:
        yield started


def ssl_bootstrap(broker: BrokerThread) -> str:
    """`localhost:<port>` of the SSL listener (the broker certificate names localhost and 127.0.0.1)."""
    return f"localhost:{broker.cluster.nodes[0].address('SSL')[1]}"


def ssl_principals(broker: BrokerThread) -> set[str]:
    """The principals of the broker's open connections on the SSL listener."""
    return broker.call(lambda: {c.session.principal for c in broker.broker.connections
                                if c.session.listener == "SSL"})


class HeldClient:
    """A client program that prints JSON lines, then `{"holding": true}`, and stays connected until stdin closes."""

    def __init__(self, args: list[str], cwd: Path | None = None) -> None:
        self.args = args
        self.printed: list[dict[str, Any]] = []
        self._stderr = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(args, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self._stderr, text=True)
        self._lines: queue.Queue[str | None] = queue.Queue()
        # a thread, so that waiting for a line has a deadline
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _next(self, deadline: float) -> dict[str, Any] | None:
        """The next JSON line, None at the end of the output; fails the test past `deadline`."""
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                pytest.fail(f"no output within the time allowed\n{self.describe()}", pytrace=False)
            if line is None:
                return None
            if line.startswith("{"):
                self.printed.append(json.loads(line))
                return self.printed[-1]

    def until_holding(self, timeout: float = HOLD_TIMEOUT) -> list[dict[str, Any]]:
        """Everything printed before the program said it holds its connections."""
        deadline = time.monotonic() + timeout
        while (line := self._next(deadline)) is not None:
            if line.get("holding"):
                return self.printed[:-1]
        self.process.wait(10)
        pytest.fail(f"the program ended before holding its connections\n{self.describe()}", pytrace=False)

    def release(self, timeout: float = 20.0) -> int:
        """Close stdin so the program disconnects and exits; its exit code."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        deadline = time.monotonic() + timeout
        while self._next(deadline) is not None:
            pass
        return self.process.wait(timeout)

    def describe(self) -> str:
        self._stderr.seek(0)
        return (f"command: {' '.join(self.args)[:2000]}\nexit code: {self.process.poll()}\n"
                f"--- printed ---\n{self.printed}\n--- stderr (end) ---\n{self._stderr.read()[-6000:]}")

    def __enter__(self) -> HeldClient:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self.process.poll() is None:
                if self.process.stdin is not None and not self.process.stdin.closed:
                    self.process.stdin.close()
                try:
                    self.process.wait(10)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(10)
        finally:
            self._stderr.close()


def java_value(i: int) -> str:
    """Value of record number i (as Records.value in Java)."""
    return f"value-{i}-" + "payload" * 10


@pytest.mark.java
@pytest.mark.parametrize("kind", ["PKCS12", "PEM"])
def test_the_java_client_over_mutual_tls_is_its_certificate_subject(broker: BrokerThread, pki: Pki,
                                                                    java: JavaClients, kind: KeystoreKind) -> None:
    """A Java producer and consumer with a PKCS12 or PEM keystore: User:CN=alice, records read back."""
    topic = broker.create_topic(unique_topic(f"mtls-java-{kind.lower()}"), partitions=1)
    settings = {"security.protocol": "SSL", **pki.ca.truststore_configs(kind), **pki.alice.keystore_configs(kind)}
    command = ["java", *JavaClients.JVM_OPTS, "-cp", java.classpath, "HeldRoundTrip", ssl_bootstrap(broker), topic,
               str(COUNT), *(f"{k}={v}" for k, v in settings.items())]
    with HeldClient(command) as client:
        printed = client.until_holding()
        assert ssl_principals(broker) == {ALICE}, client.describe()
        assert client.release() == 0, client.describe()
    assert [(p["partition"], p["offset"]) for p in printed if p.get("event") == "acked"] == [
        (0, i) for i in range(COUNT)], client.describe()
    assert [(p["offset"], p["value"]) for p in printed if p.get("event") == "record"] == [
        (i, java_value(i)) for i in range(COUNT)], client.describe()


def test_aiokafka_over_mutual_tls_is_its_certificate_subject(broker: BrokerThread, pki: Pki) -> None:
    """aiokafka with an ssl_context holding the client certificate: User:CN=alice, records read back."""
    topic = broker.create_topic(unique_topic("mtls-aiokafka"), partitions=1)
    context = ssl.create_default_context(cafile=str(pki.ca.ca_path))
    context.load_cert_chain(str(pki.alice.cert_path), str(pki.alice.key_path))
    common: dict[str, Any] = {"bootstrap_servers": ssl_bootstrap(broker), "security_protocol": "SSL",
                              "ssl_context": context, "request_timeout_ms": 20000}

    async def round_trip() -> tuple[list[int], list[bytes], set[str]]:
        producer = AIOKafkaProducer(**common)
        consumer = AIOKafkaConsumer(**common, enable_auto_commit=False)
        await producer.start()
        try:
            offsets = [(await producer.send_and_wait(topic, f"value-{i}".encode(), partition=0)).offset
                       for i in range(COUNT)]
            await consumer.start()
            partition = AioTopicPartition(topic, 0)
            consumer.assign([partition])
            await consumer.seek_to_beginning(partition)
            values: list[bytes] = []
            while len(values) < COUNT:
                fetched = await consumer.getmany(partition, timeout_ms=1000)
                values += [record.value for record in fetched.get(partition, []) if record.value is not None]
            # both clients are still connected
            principals = await asyncio.to_thread(ssl_principals, broker)
            return offsets, values, principals
        finally:
            await consumer.stop()
            await producer.stop()

    offsets, values, principals = asyncio.run(asyncio.wait_for(round_trip(), 30))
    assert principals == {ALICE}
    assert offsets == list(range(COUNT))
    assert values == [f"value-{i}".encode() for i in range(COUNT)]


@pytest.mark.kafkajs
def test_kafkajs_over_mutual_tls_is_its_certificate_subject(broker: BrokerThread, pki: Pki) -> None:
    """KafkaJS with `ssl: {ca, cert, key}`: User:CN=alice for its producer and group consumer, records read back."""
    directory = node_dir()
    topic = broker.create_topic(unique_topic("mtls-kafkajs"), partitions=1)
    options = {"brokers": [ssl_bootstrap(broker)],
               "ssl": {"ca": [pki.ca.ca_pem], "cert": pki.alice.certificate_pem, "key": pki.alice.key_pem}}
    command = ["node", str(directory / "held_roundtrip.js"), json.dumps(options), topic, str(COUNT)]
    with HeldClient(command, cwd=directory) as client:
        printed = client.until_holding()
        assert ssl_principals(broker) == {ALICE}, client.describe()
        assert client.release() == 0, client.describe()
    assert [p["offsets"] for p in printed if p.get("event") == "produced"] == [[0]], client.describe()
    assert [(p["offset"], p["value"]) for p in printed if p.get("event") == "record"] == [
        (i, f"value-{i}") for i in range(COUNT)], client.describe()


def topic_acl(topic: str, principal: str, operation: AclOperation) -> AclBinding:
    """An ALLOW ACL on `topic` for `principal` from any host."""
    return AclBinding(ResourceType.TOPIC, topic, PatternType.LITERAL, principal, "*", operation,
                      AclPermissionType.ALLOW)


def test_the_authorizer_decides_with_the_certificate_principal(pki: Pki) -> None:
    """WRITE and DESCRIBE for User:CN=alice let her certificate produce; CN=mallory, without ACLs, is refused."""
    # User:ANONYMOUS is the PLAINTEXT listener's principal: a super user here, so the fixtures can create and
    # read topics; on the SSL listener every client has a certificate, so nobody there is ANONYMOUS
    config = mtls_config(pki, **{"authorizer.class.name": STANDARD_AUTHORIZER,
                                 "super.users": "User:admin;User:ANONYMOUS"})
    with BrokerThread(config=config) as broker:
        topic = broker.create_topic("mtls-acl", partitions=1)
        authorizer = broker.cluster.authorizer
        assert authorizer is not None
        for operation in (AclOperation.WRITE, AclOperation.DESCRIBE):
            broker.call(authorizer.add, topic_acl(topic, ALICE, operation))

        producers: list[Producer] = []

        def producer_for(client: IssuedCertificate) -> Producer:
            """A producer with `client`'s certificate; it connects at once (librdkafka bootstraps eagerly)."""
            settings = {"bootstrap.servers": ssl_bootstrap(broker), "security.protocol": "SSL",
                        "ssl.ca.location": str(pki.ca.ca_path), "ssl.certificate.location": str(client.cert_path),
                        "ssl.key.location": str(client.key_path), "message.timeout.ms": 10000}
            producers.append(Producer(settings))
            return producers[-1]

        reports: list[tuple[Any, int | None]] = []
        refusals: list[Any] = []
        try:
            alice = producer_for(pki.alice)
            for i in range(COUNT):
                alice.produce(topic, f"a{i}".encode(), partition=0,
                              on_delivery=lambda err, msg: reports.append((err, msg.offset())))
            assert alice.flush(20) == 0
            assert reports == [(None, i) for i in range(COUNT)]
            assert ssl_principals(broker) == {ALICE}

            mallory = producer_for(pki.mallory)
            mallory.produce(topic, b"m0", partition=0, on_delivery=lambda err, _msg: refusals.append(err))
            assert mallory.flush(20) == 0
            assert [e.code() if e else None for e in refusals] == [KafkaError.TOPIC_AUTHORIZATION_FAILED], refusals
            # librdkafka moves from its bootstrap connection to the node's and drops idle ones, so mallory's may
            # be between two: the principals of the open connections as soon as hers is among them
            principals = wait_until(lambda: p if MALLORY in (p := ssl_principals(broker)) else None, 10,
                                    "mallory's connection open", interval=0.01)
            assert principals == {ALICE, MALLORY}
        finally:
            # closed while the broker runs: a producer left to the garbage collector reconnects in vain
            for producer in producers:
                producer.close()

        reader = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "mtls-acl-reader",
                           "enable.auto.commit": False})
        try:
            reader.assign([TopicPartition(topic, 0, 0)])
            values: list[bytes | None] = []
            while len(values) < COUNT:
                message = reader.poll(10)
                assert message is not None and message.error() is None, message and message.error()
                values.append(message.value())
        finally:
            reader.close()
        assert values == [f"a{i}".encode() for i in range(COUNT)]
        assert broker.call(lambda: broker.cluster.partition(topic, 0).log.log_end_offset) == COUNT
