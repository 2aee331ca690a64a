"""Several simulated nodes in one broker process: metadata, spread leaders, redirects, real clients."""

from __future__ import annotations

import asyncio
import time

import pytest
from confluent_kafka import Consumer, Producer

from minibroker.client import Producer as KipProducer
from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    FetchRequest,
    FindCoordinatorRequest,
    JoinGroupRequest,
    MetadataRequest,
)
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic
from tests.integration.test_wire_protocol import create_topic, partition_response, produce_request


@pytest.fixture
def cluster(kafka_broker_factory):
    return kafka_broker_factory(nodes=3)


def node_ports(cluster) -> dict[int, int]:
    with WireClient(cluster.host, cluster.port) as wire:
        return {b.node_id: b.port for b in wire.request(MetadataRequest(topics=None), 12).brokers}


def test_metadata_lists_every_node_and_spreads_leaders(cluster):
    ports = node_ports(cluster)
    assert sorted(ports) == [0, 1, 2] and len(set(ports.values())) == 3
    topic = unique_topic("spread")
    with WireClient(cluster.host, cluster.port) as wire:
        create_topic(wire, topic, partitions=6)
        metadata = wire.request(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)]), 12)
    leaders = [p.leader_id for p in metadata.topics[0].partitions]
    assert sorted(set(leaders)) == [0, 1, 2] and leaders.count(0) == 2


def test_produce_and_fetch_to_a_non_leader_name_the_leader(cluster):
    ports = node_ports(cluster)
    topic = unique_topic("redirect")
    with WireClient(cluster.host, cluster.port) as wire:
        topic_id = create_topic(wire, topic)
        leader = wire.request(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)]),
                              12).topics[0].partitions[0].leader_id
    other = next(node for node in ports if node != leader)
    batch = records.build_batch([(None, b"x")], timestamp=int(time.time() * 1000))
    with WireClient(cluster.host, ports[other]) as wire:
        response = wire.request(produce_request(topic, batch, version=13, topic_id=topic_id), 13)
        part = partition_response(response)
        assert part.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
        assert (part.current_leader.leader_id, part.current_leader.leader_epoch) == (leader, 0)
        assert [(n.node_id, n.port) for n in response.node_endpoints] == [(leader, ports[leader])]
        fetch = wire.request(FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=1000,
                                          isolation_level=0, topics=[FetchRequest.FetchTopic(
                                              topic_id=topic_id, partitions=[FetchRequest.FetchTopic.FetchPartition(
                                                  partition=0, fetch_offset=0, partition_max_bytes=1000)])]), 16)
        data = fetch.responses[0].partitions[0]
        assert data.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER and data.current_leader.leader_id == leader
        assert [n.node_id for n in fetch.node_endpoints] == [leader]
    with WireClient(cluster.host, ports[leader]) as wire:
        assert partition_response(wire.request(produce_request(topic, batch, version=13, topic_id=topic_id),
                                               13)).error_code == 0


def test_group_coordinator_lives_on_one_node(cluster):
    ports = node_ports(cluster)
    with WireClient(cluster.host, cluster.port) as wire:
        found = wire.request(FindCoordinatorRequest(key="my-group", key_type=0), 3)
    assert found.error_code == 0
    elsewhere = next(node for node in ports if node != found.node_id)
    with WireClient(cluster.host, ports[elsewhere]) as wire:
        joined = wire.request(JoinGroupRequest(group_id="my-group", session_timeout_ms=10000,
                                               rebalance_timeout_ms=10000, member_id="", protocol_type="consumer",
                                               protocols=[JoinGroupRequest.JoinGroupRequestProtocol(
                                                   name="range", metadata=b"")]), 9)
    assert joined.error_code == ErrorCode.NOT_COORDINATOR


def test_confluent_clients_produce_and_consume_across_nodes(cluster):
    topic = unique_topic("across")
    with WireClient(cluster.host, cluster.port) as wire:
        create_topic(wire, topic, partitions=6)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "enable.idempotence": True, "acks": "all"})
    for i in range(600):
        producer.produce(topic, value=b"%d" % i, partition=i % 6)
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": cluster.bootstrap_servers, "group.id": unique_topic("g"),
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    seen: dict[int, list[int]] = {p: [] for p in range(6)}
    deadline = time.monotonic() + 30
    while sum(map(len, seen.values())) < 600 and time.monotonic() < deadline:
        for message in consumer.consume(num_messages=200, timeout=0.5):
            assert message.error() is None
            seen[message.partition()].append(int(message.value()))
    consumer.close()
    assert seen == {p: list(range(p, 600, 6)) for p in range(6)}


async def test_kip1269_producer_learns_each_partition_window_from_its_leader(cluster):
    topic = unique_topic("kip-nodes")
    with WireClient(cluster.host, cluster.port) as wire:
        create_topic(wire, topic, partitions=3, configs={"producer.state.batches.to.retain": "20"})
    async with KipProducer(cluster.bootstrap_servers, max_in_flight_requests_per_connection=20) as producer:
        futures = [await producer.send(topic, b"%d" % i, partition=i % 3) for i in range(300)]
        results = await asyncio.gather(*futures)
        assert sorted(r.offset for r in results if r.partition == 0) == list(range(100))
        assert [producer.partition_limit(topic, p) for p in range(3)] == [20, 20, 20]
