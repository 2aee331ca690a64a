"""The KIP's test plan with the project's producer: in-flight batches counted by the broker (test control).

Every Produce answer is delayed so a producer allowed N batches in flight keeps N
outstanding; the broker counts Produce requests per partition from arrival to
answer, and the producer's own counts must agree.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from minibroker.client import Producer
from minibroker.client.stamping import read_stamp, stamp
from minibroker.protocol.errors import ErrorCode
from minibroker.testing.process import start_broker
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic, wait_until_async
from tests.integration.test_wire_protocol import create_topic


@pytest.fixture(scope="module")
def slow_broker():
    # every Produce answer waits 200 ms, so a producer that may have N batches in flight has them
    process = start_broker(extra_args=("--fault", "produce:delay=200:every=1", "--control-port", "0"))
    yield process
    process.stop()


def broker_max_in_flight(broker, topic: str, partition: int = 0, node: int | None = None) -> int:
    with broker.control as control:
        return int(control.in_flight(topic, partition, node=node)["max"])


def topic_with_window(broker, window: int) -> str:
    return broker.create_topic(unique_topic(f"kip1269-w{window}"), 1, {"producer.state.batches.to.retain": str(window)},
                               replication_factor=1)


async def produce(broker, topic: str, in_flight: int, count: int = 400, version: int | None = None):
    async with Producer(broker.bootstrap_servers, max_in_flight_requests_per_connection=in_flight, batch_size=200,
                        linger_ms=0, produce_version=version) as producer:
        futures = [await producer.send(topic, b"%06d" % i, partition=0) for i in range(count)]
        offsets = [(await f).offset for f in futures]
        return offsets, producer.partition_limit(topic, 0), producer.max_in_flight_seen(topic, 0)


@pytest.mark.parametrize(("in_flight", "window", "expected_max"), [(1, 20, 1), (20, 5, 5), (20, 20, 20)])
async def test_in_flight_per_partition_follows_the_discovered_window(slow_broker, in_flight, window, expected_max):
    topic = topic_with_window(slow_broker, window)
    offsets, limit, max_seen = await produce(slow_broker, topic, in_flight)
    assert offsets == list(range(400))
    assert limit == window
    assert max_seen == expected_max
    assert broker_max_in_flight(slow_broker, topic) == expected_max


async def test_two_topics_on_one_broker_keep_their_own_limits(slow_broker):
    small, large = topic_with_window(slow_broker, 5), topic_with_window(slow_broker, 20)
    async with Producer(slow_broker.bootstrap_servers, max_in_flight_requests_per_connection=20, batch_size=200,
                        linger_ms=0) as producer:
        futures = []
        for i in range(300):
            futures.append(await producer.send(small, b"%06d" % i, partition=0))
            futures.append(await producer.send(large, b"%06d" % i, partition=0))
        await asyncio.gather(*futures)
        assert producer.max_in_flight_seen(small, 0) <= 5
        assert producer.max_in_flight_seen(large, 0) > 5
        assert (producer.partition_limit(small, 0), producer.partition_limit(large, 0)) == (5, 20)
    assert broker_max_in_flight(slow_broker, small) == 5
    assert 5 < broker_max_in_flight(slow_broker, large) <= 20


async def test_produce_v13_never_learns_a_larger_window(slow_broker):
    topic = topic_with_window(slow_broker, 20)
    offsets, limit, max_seen = await produce(slow_broker, topic, in_flight=20, version=13)
    assert offsets == list(range(400))
    assert (limit, max_seen) == (5, 5)
    assert broker_max_in_flight(slow_broker, topic) == 5


@pytest.fixture(scope="module")
def chaos_broker():
    # one broker for the fault tests: each test's rules name its own topic, and are cleared after it
    process = start_broker(extra_args=("--control-port", "0"))
    yield process
    process.stop()


# Issue 23's combinations: NOT_LEADER_OR_FOLLOWER instead of every 7th append (the producer refreshes its
# metadata as well), NOT_ENOUGH_REPLICAS_AFTER_APPEND after every 9th append (the retry is a duplicate) and the
# connection closed instead of every 13th answer. Each rule counts the Produce requests of the test's topic.
NOT_LEADER_EVERY_7 = ("inject_error", {"error_code": ErrorCode.NOT_LEADER_OR_FOLLOWER, "every": 7})
AFTER_APPEND_EVERY_9 = ("inject_error", {"error_code": ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, "every": 9,
                                         "after_append": True})
FAULTS = {
    "drop": [("drop", {"every": 7})],
    "error+drop": [NOT_LEADER_EVERY_7, ("drop", {"every": 13})],
    "error+after-append+drop": [NOT_LEADER_EVERY_7, AFTER_APPEND_EVERY_9, ("drop", {"every": 13})],
}
COMBINATIONS = [("drop", 20, 20)] + [(faults, window, in_flight)
                                     for faults in ("error+drop", "error+after-append+drop")
                                     for window in (5, 20) for in_flight in (5, 20)]


@pytest.mark.parametrize(("faults", "window", "in_flight"), COMBINATIONS)
async def test_exactly_once_in_order_through_dropped_connections(chaos_broker, faults, window, in_flight):
    # the 2,000 single-record batches where it stalled, fewer elsewhere to keep the run short
    count = 2000 if (faults, window, in_flight) == ("error+drop", 20, 20) else 300
    broker = chaos_broker
    try:
        topic = topic_with_window(broker, window)
        with broker.control as control:
            for operation, args in FAULTS[faults]:
                getattr(control, operation)("produce", count=None, topic=topic, **args)
        # one record per batch, so that every request carries one batch and the rules hit batches one by one;
        # a stalled producer fails its batches at the delivery timeout (Kafka's default, 2 minutes)
        async with Producer(broker.bootstrap_servers, max_in_flight_requests_per_connection=in_flight, batch_size=1,
                            linger_ms=0, delivery_timeout_ms=120_000) as producer:
            futures = [await producer.send(topic, b"%06d" % i, partition=0) for i in range(count)]
            offsets = [metadata.offset for metadata in await asyncio.gather(*futures)]
            assert producer.max_in_flight_seen(topic, 0) <= min(window, in_flight)
        assert offsets == list(range(count))
        with broker.control as control:
            fired = [rule["fired"] for rule in control.status()["rules"] if rule["topic"] == topic]
        assert len(fired) == len(FAULTS[faults]) and all(fired), fired
        values = [value for value, _stamp in read_back(broker, topic, 1, count)[0]]
        assert values == [b"%06d" % i for i in range(count)]
        assert "fault injection" in broker.log_text()
    finally:
        with broker.control as control:
            control.clear()


async def test_a_connection_whose_socket_failed_unheard_is_replaced(chaos_broker):
    """A reset from the broker makes asyncio close the socket's transport at once and tell the connection's
    reader only on a later turn of the loop. The producer must not take the connection for open in between:
    it spun writing its oldest batch to the dead socket, starving its own loop (no reconnect, no answers) until
    the delivery timeout failed every batch."""
    topic = topic_with_window(chaos_broker, 20)
    async with Producer(chaos_broker.bootstrap_servers, max_in_flight_requests_per_connection=20, batch_size=1,
                        linger_ms=0, delivery_timeout_ms=10_000) as producer:
        assert (await (await producer.send(topic, b"%06d" % 0, partition=0))).offset == 0
        dead = await producer.client.connection(0)
        dead._writer.close()  # what asyncio does to a transport whose recv or send failed with a reset
        futures = [await producer.send(topic, b"%06d" % i, partition=0) for i in range(1, 20)]
        offsets = [metadata.offset for metadata in await asyncio.gather(*futures)]
        assert await producer.client.connection(0) is not dead
    assert offsets == list(range(1, 20))
    values = [value for value, _stamp in read_back(chaos_broker, topic, 1, 20)[0]]
    assert values == [b"%06d" % i for i in range(20)]


# -- the KIP's items 4 and 5: old-broker nodes -------------------------------------------------------


@pytest.fixture(scope="module")
def mixed_cluster():
    # node 0 speaks as this release (KIP-1269), node 1 as Kafka 3.9 (Produce <= v11, 5 batches, no tag)
    process = start_broker(extra_args=("--nodes", "2", "--node-profile", "1=3.9", "--control-port", "0",
                                       "--fault", "produce:delay=200:every=1"))
    yield process
    process.stop()


def leader_on(broker, topic: str, node: int) -> None:
    with broker.control as control:
        assert control.move_leader(topic, 0, node=node)["leader"] == node


async def test_old_broker_node_keeps_the_producer_at_5(mixed_cluster):
    topic = topic_with_window(mixed_cluster, 20)
    leader_on(mixed_cluster, topic, 1)
    offsets, limit, max_seen = await produce(mixed_cluster, topic, in_flight=20)
    assert offsets == list(range(400))
    assert (limit, max_seen) == (5, 5)
    assert broker_max_in_flight(mixed_cluster, topic) == 5


def move_with_admin_apis(broker, topic: str, node: int, others: list[int]) -> None:
    """The operator's way: AlterPartitionReassignments puts `node` first, ElectLeaders makes it lead."""
    from minibroker.protocol.messages import AlterPartitionReassignmentsRequest, ElectLeadersRequest

    partition = AlterPartitionReassignmentsRequest.ReassignableTopic.ReassignablePartition(
        partition_index=0, replicas=[node, *others])
    with WireClient(broker.host, broker.port) as wire:
        reassigned = wire.request(AlterPartitionReassignmentsRequest(
            timeout_ms=5000, allow_replication_factor_change=True, topics=[
                AlterPartitionReassignmentsRequest.ReassignableTopic(name=topic, partitions=[partition])]), 0)
        assert [p.error_code for t in reassigned.responses for p in t.partitions] == [0]
        elected = wire.request(ElectLeadersRequest(election_type=0, timeout_ms=5000, topic_partitions=[
            ElectLeadersRequest.TopicPartitions(topic=topic, partitions=[0])]), 1)
        assert [p.error_code for r in elected.replica_election_results for p in r.partition_result] == [0]


