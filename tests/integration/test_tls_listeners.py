"""SSL listeners with real clients: server certificates as Kafka configures them, mutual TLS and its principal."""

from __future__ import annotations

import logging
import select
import socket
import ssl
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from minibroker.core.clock import ManualClock
from minibroker.core.config import ConfigError
from minibroker.protocol.messages import ApiVersionsRequest
from minibroker.testing.certs import make_broker_certificate, make_ca, make_client_certificate
from minibroker.testing.embedded import BrokerThread
from minibroker.testing.wire import WireClient
from tests.helpers import read_ready_file, wait_until


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Any:
    directory = tmp_path_factory.mktemp("pki")
    ca = make_ca(directory)
    return ca, make_broker_certificate(ca), make_client_certificate(ca, "alice")


def tls_config(pki: Any, kind: str = "PEM", **extra: str) -> dict[str, str]:
    ca, broker, _client = pki
    return {"listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", **broker.keystore_configs(kind),
            **ca.truststore_configs("PEM"), **extra}


def ssl_port(broker: BrokerThread) -> int:
    return next(e.bind_port for e in broker.cluster.nodes[0].endpoints if e.listener == "SSL")


def round_trip(bootstrap: str, topic: str, settings: dict[str, str]) -> list[bytes]:
    producer = Producer({"bootstrap.servers": bootstrap, "security.protocol": "SSL", **settings})
    for i in range(3):
        producer.produce(topic, f"record-{i}".encode())
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap, "security.protocol": "SSL", "group.id": "tls",
                         "enable.auto.commit": False, **settings})
    consumer.assign([TopicPartition(topic, 0, 0)])
    values: list[bytes] = []
    try:
        while len(values) < 3:
            message = consumer.poll(10)
            assert message is not None and message.error() is None
            values.append(message.value())
    finally:
        consumer.close()
    return values


@pytest.mark.parametrize("kind", ["PEM", "PKCS12", "inline"])
def test_confluent_kafka_produces_and_consumes_over_ssl(pki: Any, kind: str) -> None:
    ca, _broker, _client = pki
    with BrokerThread(config=tls_config(pki, kind)) as broker:
        broker.create_topic("secret", partitions=1)
        bootstrap = f"localhost:{ssl_port(broker)}"
        assert round_trip(bootstrap, "secret", {"ssl.ca.location": str(ca.ca_path)}) == [
            b"record-0", b"record-1", b"record-2"]


def test_metadata_over_ssl_names_the_ssl_listener(pki: Any) -> None:
    ca, _broker, _client = pki
    with BrokerThread(config=tls_config(pki)) as broker:
        context = ssl.create_default_context(cafile=str(ca.ca_path))
        with socket.create_connection(("127.0.0.1", ssl_port(broker))) as raw, \
                context.wrap_socket(raw, server_hostname="localhost") as tls:
            wire = WireClient.__new__(WireClient)
            wire.client_id, wire._correlation_id = "tls", 0
            tls.sendall(wire.encode_request(ApiVersionsRequest(client_software_name="t", client_software_version="1"),
                                            3))
            size = int.from_bytes(tls.recv(4), "big")
            assert 0 < size < 10_000


def test_mutual_tls_principal_is_the_certificate_subject_mapped_by_the_rules(pki: Any) -> None:
    ca, _broker, client = pki
    config = tls_config(pki, **{"ssl.client.auth": "required",
                                "ssl.principal.mapping.rules": "RULE:^CN=(.*?)$/$1/U,DEFAULT"})
    with BrokerThread(config=config) as broker:
        broker.create_topic("mtls", partitions=1)
        settings = {"ssl.ca.location": str(ca.ca_path), "ssl.certificate.location": str(client.cert_path),
                    "ssl.key.location": str(client.key_path)}
        producer = Producer({"bootstrap.servers": f"localhost:{ssl_port(broker)}", "security.protocol": "SSL",
                             **settings})
        producer.produce("mtls", b"hello")
        assert producer.flush(30) == 0
        principals = broker.call(lambda: {c.session.principal for c in broker.broker.connections
                                          if c.session.listener == "SSL"})
        assert principals == {"User:ALICE"}


