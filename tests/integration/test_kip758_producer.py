"""KIP-758's producer throttle against a latest-append broker (in process, test control on).

A latest-append leader remembers one batch per producer and partition and tells
Produce v14 clients to keep 1 batch in flight; the throttle keeps many, bounded
by sequence numbers, and takes DUPLICATE_SEQUENCE_NUMBER for a retried batch
that is no longer the latest as success with offset -1.
"""

from __future__ import annotations

import asyncio

import pytest

from minibroker.client import Producer
from minibroker.client.producer import RecordMetadata
from minibroker.client.stamping import stamp
from minibroker.protocol.errors import ErrorCode, KafkaError
from minibroker.testing import BrokerThread
from tests.helpers import unique_topic, wait_until_async
from tests.integration.test_kip1269_producer import read_back

DUPLICATE_RANGE = 120  # the broker's max.in.flight.sequence.number.per.connection, and the producer's bound


@pytest.fixture(scope="module")
def latest_append():
    with BrokerThread(config={"producer.state.mode": "latest-append",
                              "max.in.flight.sequence.number.per.connection": str(DUPLICATE_RANGE)}) as broker:
        yield broker


async def wait_for_requests(broker: BrokerThread, topic: str, count: int) -> None:
    await wait_until_async(lambda: broker.control.in_flight(topic, 0)["current"] >= count, 10,
                           f"{count} produce requests held")


async def five_batches_first_appended_then_failed(
        broker: BrokerThread, bound: int) -> tuple[str, list[RecordMetadata | BaseException]]:
    """Five batches of 10 records in flight at once; the first is appended, then answered
    NOT_ENOUGH_REPLICAS_AFTER_APPEND; its retry follows the other four on the connection, so it is a duplicate
    that is not the broker's latest batch. The results of the 50 records (RecordMetadata or the exception)."""
    topic = broker.create_topic(unique_topic("kip758-dup"), 1)
    broker.control.inject_error("produce", error_code=ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, count=1,
                                topic=topic, after_append=True)
    broker.control.hold(topic, 0)
    async with Producer(broker.bootstrap_servers, max_in_flight_requests_per_connection=20, batch_size=220,
                        linger_ms=0, retry_backoff_ms=10, max_in_flight_sequence_numbers=bound) as producer:
        futures = [await producer.send(topic, b"%06d" % i, partition=0, headers=stamp("dup", i)) for i in range(50)]
        await wait_for_requests(broker, topic, 5)  # all five at the broker, no answer sent yet
        assert producer.in_flight(topic, 0) == 5 and producer.in_flight_sequences(topic, 0) == 50
        # the first answer is held; the others wait behind it on the connection and follow it in order
        assert broker.control.release(topic, 0) >= 1
        results = list(await asyncio.gather(*futures, return_exceptions=True))
    return topic, results


async def test_a_retried_batch_behind_the_latest_is_success_with_offset_minus_one(latest_append):
    topic, results = await five_batches_first_appended_then_failed(latest_append, DUPLICATE_RANGE)
    assert [r.offset if isinstance(r, RecordMetadata) else r for r in results] == [-1] * 10 + list(range(10, 50))
    seen = read_back(latest_append, topic, 1, 50)[0]
    assert [value for value, _ in seen] == [b"%06d" % i for i in range(50)]
    assert [s for _, s in seen] == [("dup", i) for i in range(50)]


async def test_a_bound_above_the_broker_duplicate_range_is_not_safe():
    # the producer may have 100 sequences unacknowledged, the broker counts only 20 below its latest as duplicates:
    # the retry lies outside and is OUT_OF_ORDER_SEQUENCE_NUMBER though the batch is in the log
    with BrokerThread(config={"producer.state.mode": "latest-append",
                              "max.in.flight.sequence.number.per.connection": "20"}) as broker:
        topic, results = await five_batches_first_appended_then_failed(broker, bound=100)
        errors = results[:10]
        assert all(isinstance(e, KafkaError) and e.code is ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER for e in errors)
        assert [r.offset if isinstance(r, RecordMetadata) else r for r in results[10:]] == list(range(10, 50))
        assert [value for value, _ in read_back(broker, topic, 1, 50)[0]] == [b"%06d" % i for i in range(50)]


def inject(control, topic: str, mix: str) -> None:
    """`duplicates`: every 9th Produce is appended, then answered NOT_ENOUGH_REPLICAS_AFTER_APPEND while the
    batches after it are appended too, so most retries are duplicates behind the latest batch. `mixed` adds
    errors before the append and dropped connections: after those a partition's retries go one at a time (Kafka's
    ordering rule), so a retry is mostly the latest batch and gets its offset. Every other answer is slow, so
    many batches are in flight when these happen."""
    if mix == "mixed":
        control.inject_error("produce", error_code=ErrorCode.NOT_ENOUGH_REPLICAS, count=None, every=6, topic=topic)
    control.inject_error("produce", error_code=ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, count=None, every=9,
                         topic=topic, after_append=True)
    if mix == "mixed":
        control.inject_error("produce", error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER, count=None, every=17,
                             topic=topic)
        control.drop("produce", count=None, every=13, topic=topic)
    control.delay("produce", delay_ms=30, count=None, every=2, topic=topic)


@pytest.mark.parametrize("mix", ["duplicates", "mixed"])
async def test_exactly_once_in_order_through_injected_faults(latest_append, mix):
    topic = latest_append.create_topic(unique_topic(f"kip758-{mix}"), 3)
    control = latest_append.control
    inject(control, topic, mix)
    per_partition = 1000
    try:
        async with Producer(latest_append.bootstrap_servers, max_in_flight_requests_per_connection=20,
                            batch_size=300, linger_ms=0, retry_backoff_ms=20, request_timeout_ms=5000,
                            max_in_flight_sequence_numbers=DUPLICATE_RANGE) as producer:
            futures = []
            for i in range(per_partition):
                for p in range(3):
                    futures.append(await producer.send(topic, b"p%d-%06d" % (p, i), partition=p,
                                                       headers=stamp(f"{mix}-p{p}", i)))
            acked: list[RecordMetadata] = list(await asyncio.gather(*futures))
            # the leader said 1 batch (its one remembered batch); the throttle kept more, within the bound
            assert [producer.partition_limit(topic, p) for p in range(3)] == [1, 1, 1]
            assert max(producer.max_in_flight_seen(topic, p) for p in range(3)) > 5
            assert max(producer.max_in_flight_sequences_seen(topic, p) for p in range(3)) <= DUPLICATE_RANGE
        fired = {(r["action"], r["error_code"]): r["fired"] for r in control.status()["rules"]}
        most = max(control.in_flight(topic, p)["max"] for p in range(3))
    finally:
        control.clear()
    assert all(count > 0 for count in fired.values()), fired
    assert 5 < most <= 20
    for p in range(3):
        offsets = [m.offset for m in acked if m.partition == p]
        assert len(offsets) == per_partition
        # a record's offset is its number, unless its batch's retry was a duplicate behind the latest (-1)
        assert all(offset in (i, -1) for i, offset in enumerate(offsets)), offsets
    if mix == "duplicates":
        assert sum(m.offset == -1 for m in acked) > 0
    seen = read_back(latest_append, topic, 3, 3 * per_partition)
    for p in range(3):
        assert [value for value, _ in seen[p]] == [b"p%d-%06d" % (p, i) for i in range(per_partition)]
        assert [s for _, s in seen[p]] == [(f"{mix}-p{p}", i) for i in range(per_partition)]
