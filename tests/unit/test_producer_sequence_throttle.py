"""KIP-758's producer throttle: in-flight work per partition bounded by sequence numbers, not batches.

No sockets: the producer's sender runs against a fake connection whose answers the tests write.
"""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

import pytest

from minibroker.client.client import PartitionInfo, TopicInfo
from minibroker.client.producer import MAX_IN_FLIGHT_SEQUENCE_NUMBERS, PartitionState, Producer, ProducerBatch
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.records import INT32_MAX


class FakeConnection:
    """Keeps every Produce request and the future its answer completes."""

    def __init__(self) -> None:
        self.sent: list[tuple[Any, asyncio.Future[Any]]] = []

    def send(self, request: Any, version: int) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.sent.append((request, future))
        return future

    def partitions(self, index: int) -> list[int]:
        request = self.sent[index][0]
        return [p.index for topic in request.topic_data for p in topic.partition_data]


def producer_on_fake(partitions: int = 1, **options: Any) -> tuple[Producer, FakeConnection]:
    options.setdefault("max_in_flight_requests_per_connection", 20)
    producer = Producer("127.0.0.1:1", produce_version=14, **options)
    leaders = [PartitionInfo("t", p, leader=1, leader_epoch=0) for p in range(partitions)]
    producer.client.topics["t"] = TopicInfo("t", None, leaders)  # type: ignore[arg-type]
    connection = FakeConnection()

    async def connect(node_id: int) -> FakeConnection:
        return connection

    producer.client.connection = connect  # type: ignore[method-assign, assignment]
    return producer, connection


def new_batch(records: int, partition: int = 0) -> ProducerBatch:
    loop = asyncio.get_running_loop()
    return ProducerBatch("t", partition, time.monotonic(), records=[(None, b"v", [], 0)] * records,
                         futures=[loop.create_future() for _ in range(records)])


def queue(producer: Producer, *sizes: int, partition: int = 0) -> list[ProducerBatch]:
    batches = [new_batch(size, partition) for size in sizes]
    producer._state("t", partition).queue.extend(batches)
    return batches


def produce_answer(*partitions: tuple[int, int, int], retain: int = 1) -> SimpleNamespace:
    """A ProduceResponse with (partition, error code, base offset) entries; retain 1 as a latest-append leader says."""
    return SimpleNamespace(responses=[SimpleNamespace(topic_id=None, partition_responses=[
        SimpleNamespace(index=p, error_code=code, base_offset=offset, producer_state_batches_to_retain=retain)
        for p, code, offset in partitions])])


async def answer(connection: FakeConnection, index: int, code: int = 0, offset: int = 0, retain: int = 1) -> None:
    connection.sent[index][1].set_result(produce_answer(*[(p, code, offset) for p in connection.partitions(index)],
                                                        retain=retain))
    await asyncio.sleep(0)  # the answer's callback runs


def test_the_bound_is_off_by_default_and_checked():
    assert Producer("127.0.0.1:1").max_in_flight_sequence_numbers is None
    assert Producer("127.0.0.1:1", max_in_flight_sequence_numbers=1).max_in_flight_sequence_numbers == 1
    assert Producer("127.0.0.1:1", max_in_flight_sequence_numbers=2**30).max_in_flight_sequence_numbers == 2**30
    assert MAX_IN_FLIGHT_SEQUENCE_NUMBERS == 2**30  # KIP-758's largest max.in.flight.sequence.number.per.connection
    for bad in (0, -1, 2**30 + 1):
        with pytest.raises(ValueError):
            Producer("127.0.0.1:1", max_in_flight_sequence_numbers=bad)


async def test_unacknowledged_sequences_stay_within_the_bound():
    producer, connection = producer_on_fake(max_in_flight_sequence_numbers=10)
    batches = queue(producer, 3, 3, 3, 3, 3)
    await producer._drain()
    # 3 batches are 9 sequences; a fourth would make 12
    assert (len(connection.sent), producer.in_flight("t", 0), producer.in_flight_sequences("t", 0)) == (3, 3, 9)
    await answer(connection, 0, offset=0)
    assert batches[0].futures[2].result().offset == 2
    await producer._drain()
    # counted from the oldest unacknowledged batch (sequence 3): 3..11 is 9 sequences, 3..14 would be 12
    assert (len(connection.sent), producer.in_flight_sequences("t", 0)) == (4, 9)
    assert [b.base_sequence for b in batches] == [0, 3, 6, 9, -1]
    for index in (1, 2, 3):
        await answer(connection, index, offset=3 * index)
    await producer._drain()
    assert len(connection.sent) == 5 and producer.in_flight_sequences("t", 0) == 3
    assert producer.max_in_flight_sequences_seen("t", 0) == 9


async def test_the_kip1269_window_is_not_applied():
    producer, connection = producer_on_fake(max_in_flight_sequence_numbers=1000)
    queue(producer, 1)
    await producer._drain()
    await answer(connection, 0, retain=1)  # a latest-append leader's window
    assert producer.partition_limit("t", 0) == 1
    queue(producer, *[1] * 12)
    await producer._drain()
    assert producer.in_flight("t", 0) == 12 and producer.max_in_flight_seen("t", 0) == 12


async def test_without_the_option_the_learnt_window_still_limits():
    producer, connection = producer_on_fake()
    queue(producer, 1)
    await producer._drain()
    await answer(connection, 0, retain=1)
    queue(producer, *[1] * 12)
    await producer._drain()
    assert producer.in_flight("t", 0) == 1


