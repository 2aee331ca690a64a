"""The KIP-1269 producer's per-partition limit: learnt from v14 answers, reset on a leader change."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest

from minibroker.client.client import PartitionInfo, TopicInfo
from minibroker.client.producer import Producer, ProducerBatch
from minibroker.protocol.errors import ErrorCode


def producer_with_partition(max_in_flight: int = 20) -> tuple[Producer, object]:
    producer = Producer("127.0.0.1:1", max_in_flight_requests_per_connection=max_in_flight)
    producer.client.topics["t"] = TopicInfo("t", None, [PartitionInfo("t", 0, leader=1, leader_epoch=0)])  # type: ignore[arg-type]
    return producer, producer._state("t", 0)


def answer(retain: int = 5, code: int = 0, offset: int = 0) -> object:
    return SimpleNamespace(error_code=code, base_offset=offset, producer_state_batches_to_retain=retain)


async def finish_one(producer: Producer, state, version: int, response: object) -> ProducerBatch:
    batch = ProducerBatch("t", 0, time.monotonic(), records=[(None, b"v", [], 0)],
                          futures=[asyncio.get_running_loop().create_future()], base_sequence=0)
    state.in_flight.append(batch)
    producer._finish([batch], {("t", 0): response}, version, None)
    return batch


def test_no_cap_of_five_when_idempotent():
    assert Producer("127.0.0.1:1", max_in_flight_requests_per_connection=50).max_in_flight_requests_per_connection == 50
    with pytest.raises(ValueError):
        Producer("127.0.0.1:1", max_in_flight_requests_per_connection=0)


async def test_limit_starts_at_five_and_is_learnt_from_v14_answers():
    producer, state = producer_with_partition()
    assert producer.partition_limit("t", 0) == 5
    batch = await finish_one(producer, state, 14, answer(retain=20))
    assert producer.partition_limit("t", 0) == 20
    assert batch.futures[0].result().offset == 0
    await finish_one(producer, state, 14, answer(retain=5))  # tag absent decodes as the default 5
    assert producer.partition_limit("t", 0) == 5


async def test_answers_below_v14_leave_the_limit_at_five():
    producer, state = producer_with_partition()
    await finish_one(producer, state, 13, answer(retain=20))
    assert producer.partition_limit("t", 0) == 5


async def test_leader_change_resets_the_limit_until_the_new_leader_answers():
    producer, state = producer_with_partition()
    await finish_one(producer, state, 14, answer(retain=20))

    async def moved(topics):
        producer.client.topics["t"].partitions[0] = PartitionInfo("t", 0, leader=2, leader_epoch=1)

    producer.client.refresh_metadata = moved  # type: ignore[method-assign]
    await producer._refresh_leaders()
    assert (state.leader, producer.partition_limit("t", 0)) == (2, 5)
    await finish_one(producer, state, 14, answer(retain=20))
    assert producer.partition_limit("t", 0) == 20


async def test_retriable_error_requeues_in_sequence_order():
    producer, state = producer_with_partition()
    first = await finish_one(producer, state, 14, answer(code=6))  # NOT_LEADER_OR_FOLLOWER
    assert list(state.queue) == [first] and not first.futures[0].done()
    assert producer._metadata_stale


async def test_a_batch_waiting_for_its_retry_keeps_later_batches_inside_the_window():
    producer, state = producer_with_partition(max_in_flight=20)  # window 5 (no v14 answer says more)
    loop = asyncio.get_running_loop()

    def new_batch(ordinal: int = -1) -> ProducerBatch:
        return ProducerBatch("t", 0, time.monotonic(), records=[(None, b"v", [], 0)],
                             futures=[loop.create_future()], base_sequence=ordinal, ordinal=ordinal)

    sent = [new_batch(i) for i in range(5)]
    state.in_flight.extend(sent)
    state.next_sequence = state.next_ordinal = 5
    producer._finish([sent[0]], {("t", 0): answer(code=ErrorCode.REQUEST_TIMED_OUT)}, 14, None)
    for batch in sent[1:]:
        producer._finish([batch], {("t", 0): answer(offset=batch.ordinal)}, 14, None)
    fresh = new_batch()
    state.queue.append(fresh)
    assert producer._sendable_head(state) is sent[0]  # the retry goes first
    state.in_flight.append(state.queue.popleft())
    # only one batch in flight, but the broker appended 4 after the unacknowledged one: a fifth would push
    # it out of the broker's window of 5, and its next retry would get OUT_OF_ORDER_SEQUENCE_NUMBER
    assert producer._sendable_head(state) is None
    producer._finish([sent[0]], {("t", 0): answer(offset=0)}, 14, None)
    assert producer._sendable_head(state) is fresh