def test_a_client_without_a_certificate_is_refused_when_it_is_required(pki: Any) -> None:
    ca, _broker, _client = pki
    with BrokerThread(config=tls_config(pki, **{"ssl.client.auth": "required"})) as broker:
        producer = Producer({"bootstrap.servers": f"localhost:{ssl_port(broker)}", "security.protocol": "SSL",
                             "ssl.ca.location": str(ca.ca_path), "message.timeout.ms": 3000})
        errors: list[Any] = []
        producer.produce("anything", b"x", on_delivery=lambda err, _msg: errors.append(err))
        producer.flush(10)
        assert errors and errors[0] is not None  # never delivered: the handshake fails
        assert broker.call(lambda: [c for c in broker.broker.connections if c.session.listener == "SSL"]) == []


def test_plaintext_bytes_on_the_ssl_port_and_tls_on_the_plaintext_port_close_only_that_connection(pki: Any) -> None:
    ca, _broker, _client = pki
    with BrokerThread(config=tls_config(pki)) as broker:
        plaintext_port = broker.cluster.nodes[0].endpoints[0].bind_port
        with WireClient("127.0.0.1", ssl_port(broker)) as wire:
            wire.send_raw(wire.encode_request(ApiVersionsRequest(client_software_name="t",
                                                                 client_software_version="1"), 3))
            assert wire.is_closed_by_peer()
        context = ssl.create_default_context(cafile=str(ca.ca_path))
        with socket.create_connection(("127.0.0.1", plaintext_port)) as raw, pytest.raises((ssl.SSLError, OSError)):
            context.wrap_socket(raw, server_hostname="localhost")
        # both listeners still serve
        with WireClient("127.0.0.1", plaintext_port) as wire:
            assert wire.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"),
                                3).error_code == 0
        assert round_trip(f"localhost:{ssl_port(broker)}", "after", {"ssl.ca.location": str(ca.ca_path)})


def test_an_ssl_listener_without_a_keystore_refuses_to_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="SSL key store is not specified"):
        BrokerThread(config={"listeners": "SSL://127.0.0.1:0"})


def test_producer_without_tls_to_the_ssl_port_fails_cleanly(pki: Any) -> None:
    with BrokerThread(config=tls_config(pki)) as broker:
        producer = Producer({"bootstrap.servers": f"localhost:{ssl_port(broker)}", "message.timeout.ms": 2000})
        errors: list[Any] = []
        producer.produce("x", b"x", on_delivery=lambda err, _msg: errors.append(err))
        producer.flush(10)
        assert errors and errors[0] is not None


