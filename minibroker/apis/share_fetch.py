"""ShareFetch (78): acquire records of share partitions for a share-group member, acknowledging others (KIP-932).

Versions 1-2 (Kafka 4.1+; version 0 was 4.0's early access): v2 adds ShareAcquireMode and IsRenewAck
(KIP-1206, KIP-1222). Mirrors KafkaApis.handleShareFetchRequest, SharePartitionManager's share sessions
(core/share_sessions.py) and SharePartition.acquire (core/share_partition.py).

UNSUPPORTED_VERSION unless `share.version` is finalized at 1 or more; READ on the group, else
GROUP_AUTHORIZATION_FAILED; READ on each topic, else that partition's TOPIC_AUTHORIZATION_FAILED. Epoch 0 opens a
share session (acknowledgements there are INVALID_REQUEST), -1 acknowledges and closes it, releasing what the
member holds; another epoch must be the session's next (SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH).
Acknowledgements piggy-backed on the request are applied first. Each session partition then acquires up to
MaxRecords records under `share.record.lock.duration.ms`, rounded up to the end of a stored batch unless v2 asks for
the record-limit acquire mode; the answer carries the whole stored batches holding
them and the acquired ranges with their delivery counts. With nothing to answer, the request waits up to
MaxWaitMs for an append or for records of its share partitions coming back (Cluster.tick expires locks).

With IsRenewAck (v2, KIP-1222) the request only acknowledges, renewals included (share_acknowledge.py): MaxBytes,
MinBytes, MaxRecords and MaxWaitMs must be 0 (else INVALID_REQUEST for the whole request, the epoch not used up),
nothing is acquired and only the partitions acknowledged are answered, without records.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..core.cluster import Partition
from ..core.pending import Pending
from ..core.share_partition import AcquiredRange
from ..core.share_sessions import FINAL_EPOCH, INITIAL_EPOCH, ShareSession
from ..protocol import records
from ..protocol.errors import ErrorCode
from ..protocol.messages import ShareFetchRequest, ShareFetchResponse
from .context import RequestContext
from .share_acknowledge import acknowledge_batches, renewing
from .share_common import (
    fetch_upper_bound,
    is_read_committed,
    share_enabled,
    share_state,
)

API_KEY = 78
MIN_VERSION, MAX_VERSION = 1, 2

ACQUIRE_MODE_FROM = 2  # ShareAcquireMode (KIP-1206)
RECORD_LIMIT = 1  # ShareAcquireMode: at most MaxRecords; 0, batch-optimized, acquires whole batches
DEFAULT_MAX_RECORDS = 500  # the Java share consumer's max.poll.records, for a request that names none

_Topic = ShareFetchResponse.ShareFetchableTopicResponse
_Partition = _Topic.PartitionData


def _answer(code: ErrorCode, topics: list[Any], lock_ms: int = 0) -> ShareFetchResponse:
    return ShareFetchResponse(throttle_time_ms=0, error_code=code, error_message=None,
                              acquisition_lock_timeout_ms=lock_ms, responses=topics, node_endpoints=[])


# CurrentLeader as Kafka 4.3.1 answers it: filled only for NOT_LEADER_OR_FOLLOWER (never answered here), else
# LeaderIdAndEpoch's defaults, whatever node leads the partition
DEFAULT_LEADER = (0, 0)


def _partition_answer(index: int, error: ErrorCode = ErrorCode.NONE,
                      ack_error: ErrorCode = ErrorCode.NONE, ack_message: str | None = None,
                      records: bytes = b"", acquired: list[Any] | None = None) -> Any:
    return _Partition(partition_index=index, error_code=error, error_message=None, acknowledge_error_code=ack_error,
                      acknowledge_error_message=ack_message,
                      current_leader=_Partition.LeaderIdAndEpoch(leader_id=DEFAULT_LEADER[0],
                                                                 leader_epoch=DEFAULT_LEADER[1]),
                      records=records, acquired_records=acquired or [])


def handle(request: ShareFetchRequest, ctx: RequestContext) -> ShareFetchResponse | Pending:
    cluster = ctx.cluster
    if not share_enabled(cluster):
        return _answer(ErrorCode.UNSUPPORTED_VERSION, [])
    group_id, member_id = request.group_id or "", request.member_id or ""
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, group_id):
        return _answer(ErrorCode.GROUP_AUTHORIZATION_FAILED, [])
    state = share_state(cluster)
    epoch = request.share_session_epoch
    has_acks = any(p.acknowledgement_batches for t in request.topics for p in t.partitions)
    renew = renewing(ctx, request)
    if epoch == INITIAL_EPOCH and has_acks:
        return _answer(ErrorCode.INVALID_REQUEST, [])
    if renew and (request.max_bytes or request.min_bytes or request.max_records or request.max_wait_ms):
        # KafkaApis: "maxBytes must be set to 0, ... if isRenewAck is true."; no share fetch context is made
        return _answer(ErrorCode.INVALID_REQUEST, [])
    session: ShareSession | None
    if epoch == INITIAL_EPOCH:
        session, replaced = state.sessions.open(group_id, member_id)
        if session is None:
            return _answer(ErrorCode.SHARE_SESSION_LIMIT_REACHED, [])
        if replaced is not None:
            state.coordinator.release_member(group_id, member_id)
    else:
        error = state.sessions.check(group_id, member_id, epoch)
        if error is not ErrorCode.NONE:
            return _answer(error, [])
        session = state.sessions.get(group_id, member_id)
    lock_ms = state.coordinator.config_int(group_id, "share.record.lock.duration.ms")
    # (topic id, partition) -> answer fields decided before acquiring: acknowledgement outcome, errors
    reported: dict[tuple[Any, int], dict[str, Any]] = {}
    for topic in request.topics:
        found = cluster.topic_by_id(topic.topic_id)
        for part in topic.partitions:
            key = (topic.topic_id, part.partition_index)
            if part.acknowledgement_batches:
                batches = [(b.first_offset, b.last_offset, list(b.acknowledge_types))
                           for b in part.acknowledgement_batches]
                code, message, _ = acknowledge_batches(ctx, group_id, member_id, topic.topic_id,
                                                       part.partition_index, batches, renew)
                reported[key] = {"ack_error": code, "ack_message": message}
            if found is None:
                reported.setdefault(key, {})["error"] = ErrorCode.UNKNOWN_TOPIC_ID
            elif not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, found.name):
                reported.setdefault(key, {})["error"] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif cluster.find_partition(found.name, part.partition_index) is None:
                reported.setdefault(key, {})["error"] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            elif session is not None and epoch != FINAL_EPOCH:
                tp = (found.name, part.partition_index)
                if tp not in session.partitions:
                    session.partitions[tp] = None
                    if not renew:
                        reported.setdefault(key, {})  # a partition new to the session is always answered
    if session is not None:
        for forgotten in request.forgotten_topics_data:
            found = cluster.topic_by_id(forgotten.topic_id)
            if found is not None:
                for index in forgotten.partitions:
                    session.partitions.pop((found.name, index), None)
    if epoch == FINAL_EPOCH:
        state.sessions.close(group_id, member_id)
        state.coordinator.release_member(group_id, member_id)
        return _answer(ErrorCode.NONE, _reported_topics(reported, {}), lock_ms)
    assert session is not None
    if epoch != INITIAL_EPOCH:
        state.sessions.advance(session)
    if renew:  # acknowledgements only: Kafka 4.3.1 acquires nothing and answers no records
        return _answer(ErrorCode.NONE, _reported_topics(reported, {}), lock_ms)
    max_records = request.max_records if request.max_records > 0 else DEFAULT_MAX_RECORDS
    whole_batches = ctx.api_version < ACQUIRE_MODE_FROM or request.share_acquire_mode != RECORD_LIMIT
    acquired = _acquire(ctx, group_id, member_id, session, max_records, lock_ms, whole_batches)
    if acquired or reported or request.max_wait_ms <= 0:
        return _answer(ErrorCode.NONE, _reported_topics(reported, acquired), lock_ms)

    def build() -> ShareFetchResponse:
        later = _acquire(ctx, group_id, member_id, session, max_records, lock_ms, whole_batches)
        return _answer(ErrorCode.NONE, _reported_topics({}, later), lock_ms)

    pending = Pending(build, cluster.clock.now_ms() + request.max_wait_ms)
    for name, index in session.partitions:
        partition = cluster.find_partition(name, index)
        if partition is not None:
            pending.on_finish(partition.log.watch(lambda _appended: pending.complete()))
        # records released (a lock run out, a member gone, a RELEASE) wake it too, as Kafka's delayed share fetch
        share_partition = state.coordinator.initialized_share_partition(group_id, name, index)
        if share_partition is not None:
            pending.on_finish(share_partition.watch(pending.complete))
    return pending


def _acquire(ctx: RequestContext, group_id: str, member_id: str, session: ShareSession, max_records: int,
             lock_ms: int, whole_batches: bool) -> dict[tuple[Any, int], dict[str, Any]]:
    """Acquire records of the session's partitions for the member, oldest partition first, up to `max_records`
    (to the end of the last stored batch reached when `whole_batches`)."""
    cluster = ctx.cluster
    coordinator = share_state(cluster).coordinator
    now = cluster.clock.now_ms()
    out: dict[tuple[Any, int], dict[str, Any]] = {}
    for name, index in list(session.partitions):
        if max_records <= 0:
            break
        partition = cluster.find_partition(name, index)
        if partition is None:
            continue
        share_partition = coordinator.initialized_share_partition(group_id, name, index)
        if share_partition is None:
            continue
        upper = fetch_upper_bound(cluster, group_id, partition)
        ranges = share_partition.acquire(member_id, partition.log.log_start_offset, upper, max_records, lock_ms, now,
                                         _batch_last_offset(partition) if whole_batches else None)
        if not ranges:
            continue
        max_records -= sum(r.last_offset - r.first_offset + 1 for r in ranges)
        first, last = ranges[0].first_offset, ranges[-1].last_offset
        batches = partition.log.read(first, 2**31 - 1, True, last + 1)
        if is_read_committed(cluster, group_id):
            aborted = _aborted_offsets(partition, batches, first, last)
            if aborted:
                share_partition.archive_acquired(member_id, aborted)
                ranges = _without(ranges, aborted)
                if not ranges:
                    continue
        out[(partition.topic.topic_id, index)] = {
            "records": b"".join(bytes(b) for b in batches),
            "acquired": [_Partition.AcquiredRecords(first_offset=r.first_offset, last_offset=r.last_offset,
                                                    delivery_count=r.delivery_count) for r in ranges]}
    return out


def _aborted_offsets(partition: Partition, batches: list[Any], first: int, last: int) -> set[int]:
    """The offsets in [first, last] of records in aborted transactions (read_committed never delivers them)."""
    txns = partition.producer_state.aborted_between(first, last + 1)
    if not txns:
        return set()
    out: set[int] = set()
    for batch in batches:
        header = records.read_header(batch)
        if not header.is_transactional or header.is_control:
            continue
        base, end = header.base_offset, header.base_offset + header.last_offset_delta
        if any(t.producer_id == header.producer_id and t.first_offset <= base <= t.last_offset for t in txns):
            out.update(range(max(base, first), min(end, last) + 1))
    return out


def _without(ranges: list[AcquiredRange], offsets: set[int]) -> list[AcquiredRange]:
    """`ranges` with `offsets` taken out (split where needed)."""
    out: list[AcquiredRange] = []
    for r in ranges:
        start = None
        for offset in range(r.first_offset, r.last_offset + 2):
            keep = offset <= r.last_offset and offset not in offsets
            if keep and start is None:
                start = offset
            elif not keep and start is not None:
                out.append(AcquiredRange(start, offset - 1, r.delivery_count))
                start = None
    return out


def _batch_last_offset(partition: Partition) -> Callable[[int], int]:
    """The last offset of the stored batch holding an offset (the offset itself past the log's end)."""
    last_offsets = partition.log.last_offsets

    def last_of(offset: int) -> int:
        index = bisect.bisect_left(last_offsets, offset)
        return last_offsets[index] if index < len(last_offsets) else offset

    return last_of


def _reported_topics(reported: dict[tuple[Any, int], dict[str, Any]],
                     acquired: dict[tuple[Any, int], dict[str, Any]]) -> list[Any]:
    """The answer's topics: every partition with acknowledgements, errors, news or records, by topic."""
    merged: dict[Any, dict[int, dict[str, Any]]] = {}
    for (topic_id, index), fields in list(reported.items()) + list(acquired.items()):
        merged.setdefault(topic_id, {}).setdefault(index, {}).update(fields)
    topics = []
    for topic_id, partitions in merged.items():
        parts = []
        for index, fields in partitions.items():
            parts.append(_partition_answer(index, **fields))
        topics.append(_Topic(topic_id=topic_id, partitions=parts))
    return topics
