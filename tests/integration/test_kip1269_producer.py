"""The project's KIP-1269 producer against a real broker whose Produce answers are slowed down."""

from __future__ import annotations

import asyncio
import time

import pytest

from minibroker.client import Producer
from minibroker.testing.process import start_broker
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic
from tests.integration.test_wire_protocol import create_topic


@pytest.fixture(scope="module")
def slow_broker():
    # every Produce answer waits 200 ms, so a producer that may have N batches in flight has them
    process = start_broker(extra_args=("--fault", "produce:delay=200:every=1"))
    yield process
    process.stop()


def topic_with_window(broker, window: int) -> str:
    name = unique_topic(f"kip1269-w{window}")
    with WireClient(broker.host, broker.port) as wire:
        create_topic(wire, name, configs={"producer.state.batches.to.retain": str(window)})
    return name


async def produce(broker, topic: str, in_flight: int, count: int = 400, version: int | None = None):
    async with Producer(broker.bootstrap, max_in_flight_requests_per_connection=in_flight, batch_size=200,
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


async def test_two_topics_on_one_broker_keep_their_own_limits(slow_broker):
    small, large = topic_with_window(slow_broker, 5), topic_with_window(slow_broker, 20)
    async with Producer(slow_broker.bootstrap, max_in_flight_requests_per_connection=20, batch_size=200,
                        linger_ms=0) as producer:
        futures = []
        for i in range(300):
            futures.append(await producer.send(small, b"%06d" % i, partition=0))
            futures.append(await producer.send(large, b"%06d" % i, partition=0))
        await asyncio.gather(*futures)
        assert producer.max_in_flight_seen(small, 0) <= 5
        assert producer.max_in_flight_seen(large, 0) > 5
        assert (producer.partition_limit(small, 0), producer.partition_limit(large, 0)) == (5, 20)


async def test_produce_v13_never_learns_a_larger_window(slow_broker):
    topic = topic_with_window(slow_broker, 20)
    offsets, limit, max_seen = await produce(slow_broker, topic, in_flight=20, version=13)
    assert offsets == list(range(400))
    assert (limit, max_seen) == (5, 5)


async def test_exactly_once_in_order_through_dropped_connections():
    broker = start_broker(extra_args=("--fault", "produce:drop:every=7"))
    try:
        topic = topic_with_window(broker, 20)
        offsets, _, _ = await produce(broker, topic, in_flight=20, count=2000)
        assert offsets == list(range(2000))
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "check", "enable.auto.commit": False})
        consumer.assign([TopicPartition(topic, 0, 0)])
        values = []
        deadline = time.monotonic() + 30
        while len(values) < 2000 and time.monotonic() < deadline:
            for message in consumer.consume(num_messages=500, timeout=0.5):
                assert message.error() is None, message.error()
                values.append(message.value())
        extra = consumer.poll(0.5)
        assert extra is None or extra.error() is not None, (extra.offset(), extra.value())
        consumer.close()
        assert values == [b"%06d" % i for i in range(2000)]
        assert "fault injection" in broker.log_text()
    finally:
        broker.stop()
