"""The project's producer keeps every retry inside the broker's window (KIP-1269), as librdkafka does.

The broker retains the last `producer.state.batches.to.retain` batches of each
producer per partition; a retried batch that fell out of that window is answered
OUT_OF_ORDER_SEQUENCE_NUMBER instead of its original offset. Below, every `every`-th
Produce request is appended and then answered REQUEST_TIMED_OUT, so the retry is a
duplicate. With every=3 (the rule of issue 11) errors are frequent. With
every=window and slow answers (so the producer keeps its limit of batches in
flight), a batch that failed fails again on its retry while all the batches
between the two attempts succeed: the farthest a retry can trail its first attempt.
"""

from __future__ import annotations

import asyncio

import pytest
from confluent_kafka import Producer as ConfluentProducer

from minibroker.client import Producer
from minibroker.client.stamping import stamp
from minibroker.protocol.errors import ErrorCode
from minibroker.testing.process import start_broker
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic
from tests.integration.test_kip1269_producer import read_back
from tests.integration.test_wire_protocol import create_topic

COUNT = 1000
# the topic's window, which Produce requests fail (every n-th), how long every answer is held back
RULES = [(5, 3, 0), (20, 3, 0), (5, 5, 20), (20, 20, 20)]


@pytest.fixture(scope="module")
def controlled():
    process = start_broker(extra_args=("--control-port", "0"))
    yield process
    process.stop()


def topic_under_rule(broker, window: int, every: int, delay_ms: int) -> str:
    """A one-partition topic retaining `window` batches per producer; every `every`-th Produce to it is
    appended, then answered REQUEST_TIMED_OUT; every answer is held back `delay_ms`."""
    topic = unique_topic(f"window{window}")
    with WireClient(broker.host, broker.port) as wire:
        create_topic(wire, topic, configs={"producer.state.batches.to.retain": str(window)})
    with broker.control as control:
        control.inject_error("produce", error_code=ErrorCode.REQUEST_TIMED_OUT, count=None, every=every,
                             topic=topic, after_append=True)
        if delay_ms:
            control.delay("produce", delay_ms=delay_ms, count=None, topic=topic)
    return topic


def rule_fired(broker, topic: str) -> int:
    with broker.control as control:
        return sum(rule["fired"] for rule in control.status()["rules"]
                   if rule["action"] == "error" and rule["topic"] == topic)


def assert_read_back_once_in_order(broker, topic: str, name: str) -> None:
    seen = read_back(broker, topic, 1, COUNT)[0]
    assert [value for value, _ in seen] == [b"%06d" % i for i in range(COUNT)]
    assert [s for _, s in seen] == [(name, i) for i in range(COUNT)]


@pytest.mark.parametrize(("window", "every", "delay_ms"), RULES)
async def test_retried_duplicates_stay_inside_the_broker_window(controlled, window, every, delay_ms):
    topic = topic_under_rule(controlled, window, every, delay_ms)
    async with Producer(controlled.bootstrap_servers, max_in_flight_requests_per_connection=20, batch_size=300,
                        linger_ms=0, retry_backoff_ms=10, delivery_timeout_ms=30_000) as producer:
        futures = [await producer.send(topic, b"%06d" % i, partition=0, headers=stamp("window", i))
                   for i in range(COUNT)]
        results = await asyncio.gather(*futures, return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        assert errors == [], f"{len(errors)} failed, first: {errors[0]!r}"
        assert [r.offset for r in results] == list(range(COUNT))  # type: ignore[union-attr]
        assert producer.partition_limit(topic, 0) == window
        assert producer.max_in_flight_seen(topic, 0) <= window
        if delay_ms:  # slow answers: the producer did use its whole window
            assert producer.max_in_flight_seen(topic, 0) == window
    assert rule_fired(controlled, topic) >= 3
    assert_read_back_once_in_order(controlled, topic, "window")


@pytest.mark.parametrize(("window", "every", "delay_ms"), RULES)
def test_librdkafka_idempotent_producer_under_the_same_rule(controlled, window, every, delay_ms):
    topic = topic_under_rule(controlled, window, every, delay_ms)
    producer = ConfluentProducer({
        "bootstrap.servers": controlled.bootstrap_servers, "enable.idempotence": True, "linger.ms": 0,
        "batch.size": 300, "retry.backoff.ms": 10, "message.timeout.ms": 30_000,
    })
    errors: list[object] = []
    for i in range(COUNT):
        producer.produce(topic, value=b"%06d" % i, partition=0, headers=stamp("librdkafka", i),
                         on_delivery=lambda err, _msg: errors.append(err) if err else None)
        producer.poll(0)
    assert producer.flush(60) == 0
    assert errors == []
    assert rule_fired(controlled, topic) >= 3
    assert_read_back_once_in_order(controlled, topic, "librdkafka")
