"""The fetch session cache (core/fetch_sessions.py) with plain calls and a manual clock: Kafka's FetchManager
contexts, its eviction rules and which partitions an incremental answer keeps."""

from __future__ import annotations

import random
from typing import Any

from minibroker.core.clock import ManualClock
from minibroker.core.fetch_sessions import (
    EVICTION_MS,
    FINAL_EPOCH,
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    CachedPartition,
    ContextKind,
    FetchContext,
    FetchSessionCache,
    PartitionAnswer,
    PartitionKey,
    answer_session,
    new_context,
    next_epoch,
)
from minibroker.protocol.errors import ErrorCode


def key(partition: int, topic: str = "t") -> PartitionKey:
    return (topic, partition)


def answer(partition: int, records: int = 0, hw: int = 10, log_start: int = 0, error: int = 0,
           topic: str = "t") -> PartitionAnswer:
    return PartitionAnswer(key(partition, topic), f"req-{partition}", records, hw, log_start, error)


def full(cache: FetchSessionCache, now: int, partitions: list[int], session_id: int = 0,
         privileged: bool = False) -> tuple[FetchContext, int]:
    """A full request over `partitions`, answered with no records; returns its context and session id."""
    context = new_context(cache, now, session_id, INITIAL_EPOCH, False, privileged,
                          [(key(p), f"req-{p}") for p in partitions], [])
    assert context.kind is ContextKind.FULL
    outcome = answer_session(context, cache, now, [answer(p) for p in partitions])
    return context, outcome.session_id


def incremental(cache: FetchSessionCache, now: int, session_id: int, epoch: int, add: list[int] | None = None,
                forget: list[int] | None = None, uses_topic_ids: bool = False) -> FetchContext:
    return new_context(cache, now, session_id, epoch, uses_topic_ids, False,
                       [(key(p), f"req2-{p}") for p in add or []], [key(p) for p in forget or []])


def test_epochs_count_up_and_wrap_to_one() -> None:
    assert next_epoch(INITIAL_EPOCH) == 1
    assert next_epoch(41) == 42
    assert next_epoch(2**31 - 1) == 1
    assert next_epoch(FINAL_EPOCH) == FINAL_EPOCH


def test_full_request_creates_a_session_at_epoch_one_holding_every_partition() -> None:
    clock = ManualClock()
    cache = FetchSessionCache(10, rng=random.Random(1))
    _, session_id = full(cache, clock.now_ms(), [0, 1, 2])
    session = cache.get(session_id)
    assert session_id != INVALID_SESSION_ID and session is not None
    assert session.epoch == 1 and list(session.partitions) == [key(0), key(1), key(2)]
    assert cache.total_partitions == 3 and cache.created == 1


def test_final_epoch_is_sessionless_and_closes_the_session_it_names() -> None:
    cache = FetchSessionCache(10)
    _, session_id = full(cache, 0, [0])
    context = new_context(cache, 0, session_id, FINAL_EPOCH, False, False, [(key(0), "r")], [])
    assert context.kind is ContextKind.SESSIONLESS and cache.get(session_id) is None
    outcome = answer_session(context, cache, 0, [answer(0)])
    assert outcome.session_id == INVALID_SESSION_ID and outcome.included == [0] and len(cache) == 0


def test_full_request_naming_a_session_closes_it_and_opens_another() -> None:
    cache = FetchSessionCache(10)
    _, first = full(cache, 0, [0])
    _, second = full(cache, 0, [0], session_id=first)
    assert cache.get(first) is None and cache.get(second) is not None and second != first


def test_incremental_request_errors() -> None:
    cache = FetchSessionCache(10)
    _, session_id = full(cache, 0, [0])
    assert incremental(cache, 0, session_id + 1, 1).error == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    assert incremental(cache, 0, INVALID_SESSION_ID, 1).error == ErrorCode.FETCH_SESSION_ID_NOT_FOUND
    assert incremental(cache, 0, session_id, 2).error == ErrorCode.INVALID_FETCH_SESSION_EPOCH
    assert incremental(cache, 0, session_id, 1, uses_topic_ids=True).error == ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR
    # none of these moved the session on
    assert incremental(cache, 0, session_id, 1).kind is ContextKind.INCREMENTAL
    assert incremental(cache, 0, session_id, 1).error == ErrorCode.INVALID_FETCH_SESSION_EPOCH
    error = incremental(cache, 0, session_id, 1)
    assert answer_session(error, cache, 0, []).session_id == INVALID_SESSION_ID


def test_incremental_request_adds_updates_and_forgets_partitions() -> None:
    cache = FetchSessionCache(10)
    _, session_id = full(cache, 0, [0, 1])
    context = incremental(cache, 5, session_id, 1, add=[1, 2], forget=[0])
    assert context.kind is ContextKind.INCREMENTAL
    assert [c.key for c in context.partitions] == [key(1), key(2)]
    assert [c.request for c in context.partitions] == ["req2-1", "req2-2"]
    session = cache.get(session_id)
    assert session is not None and session.epoch == 2 and session.last_used_ms == 5
    assert (cache.partitions_added, cache.partitions_forgotten, cache.total_partitions) == (1, 1, 2)


