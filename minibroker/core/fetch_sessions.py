"""Incremental fetch sessions (KIP-227), as Kafka's FetchSessionCache, FetchSession and FetchManager.

A session remembers, per partition, the fetch parameters last sent and the high watermark and log start
offset last answered, so an incremental request names only what changed and its answer holds only the
partitions with something new. Sans-IO: times are passed in (the cluster's clock), partitions are opaque
keys (a topic id for sessions of Fetch v13+, a topic name before) with the request's own partition entry.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..protocol.errors import ErrorCode

INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0  # a full request that asks for a new session
FINAL_EPOCH = -1  # a full request that wants no session (and closes the one it names)
# KafkaServer.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS: unused this long, a session is stale; younger
# than this, only a privileged session may evict it
EVICTION_MS = 120_000
_MAX_INT32 = 2**31 - 1

PartitionKey = tuple[Hashable, int]  # (topic id or topic name, partition index)


def next_epoch(epoch: int) -> int:
    """The session epoch after `epoch` (FetchMetadata.nextEpoch): it wraps to 1, never to 0."""
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == _MAX_INT32 else epoch + 1


class CachedPartition:
    """One partition of a session: the request parameters last sent and the answer last given."""

    __slots__ = ("key", "request", "high_watermark", "local_log_start_offset")

    def __init__(self, key: PartitionKey, request: Any, high_watermark: int = -1,
                 local_log_start_offset: int = -1) -> None:
        self.key = key
        self.request = request  # the request's partition entry (fetch offset, max bytes, leader epoch ...)
        self.high_watermark = high_watermark
        self.local_log_start_offset = local_log_start_offset

    def maybe_update_response_data(self, answer: PartitionAnswer) -> bool:
        """Whether an incremental answer must include this partition; remembers what it says."""
        must_respond = answer.records_size > 0
        if self.high_watermark != answer.high_watermark:
            must_respond = True
            self.high_watermark = answer.high_watermark
        if self.local_log_start_offset != answer.log_start_offset:
            must_respond = True
            self.local_log_start_offset = answer.log_start_offset
        if answer.preferred_read_replica >= 0:
            must_respond = True
        if answer.error_code != ErrorCode.NONE:
            # sent again once the error is gone
            self.high_watermark = -1
            must_respond = True
        if answer.diverging_epoch:
            must_respond = True
        return must_respond


@dataclass(slots=True)
class PartitionAnswer:
    """What a Fetch answer says of one partition, as far as a session cares."""

    key: PartitionKey
    request: Any
    records_size: int
    high_watermark: int
    log_start_offset: int
    error_code: int
    preferred_read_replica: int = -1
    diverging_epoch: bool = False


class FetchSession:
    """A session: its partitions in fetch order, its epoch, and its place in the cache's eviction order."""

    __slots__ = ("id", "privileged", "partitions", "uses_topic_ids", "creation_ms", "last_used_ms", "epoch",
                 "cached_size", "evictable_by_all", "evictable_by_privileged")

    def __init__(self, session_id: int, privileged: bool, partitions: dict[PartitionKey, CachedPartition],
                 uses_topic_ids: bool, creation_ms: int, epoch: int) -> None:
        self.id = session_id
        self.privileged = privileged  # created by a follower
        self.partitions = partitions  # insertion order is fetch order
        self.uses_topic_ids = uses_topic_ids
        self.creation_ms = creation_ms
        self.last_used_ms = creation_ms
        self.epoch = epoch  # the epoch the next incremental request must carry
        self.cached_size = -1  # the size the cache last accounted, -1 when not in it
        self.evictable_by_all = False
        self.evictable_by_privileged = False

    @property
    def size(self) -> int:
        return len(self.partitions)

    def evictable_key(self) -> tuple[bool, int, int]:
        """Kafka's EvictableKey: the least valuable session sorts first."""
        return (self.privileged, self.cached_size, self.id)

    def update(self, fetch_data: Iterable[tuple[PartitionKey, Any]],
               to_forget: Iterable[PartitionKey]) -> tuple[list[PartitionKey], list[PartitionKey], list[PartitionKey]]:
        """Applies an incremental request: returns the partitions added, updated and removed."""
        added: list[PartitionKey] = []
        updated: list[PartitionKey] = []
        removed: list[PartitionKey] = []
        for key, request in fetch_data:
            cached = self.partitions.get(key)
            if cached is None:
                self.partitions[key] = CachedPartition(key, request)
                added.append(key)
            else:
                cached.request = request
                updated.append(key)
        for key in to_forget:
            if self.partitions.pop(key, None) is not None:
                removed.append(key)
        return added, updated, removed