async def test_the_connection_limit_still_applies():
    producer, connection = producer_on_fake(partitions=2, max_in_flight_requests_per_connection=3,
                                            max_in_flight_sequence_numbers=1000)
    queue(producer, *[1] * 6, partition=0)
    queue(producer, *[1] * 6, partition=1)
    await producer._drain()
    assert len(connection.sent) == 3 and producer._requests_in_flight[1] == 3
    assert connection.partitions(0) == [0, 1]  # each request carries one batch of each partition
    assert (producer.in_flight("t", 0), producer.in_flight("t", 1)) == (3, 3)
    await answer(connection, 0)
    await producer._drain()
    assert len(connection.sent) == 4


async def test_a_batch_larger_than_the_bound_goes_alone():
    producer, connection = producer_on_fake(max_in_flight_sequence_numbers=4)
    big, small = queue(producer, 6, 1)
    await producer._drain()
    assert len(connection.sent) == 1 and producer.in_flight_sequences("t", 0) == 6
    await answer(connection, 0)
    await producer._drain()
    assert len(connection.sent) == 2 and small.base_sequence == 6


async def test_a_batch_waiting_for_its_retry_still_counts():
    producer, connection = producer_on_fake(max_in_flight_sequence_numbers=10, retry_backoff_ms=10_000)
    batches = queue(producer, 3, 3, 3)
    await producer._drain()
    await answer(connection, 0, code=ErrorCode.REQUEST_TIMED_OUT)  # appended perhaps; retried with sequence 0
    await answer(connection, 1, offset=3)
    await answer(connection, 2, offset=6)
    state = producer._state("t", 0)
    assert list(state.queue) == [batches[0]] and producer.in_flight_sequences("t", 0) == 9
    fresh = queue(producer, 3)[0]
    assert producer._sendable_head(state) is batches[0]  # the retry goes first
    await producer._drain()
    assert len(connection.sent) == 4 and fresh.base_sequence == -1  # 0..11 would be 12 sequences
    await answer(connection, 3, code=ErrorCode.DUPLICATE_SEQUENCE_NUMBER, offset=-1)
    await producer._drain()
    assert len(connection.sent) == 5 and fresh.base_sequence == 9


async def test_duplicate_sequence_number_is_success_without_an_offset():
    producer, connection = producer_on_fake(max_in_flight_sequence_numbers=100)
    (batch,) = queue(producer, 3)
    await producer._drain()
    await answer(connection, 0, code=ErrorCode.DUPLICATE_SEQUENCE_NUMBER, offset=-1)
    assert [f.result().offset for f in batch.futures] == [-1, -1, -1]
    assert [f.result().partition for f in batch.futures] == [0, 0, 0]
    state = producer._state("t", 0)
    assert not state.queue and not state.in_flight  # never retried
    await producer._drain()
    assert len(connection.sent) == 1


async def test_without_the_option_duplicate_sequence_number_is_still_success_without_an_offset():
    producer, connection = producer_on_fake()
    (batch,) = queue(producer, 1)
    await producer._drain()
    await answer(connection, 0, code=ErrorCode.DUPLICATE_SEQUENCE_NUMBER, offset=-1)
    assert batch.futures[0].result().offset == -1  # stored before; never failed, so never resent


async def test_sequences_are_counted_across_the_wrap():
    producer, connection = producer_on_fake(max_in_flight_sequence_numbers=8)
    state: PartitionState = producer._state("t", 0)
    state.next_sequence = INT32_MAX - 3  # 2147483644..2147483647, then 0 and 1
    first = queue(producer, 6)[0]
    await producer._drain()
    assert (first.base_sequence, state.next_sequence) == (INT32_MAX - 3, 2)
    assert producer.in_flight_sequences("t", 0) == 6
    three, two = queue(producer, 3, 2)
    assert producer._sendable_head(state) is None  # 6 + 3 > 8
    state.queue.popleft()
    assert producer._sendable_head(state) is two  # 6 + 2 <= 8
    await producer._drain()
    assert two.base_sequence == 2 and producer.in_flight_sequences("t", 0) == 8
    assert three.base_sequence == -1


async def test_a_retried_batch_waits_for_the_batches_before_it():
    producer, connection = producer_on_fake(max_in_flight_sequence_numbers=100, retry_backoff_ms=10_000)
    batches = queue(producer, 1, 1, 1)
    await producer._drain()
    await answer(connection, 1, code=ErrorCode.NOT_ENOUGH_REPLICAS)  # the second fails while the first is in flight
    state = producer._state("t", 0)
    assert list(state.queue) == [batches[1]]
    assert producer._sendable_head(state) is None  # Kafka's ordering rule
    await answer(connection, 0)
    assert producer._sendable_head(state) is batches[1]


async def test_out_of_order_behind_a_failed_batch_is_retried():
    producer, connection = producer_on_fake(max_in_flight_sequence_numbers=100, retry_backoff_ms=10_000)
    batches = queue(producer, 1, 1)
    await producer._drain()
    await answer(connection, 0, code=ErrorCode.NOT_ENOUGH_REPLICAS)  # not appended: the next one is out of order
    await answer(connection, 1, code=ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
    assert list(producer._state("t", 0).queue) == batches
    assert not any(f.done() for b in batches for f in b.futures)