def test_serve_generates_a_throwaway_ca_and_hands_its_path_to_clients(tmp_path: Path) -> None:
    import subprocess
    import sys

    from minibroker.testing.process import stop_process

    ready_file = tmp_path / "ready.json"
    popen = subprocess.Popen([sys.executable, "-m", "minibroker", "serve", "--port", "0", "--set",
                              "listeners=SSL://127.0.0.1:0", "--generate-certificates", str(tmp_path / "pki"),
                              "--ready-file", str(ready_file)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ready = read_ready_file(popen, ready_file)
        assert ready["ca_path"] == str(tmp_path / "pki" / "ca.pem")
        port = ready["nodes"][0]["port"]
        assert round_trip(f"localhost:{port}", "generated", {"ssl.ca.location": ready["ca_path"]})
    finally:
        stop_process(popen)


def test_mutual_tls_with_kafka_python_gives_the_same_principal(pki: Any) -> None:
    from kafka import KafkaProducer

    ca, _broker, client = pki
    config = tls_config(pki, **{"ssl.client.auth": "required"})
    with BrokerThread(config=config) as broker:
        broker.create_topic("mtls-python", partitions=1)
        producer = KafkaProducer(bootstrap_servers=f"localhost:{ssl_port(broker)}", security_protocol="SSL",
                                 ssl_cafile=str(ca.ca_path), ssl_certfile=str(client.cert_path),
                                 ssl_keyfile=str(client.key_path))
        try:
            producer.send("mtls-python", b"hello").get(timeout=20)
            principals = broker.call(lambda: {c.session.principal for c in broker.broker.connections
                                              if c.session.listener == "SSL"})
            assert principals == {"User:CN=alice"}
        finally:
            producer.close()


# -- connection limits before the handshake ---------------------------------------------------------------


def closed_by_peer(sock: socket.socket) -> bool:
    """Whether the broker closed `sock` (EOF or reset); it never sent anything else on a silent connection."""
    if not select.select([sock], [], [], 0)[0]:
        return False
    try:
        return sock.recv(1) == b""
    except OSError:
        return True


def test_silent_connections_to_an_ssl_listener_are_counted_when_accepted(pki: Any,
                                                                         caplog: pytest.LogCaptureFixture) -> None:
    # Kafka's Acceptor counts a connection against max.connections.per.ip when it accepts it; a TLS connection
    # that never starts its handshake is one all the same
    caplog.set_level(logging.INFO, logger="minibroker.connection")
    with BrokerThread(config=tls_config(pki, **{"max.connections.per.ip": "200"})) as broker:
        sockets = [socket.create_connection(("127.0.0.1", ssl_port(broker))) for _ in range(300)]
        try:
            closed: set[socket.socket] = set()

            def hundred_refused() -> bool:
                closed.update(sock for sock in sockets if sock not in closed and closed_by_peer(sock))
                return len(closed) >= 100

            # well before the loop's own TLS handshake deadline (60 s), which used to be the first to close them
            wait_until(hundred_refused, 20, "the connections over max.connections.per.ip were not refused")
            assert len(closed) == 100 and not any(closed_by_peer(sock) for sock in sockets if sock not in closed)
            assert "Rejected connection from /127.0.0.1, address already has the configured maximum of 200" in (
                caplog.text)
            assert broker.call(lambda: broker.broker.connections) == []  # none of them is set up
        finally:
            for sock in sockets:
                sock.close()


def test_a_silent_tls_handshake_is_closed_by_connections_max_idle_ms_and_frees_its_slot(pki: Any) -> None:
    ca, _broker, _client = pki
    clock = ManualClock()
    config = tls_config(pki, **{"max.connections.per.ip": "50", "connections.max.idle.ms": "2000"})
    with BrokerThread(clock=clock, config=config) as broker:
        sockets = [socket.create_connection(("127.0.0.1", ssl_port(broker))) for _ in range(50)]
        try:

            def idle_time_passed_and_all_closed() -> bool:
                broker.call(clock.advance, 2001)  # again and again: a connection accepted late is idle as well
                return all(closed_by_peer(sock) for sock in sockets)

            wait_until(idle_time_passed_and_all_closed, 20, "silent TLS connections outlived connections.max.idle.ms")
        finally:
            for sock in sockets:
                sock.close()
        # all 50 slots are free again: 50 TLS clients get their answers
        context = ssl.create_default_context(cafile=str(ca.ca_path))
        clients = [context.wrap_socket(socket.create_connection(("127.0.0.1", ssl_port(broker))),
                                       server_hostname="localhost") for _ in range(50)]
        try:
            assert all(api_versions_over(tls) for tls in clients)
        finally:
            for tls in clients:
                tls.close()


def api_versions_over(tls: ssl.SSLSocket) -> bool:
    wire = WireClient.__new__(WireClient)
    wire.sock, wire.client_id, wire._correlation_id = tls, "tls", 0
    return bool(wire.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"),
                             3).error_code == 0)