class FetchSessionCache:
    """The sessions of one broker (node), bounded by `max.incremental.fetch.session.cache.slots`.

    A new session may evict an existing one when the cache is full (FetchSessionCache.tryEvict): first
    the least recently used one if it is stale (unused for more than `eviction_ms`); otherwise the least
    valuable evictable one, if the new one is worth more: privileged beats unprivileged, then more
    partitions beat fewer. Sessions younger than `eviction_ms` may be evicted only by privileged ones,
    and privileged ones only once they are that old.
    """

    def __init__(self, max_entries: int, eviction_ms: int = EVICTION_MS, rng: random.Random | None = None) -> None:
        self.max_entries = max_entries
        self.eviction_ms = eviction_ms
        self._rng = rng or random.Random()
        self.sessions: dict[int, FetchSession] = {}
        # counters, as Kafka's fetch session metrics
        self.total_partitions = 0
        self.evictions = 0
        self.created = 0
        self.incremental_fetches = 0
        self.partitions_added = 0  # by incremental requests
        self.partitions_forgotten = 0

    def __len__(self) -> int:
        return len(self.sessions)

    def get(self, session_id: int) -> FetchSession | None:
        return self.sessions.get(session_id)

    def new_session_id(self) -> int:
        """A random positive id not in use on this broker."""
        while True:
            session_id = self._rng.randrange(1, _MAX_INT32)
            if session_id not in self.sessions:
                return session_id

    def maybe_create_session(self, now_ms: int, privileged: bool, size: int, uses_topic_ids: bool,
                             create_partitions: Callable[[], dict[PartitionKey, CachedPartition]]) -> int:
        """A new session's id, or INVALID_SESSION_ID when the cache is full and nothing may be evicted."""
        if len(self.sessions) >= self.max_entries and not self._try_evict(privileged, size, now_ms):
            return INVALID_SESSION_ID
        session = FetchSession(self.new_session_id(), privileged, create_partitions(), uses_topic_ids, now_ms,
                               next_epoch(INITIAL_EPOCH))
        self.sessions[session.id] = session
        self.created += 1
        self.touch(session, now_ms)
        return session.id

    def _try_evict(self, privileged: bool, size: int, now_ms: int) -> bool:
        if not self.sessions:
            return False
        stale = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now_ms - stale.last_used_ms > self.eviction_ms:
            self.remove(stale)
            self.evictions += 1
            return True
        candidates = [s for s in self.sessions.values()
                      if (s.evictable_by_privileged if privileged else s.evictable_by_all)]
        if not candidates:
            return False
        least = min(candidates, key=FetchSession.evictable_key)
        # Kafka compares (privileged, size, 0) with the candidate's key: an equal size never evicts
        if (privileged, size, 0) < least.evictable_key():
            return False
        self.remove(least)
        self.evictions += 1
        return True

    def remove(self, session: FetchSession | int) -> FetchSession | None:
        """Drops a session (by object or id); returns it, or None if it was not cached."""
        session_id = session if isinstance(session, int) else session.id
        removed = self.sessions.pop(session_id, None)
        if removed is not None:
            self.total_partitions -= max(removed.cached_size, 0)
            removed.cached_size = -1
        return removed

    def touch(self, session: FetchSession, now_ms: int) -> None:
        """Marks a session used now and re-files it for eviction at its current size."""
        session.last_used_ms = now_ms
        if session.cached_size != -1:
            self.total_partitions -= session.cached_size
        session.cached_size = session.size
        old = now_ms - session.creation_ms > self.eviction_ms
        session.evictable_by_privileged = not session.privileged or old
        session.evictable_by_all = old
        self.total_partitions += session.cached_size


class ContextKind(Enum):
    SESSIONLESS = "sessionless"
    FULL = "full"  # answer everything, then try to create a session
    INCREMENTAL = "incremental"
    ERROR = "error"  # a session error: answered at once with no partitions