async def test_leader_change_to_an_old_broker_drops_the_limit_to_5(mixed_cluster):
    topic = topic_with_window(mixed_cluster, 20)
    leader_on(mixed_cluster, topic, 0)
    async with Producer(mixed_cluster.bootstrap_servers, max_in_flight_requests_per_connection=20, batch_size=200,
                        linger_ms=0) as producer:
        futures = [await producer.send(topic, b"%06d" % i, partition=0) for i in range(400)]
        # the new-broker window is learnt and in use
        await wait_until_async(lambda: producer.in_flight(topic, 0) >= 20, 30, "20 batches in flight")
        assert producer.partition_limit(topic, 0) == 20
        move_with_admin_apis(mixed_cluster, topic, node=1, others=[0])  # while 20 batches are in flight
        futures += [await producer.send(topic, b"%06d" % i, partition=0) for i in range(400, 800)]
        offsets = [(await f).offset for f in futures]
        assert producer.partition_limit(topic, 0) == 5
    assert offsets == list(range(800))
    assert broker_max_in_flight(mixed_cluster, topic, node=0) == 20
    assert broker_max_in_flight(mixed_cluster, topic, node=1) == 5


# -- exactly once under injected faults ------------------------------------------------------------------


def read_back(broker, topic: str, partitions: int, expected: int) -> dict[int, list[tuple[bytes, tuple]]]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "check",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    seen: dict[int, list[tuple[bytes, tuple]]] = {p: [] for p in range(partitions)}
    total = 0
    deadline = time.monotonic() + 60
    try:
        while total < expected and time.monotonic() < deadline:
            for message in consumer.consume(num_messages=500, timeout=0.5):
                assert message.error() is None, message.error()
                seen[message.partition()].append((message.value(), read_stamp(message.headers() or [])))
                total += 1
        extra = consumer.poll(1.0)  # anything more would be a duplicate
        assert extra is None or extra.error() is not None, (extra.partition(), extra.offset(), extra.value())
    finally:
        consumer.close()
    return seen


