"""Nodes that speak as older Kafka releases: their ApiVersions, what they refuse, and real clients on them."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer
from kafka import KafkaConsumer, KafkaProducer

from minibroker.apis import API_MODULES
from minibroker.apis.releases import RELEASES
from minibroker.protocol import records
from minibroker.protocol.messages import ApiVersionsRequest, DescribeTransactionsRequest, MetadataRequest
from minibroker.testing.process import start_broker
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic
from tests.integration.clients import JAVA_OLD, JavaClients
from tests.integration.test_wire_protocol import create_topic, produce_request

PROFILES = {1: "2.8", 2: "3.9", 3: "4.0", 4: "4.1", 5: "4.2"}  # node 0 is "latest"
PRODUCE, FETCH, LIST_OFFSETS, METADATA = 0, 1, 2, 3


@pytest.fixture(scope="module")
def cluster():
    args = ["--nodes", "6"]
    for node, release in PROFILES.items():
        args += ["--node-profile", f"{node}={release}"]
    process = start_broker(extra_args=tuple(args))
    yield process
    process.stop()


def ports(process) -> dict[int, int]:
    with WireClient(process.host, process.port) as wire:
        return {b.node_id: b.port for b in wire.request(MetadataRequest(topics=[]), 12).brokers}


def advertised(process, node: int) -> dict[int, tuple[int, int]]:
    with WireClient(process.host, ports(process)[node]) as wire:
        response = wire.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
    assert response.error_code == 0
    return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}


def test_each_node_advertises_its_release(cluster):
    by_node = {node: advertised(cluster, node) for node in range(6)}
    produce_max = {node: versions[PRODUCE][1] for node, versions in by_node.items()}
    assert produce_max == {0: 14, 1: 9, 2: 11, 3: 12, 4: 13, 5: 13}
    assert {node: versions[METADATA][1] for node, versions in by_node.items()} == {
        0: 13, 1: 11, 2: 12, 3: 13, 4: 13, 5: 13}
    assert by_node[1][FETCH] == (0, 12) and by_node[2][FETCH] == (0, 17) and by_node[4][FETCH] == (4, 18)
    assert by_node[3][LIST_OFFSETS] == (1, 10) and by_node[5][LIST_OFFSETS] == (1, 11)
    assert all(versions[PRODUCE][0] == 0 for versions in by_node.values())  # as Kafka, Produce from v0
    # Kafka 2.8 had no transactions admin APIs and no DescribeTopicPartitions
    assert {65, 66, 75}.isdisjoint(by_node[1]) and {65, 66, 75} <= set(by_node[2])
    assert set(by_node[0]) == set(API_MODULES)


def test_no_node_advertises_beyond_its_release_or_ours(cluster):
    for node, release in {0: "latest", **PROFILES}.items():
        ranges = RELEASES[release].api_ranges
        for api_key, (low, high) in advertised(cluster, node).items():
            module = API_MODULES[api_key]
            assert high <= module.MAX_VERSION and low <= high
            if ranges is not None:
                assert ranges[api_key][0] <= low and high <= ranges[api_key][1], (release, api_key)


def test_a_version_beyond_the_release_closes_the_connection(cluster):
    node_39 = ports(cluster)[2]
    topic = unique_topic("profile")
    with WireClient(cluster.host, cluster.port) as wire:
        topic_id = create_topic(wire, topic, configs={"producer.state.batches.to.retain": "20"})
    batch = records.build_batch([(None, b"v")], timestamp=int(time.time() * 1000))
    with WireClient(cluster.host, node_39) as wire:
        wire.send_raw(wire.encode_request(produce_request(topic, batch, version=13, topic_id=topic_id), 13))
        assert wire.is_closed_by_peer()
    with WireClient(cluster.host, node_39) as wire:
        # v11 is served; the other nodes and this one go on
        answer = wire.request(produce_request(topic, batch, version=11), 11).responses[0].partition_responses[0]
        assert answer.error_code in (0, 6)


def test_an_api_the_release_lacked_closes_the_connection(cluster):
    with WireClient(cluster.host, ports(cluster)[1]) as wire:
        wire.send_raw(wire.encode_request(DescribeTransactionsRequest(transactional_ids=["x"]), 0))
        assert wire.is_closed_by_peer()
    with WireClient(cluster.host, ports(cluster)[2]) as wire:
        assert wire.request(DescribeTransactionsRequest(transactional_ids=["x"]), 0).transaction_states


def test_api_versions_above_the_release_gets_the_v0_fallback(cluster):
    with WireClient(cluster.host, ports(cluster)[1]) as wire:  # 2.8 had ApiVersions up to v3
        wire.send_raw(wire.encode_request(ApiVersionsRequest(client_software_name="t",
                                                             client_software_version="1"), 4))
        _, response = WireClient.decode_response(wire.read_frame(), 18, 0)
    assert response.error_code == 35
    assert [(k.api_key, k.min_version, k.max_version) for k in response.api_keys] == [(18, 0, 3)]


@pytest.fixture(scope="module")
def kafka_28():
    process = start_broker("num.partitions=1", extra_args=("--as-version", "2.8"))
    yield process
    process.stop()


def test_confluent_kafka_produces_and_consumes_on_a_2_8_cluster(kafka_28):
    topic = unique_topic("cf-28")
    producer = Producer({"bootstrap.servers": kafka_28.bootstrap_servers, "enable.idempotence": True})
    for i in range(50):
        producer.produce(topic, value=b"%d" % i)
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": kafka_28.bootstrap_servers, "group.id": "g28",
                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    values = []
    deadline = time.monotonic() + 30
    while len(values) < 50 and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            values.append(message.value())
    consumer.close()
    assert values == [b"%d" % i for i in range(50)]


def test_kafka_python_produces_and_consumes_on_a_2_8_cluster(kafka_28):
    topic = unique_topic("kp-28")
    producer = KafkaProducer(bootstrap_servers=kafka_28.bootstrap_servers, enable_idempotence=True)
    for i in range(50):
        producer.send(topic, value=b"%d" % i)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(topic, bootstrap_servers=kafka_28.bootstrap_servers, auto_offset_reset="earliest",
                             consumer_timeout_ms=5000)
    values = [message.value for message in consumer]
    consumer.close()
    assert values == [b"%d" % i for i in range(50)]


@pytest.mark.java
def test_java_client_produces_and_consumes_on_a_2_8_cluster(kafka_28, tmp_path):
    from tests.integration.test_java_client import consume, produce

    java = JavaClients(tmp_path, version=JAVA_OLD)  # the old client set: old-client coverage on an old profile
    topic = unique_topic("java-28")
    acks = produce(java, kafka_28, topic, 30)
    assert [a["offset"] for a in acks] == list(range(30))
    consumed, _summary, _run = consume(java, kafka_28, topic, 30)
    assert len(consumed) == 30


@pytest.fixture(scope="module")
def kafka_39():
    process = start_broker(extra_args=("--as-version", "3.9"))
    yield process
    process.stop()


def test_a_3_9_cluster_does_not_know_the_kip_1269_configs(kafka_39):
    from minibroker.protocol.messages import (
        CreateTopicsRequest,
        DescribeConfigsRequest,
        IncrementalAlterConfigsRequest,
    )

    topic = unique_topic("kip1269-unknown")
    with WireClient(kafka_39.host, kafka_39.port) as wire:
        refused = wire.request(CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
            name=topic, num_partitions=1, replication_factor=1, assignments=[],
            configs=[CreateTopicsRequest.CreatableTopic.CreatableTopicConfig(
                name="producer.state.batches.to.retain", value="20")])], timeout_ms=5000, validate_only=False), 7)
        assert refused.topics[0].error_code == 40  # INVALID_CONFIG, as for any unknown topic config
        assert "Unknown topic config name: producer.state.batches.to.retain" in refused.topics[0].error_message
        create_topic(wire, topic)
        resources = [DescribeConfigsRequest.DescribeConfigsResource(resource_type=2, resource_name=topic,
                                                                    configuration_keys=None),
                     DescribeConfigsRequest.DescribeConfigsResource(resource_type=4, resource_name="0",
                                                                    configuration_keys=None)]
        described = wire.request(DescribeConfigsRequest(resources=resources, include_synonyms=False,
                                                        include_documentation=False), 4)
        names = {c.name for r in described.results for c in r.configs}
        assert "retention.ms" in names and "log.retention.ms" in names
        assert not names & {"producer.state.batches.to.retain", "log.producer.state.batches.to.retain"}
        alter = IncrementalAlterConfigsRequest.AlterConfigsResource
        altered = wire.request(IncrementalAlterConfigsRequest(resources=[alter(
            resource_type=2, resource_name=topic, configs=[alter.AlterableConfig(
                name="producer.state.batches.to.retain", config_operation=0, value="20")])],
            validate_only=False), 1)
        assert altered.responses[0].error_code == 40