@dataclass(slots=True)
class FetchContext:
    """How one Fetch request is served and answered (Kafka's FetchContext subclasses)."""

    kind: ContextKind
    error: ErrorCode = ErrorCode.NONE
    session: FetchSession | None = None
    request_epoch: int = INITIAL_EPOCH
    privileged: bool = False
    uses_topic_ids: bool = False
    partitions: list[CachedPartition] = field(default_factory=list)  # INCREMENTAL: what to fetch, in order


@dataclass(slots=True)
class SessionAnswer:
    """The session part of an answer: its error, its session id and which partitions it includes."""

    error: ErrorCode
    session_id: int
    included: list[int]  # indices into the answers given


def new_context(cache: FetchSessionCache, now_ms: int, session_id: int, epoch: int, uses_topic_ids: bool,
                privileged: bool, fetch_data: list[tuple[PartitionKey, Any]],
                to_forget: list[PartitionKey]) -> FetchContext:
    """FetchManager.newContext: the context for a request with this session id and epoch."""
    if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
        if session_id != INVALID_SESSION_ID:
            cache.remove(session_id)  # a full request closes the session it names
        kind = ContextKind.SESSIONLESS if epoch == FINAL_EPOCH else ContextKind.FULL
        return FetchContext(kind, request_epoch=epoch, privileged=privileged, uses_topic_ids=uses_topic_ids)
    session = cache.get(session_id)
    if session is None:
        return FetchContext(ContextKind.ERROR, ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
    if session.epoch != epoch:
        return FetchContext(ContextKind.ERROR, ErrorCode.INVALID_FETCH_SESSION_EPOCH)
    if session.uses_topic_ids != uses_topic_ids:
        return FetchContext(ContextKind.ERROR, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
    added, _updated, removed = session.update(fetch_data, to_forget)
    cache.incremental_fetches += 1
    cache.partitions_added += len(added)
    cache.partitions_forgotten += len(removed)
    if not session.partitions:
        # nothing left to fetch: the session ends and the request is answered sessionless
        cache.remove(session)
        return FetchContext(ContextKind.SESSIONLESS, request_epoch=epoch)
    cache.touch(session, now_ms)
    session.epoch = next_epoch(session.epoch)
    return FetchContext(ContextKind.INCREMENTAL, session=session, request_epoch=epoch,
                        uses_topic_ids=uses_topic_ids, partitions=list(session.partitions.values()))


def answer_session(context: FetchContext, cache: FetchSessionCache, now_ms: int,
                   answers: list[PartitionAnswer]) -> SessionAnswer:
    """updateAndGenerateResponseData: creates the session of a full request, or keeps of an incremental
    answer only the partitions that changed, updating the session as it goes."""
    if context.kind is ContextKind.ERROR:
        return SessionAnswer(context.error, INVALID_SESSION_ID, [])
    if context.kind is ContextKind.SESSIONLESS:
        return SessionAnswer(ErrorCode.NONE, INVALID_SESSION_ID, list(range(len(answers))))
    if context.kind is ContextKind.FULL:
        def create_partitions() -> dict[PartitionKey, CachedPartition]:
            return {a.key: CachedPartition(a.key, a.request, a.high_watermark, a.log_start_offset) for a in answers}

        session_id = cache.maybe_create_session(now_ms, context.privileged, len(answers), context.uses_topic_ids,
                                                create_partitions)
        return SessionAnswer(ErrorCode.NONE, session_id, list(range(len(answers))))
    session = context.session
    assert session is not None
    if session.epoch != next_epoch(context.request_epoch):
        # another request of this session was served in between (a duplicate request)
        return SessionAnswer(ErrorCode.INVALID_FETCH_SESSION_EPOCH, session.id, [])
    included: list[int] = []
    for index, answer in enumerate(answers):
        cached = session.partitions.get(answer.key)
        if cached is None or cached.maybe_update_response_data(answer):
            included.append(index)
            if cached is not None and answer.records_size > 0:
                # to the back of the fetch order, so the next fetch starts with the others (fairness)
                del session.partitions[answer.key]
                session.partitions[answer.key] = cached
    return SessionAnswer(ErrorCode.NONE, session.id, included)