@pytest.mark.parametrize(("window", "in_flight"), [(20, 20), (5, 20), (20, 5), (5, 5)])
async def test_exactly_once_through_injected_errors_and_dropped_connections(chaos_broker, window, in_flight):
    broker = chaos_broker
    try:
        topic = unique_topic("kip1269-chaos")
        with WireClient(broker.host, broker.port) as wire:
            create_topic(wire, topic, 3, configs={"producer.state.batches.to.retain": str(window)})
        with broker.control as control:
            # retriable errors before the append, after the append (the retry is a duplicate), lost answers,
            # and slow answers so that many batches are in flight when they happen
            control.inject_error("produce", error_code=ErrorCode.NOT_ENOUGH_REPLICAS, count=None, every=6,
                                 topic=topic)
            control.inject_error("produce", error_code=ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, count=None,
                                 every=9, topic=topic, after_append=True)
            control.inject_error("produce", error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER, count=None, every=17,
                                 topic=topic)
            control.drop("produce", count=None, every=13, topic=topic)
            control.delay("produce", delay_ms=30, count=None, every=2, topic=topic)
        per_partition = 1000 if (window, in_flight) == (20, 20) else 300
        limit = min(window, in_flight)
        async with Producer(broker.bootstrap_servers, max_in_flight_requests_per_connection=in_flight,
                            batch_size=300, linger_ms=0, retry_backoff_ms=20, request_timeout_ms=5000) as producer:
            futures = []
            for i in range(per_partition):
                for p in range(3):
                    futures.append(await producer.send(topic, b"p%d-%06d" % (p, i), partition=p,
                                                       headers=stamp(f"chaos-p{p}", i)))
            acked = [await f for f in futures]
            most_sent = max(producer.max_in_flight_seen(topic, p) for p in range(3))
            assert 5 < most_sent <= limit if limit > 5 else most_sent <= limit
        assert all(len([m for m in acked if m.partition == p]) == per_partition for p in range(3))
        with broker.control as control:
            fired = {(r["action"], r["error_code"]): r["fired"] for r in control.status()["rules"]
                     if r["topic"] == topic}
            most = max(control.in_flight(topic, p)["max"] for p in range(3))
        assert all(count > 0 for count in fired.values()), fired
        assert 5 < most <= limit if limit > 5 else most <= limit
        seen = read_back(broker, topic, 3, 3 * per_partition)
        for p in range(3):
            assert [value for value, _ in seen[p]] == [b"p%d-%06d" % (p, i) for i in range(per_partition)]
            assert [s for _, s in seen[p]] == [(f"chaos-p{p}", i) for i in range(per_partition)]
    finally:
        with broker.control as control:
            control.clear()
