"""Several listeners per node: each binds its own port, and Metadata answers with the listener the client used."""

from __future__ import annotations

import subprocess
import sys

import pytest

from minibroker.core.config import ConfigError
from minibroker.protocol.messages import DescribeClusterRequest, FindCoordinatorRequest, MetadataRequest
from minibroker.testing.embedded import BrokerThread
from minibroker.testing.process import stop_process
from minibroker.testing.wire import WireClient
from tests.helpers import read_ready_file

TWO_LISTENERS = {
    "listeners": "INTERNAL://127.0.0.1:0,EXTERNAL://127.0.0.1:0",
    "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
}


def brokers_seen_through(host: str, port: int) -> list[tuple[int, str, int]]:
    with WireClient(host, port) as wire:
        answer = wire.request(MetadataRequest(topics=[], allow_auto_topic_creation=False), 12)
    return [(b.node_id, b.host, b.port) for b in answer.brokers]


def test_metadata_answers_with_the_addresses_of_the_listener_the_client_connected_through() -> None:
    with BrokerThread(config=TWO_LISTENERS, nodes=2) as cluster:
        nodes = cluster.cluster.nodes
        internal = {n.node_id: n.address("INTERNAL") for n in nodes}
        external = {n.node_id: n.address("EXTERNAL") for n in nodes}
        assert len(set(internal.values()) | set(external.values())) == 4  # four bound ports
        for node in nodes:
            assert brokers_seen_through(*internal[node.node_id]) == [(i, *a) for i, a in internal.items()]
            assert brokers_seen_through(*external[node.node_id]) == [(i, *a) for i, a in external.items()]
        with WireClient(*external[nodes[0].node_id]) as wire:
            described = wire.request(DescribeClusterRequest(include_cluster_authorized_operations=False), 0)
            coordinator = wire.request(FindCoordinatorRequest(key="g", key_type=0), 3)
        assert {(b.broker_id, b.host, b.port) for b in described.brokers} == {(i, *a) for i, a in external.items()}
        assert (coordinator.host, coordinator.port) == external[coordinator.node_id]


def test_advertised_listeners_tell_clients_another_address_per_listener() -> None:
    config = {**TWO_LISTENERS, "advertised.listeners": "INTERNAL://kafka-0.internal:9092,EXTERNAL://proxy:19092"}
    with BrokerThread(config=config) as broker:
        node = broker.cluster.nodes[0]
        bound = {e.listener: (e.bind_host, e.bind_port) for e in node.endpoints}
        assert brokers_seen_through(*bound["INTERNAL"]) == [(node.node_id, "kafka-0.internal", 9092)]
        assert brokers_seen_through(*bound["EXTERNAL"]) == [(node.node_id, "proxy", 19092)]
        assert broker.bootstrap_servers == "kafka-0.internal:9092"


def test_a_listener_kafka_would_refuse_stops_the_broker_before_it_binds() -> None:
    with pytest.raises(ConfigError, match="No security protocol defined for listener INTERNAL"):
        BrokerThread(config={"listeners": "INTERNAL://127.0.0.1:0"})


def test_serve_with_listeners_from_server_properties_reports_each_in_its_ready_line(tmp_path) -> None:

    properties = tmp_path / "server.properties"
    properties.write_text("listeners=INTERNAL://127.0.0.1:0,EXTERNAL://127.0.0.1:0\n"
                          "listener.security.protocol.map=INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT\n")
    ready_file = tmp_path / "ready.json"
    popen = subprocess.Popen([sys.executable, "-m", "minibroker", "serve", "--config", str(properties),
                              "--ready-file", str(ready_file)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ready = read_ready_file(popen, ready_file)
        listeners = {entry["name"]: entry for entry in ready["nodes"][0]["listeners"]}
        assert set(listeners) == {"INTERNAL", "EXTERNAL"}
        external = listeners["EXTERNAL"]
        assert brokers_seen_through(external["host"], external["port"]) == [
            (ready["nodes"][0]["node_id"], external["advertised_host"], external["advertised_port"])]
        assert ready["bootstrap_servers"] == f"127.0.0.1:{listeners['INTERNAL']['port']}"
    finally:
        stop_process(popen)