def test_forgetting_every_partition_ends_the_session() -> None:
    cache = FetchSessionCache(10)
    _, session_id = full(cache, 0, [0, 1])
    context = incremental(cache, 0, session_id, 1, forget=[0, 1])
    assert context.kind is ContextKind.SESSIONLESS and len(cache) == 0 and cache.total_partitions == 0


def test_incremental_answer_holds_only_what_changed() -> None:
    cache = FetchSessionCache(10)
    _, session_id = full(cache, 0, [0, 1, 2, 3, 4])
    context = incremental(cache, 0, session_id, 1, add=[5])
    answers = [answer(0), answer(1, records=100), answer(2, hw=11), answer(3, log_start=3),
               answer(4, error=ErrorCode.NOT_LEADER_OR_FOLLOWER), answer(5)]
    outcome = answer_session(context, cache, 0, answers)
    # unchanged 0 left out; new records, a new high watermark, a new log start, an error, a new partition kept
    assert outcome.error == ErrorCode.NONE and outcome.session_id == session_id
    assert outcome.included == [1, 2, 3, 4, 5]
    # the next time only what changed since: the errored partition comes back once its error is gone
    context = incremental(cache, 0, session_id, 2)
    answers = [answer(0), answer(1), answer(2, hw=11), answer(3, log_start=3), answer(4), answer(5)]
    assert answer_session(context, cache, 0, answers).included == [4]


def test_partitions_that_returned_records_move_to_the_back_of_the_fetch_order() -> None:
    cache = FetchSessionCache(10)
    _, session_id = full(cache, 0, [0, 1, 2])
    context = incremental(cache, 0, session_id, 1)
    answer_session(context, cache, 0, [answer(0, records=5), answer(1), answer(2)])
    session = cache.get(session_id)
    assert session is not None and list(session.partitions) == [key(1), key(2), key(0)]


def test_answer_after_another_request_moved_the_epoch_is_invalid_epoch() -> None:
    cache = FetchSessionCache(10)
    _, session_id = full(cache, 0, [0])
    first = incremental(cache, 0, session_id, 1)
    second = incremental(cache, 0, session_id, 2)
    outcome = answer_session(first, cache, 0, [answer(0)])
    assert (outcome.error, outcome.session_id, outcome.included) == \
        (ErrorCode.INVALID_FETCH_SESSION_EPOCH, session_id, [])
    assert answer_session(second, cache, 0, [answer(0)]).error == ErrorCode.NONE


def test_full_cache_creates_no_session_while_every_session_is_young() -> None:
    cache = FetchSessionCache(2)
    full(cache, 0, [0])
    full(cache, 0, [0])
    _, session_id = full(cache, 1000, [0, 1, 2, 3])
    assert session_id == INVALID_SESSION_ID and len(cache) == 2 and cache.evictions == 0


def test_a_stale_session_is_evicted_first() -> None:
    cache = FetchSessionCache(2)
    _, old = full(cache, 0, [0, 1, 2])
    _, used = full(cache, 0, [0])
    incremental(cache, 60_000, used, 1)
    _, new = full(cache, EVICTION_MS + 1, [0])
    assert new != INVALID_SESSION_ID and cache.get(old) is None and cache.get(used) is not None
    assert cache.evictions == 1


def test_a_bigger_session_evicts_the_smallest_old_one_not_an_equal_one() -> None:
    clock = ManualClock(0)
    cache = FetchSessionCache(2)
    _, small = full(cache, 0, [0])
    _, large = full(cache, 0, [0, 1, 2])
    # both used recently but created long ago: evictable by all
    clock.advance(EVICTION_MS + 1)
    incremental(cache, clock.now_ms(), small, 1)
    incremental(cache, clock.now_ms(), large, 1)
    _, same = full(cache, clock.now_ms(), [5])
    assert same == INVALID_SESSION_ID
    _, bigger = full(cache, clock.now_ms(), [5, 6])
    assert bigger != INVALID_SESSION_ID and cache.get(small) is None and cache.get(large) is not None


def test_a_privileged_session_evicts_a_young_unprivileged_one_but_not_a_young_privileged_one() -> None:
    cache = FetchSessionCache(1)
    _, consumer = full(cache, 0, [0, 1, 2])
    _, follower = full(cache, 10, [0], privileged=True)
    assert follower != INVALID_SESSION_ID and cache.get(consumer) is None
    _, other = full(cache, 20, [0, 1, 2, 3], privileged=True)
    assert other == INVALID_SESSION_ID and cache.get(follower) is not None
    _, consumer = full(cache, 30, [0, 1, 2, 3])
    assert consumer == INVALID_SESSION_ID


def test_a_full_session_caches_the_answered_high_watermark() -> None:
    cache = FetchSessionCache(1)
    context = new_context(cache, 0, 0, INITIAL_EPOCH, True, False, [(("id", 0), "r")], [])
    session_id = answer_session(context, cache, 0, [PartitionAnswer(("id", 0), "r", 0, 7, 2, 0)]).session_id
    session = cache.get(session_id)
    assert session is not None and session.uses_topic_ids
    cached: Any = session.partitions[("id", 0)]
    assert isinstance(cached, CachedPartition)
    assert (cached.request, cached.high_watermark, cached.local_log_start_offset) == ("r", 7, 2)
