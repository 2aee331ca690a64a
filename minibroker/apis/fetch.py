"""Fetch (1): stored batches back to back, with a long poll woken by appends, and fetch sessions (v7+).

Versions 4-18, and v0-3 only for release profiles before 4.0 (removed by KIP-896 in Kafka 4.0): v4 adds the
isolation level and message format v2; v5 the log start offset; v7 fetch sessions (KIP-227); v9 the current
leader epoch (KIP-320); v10 zstd; v12 is flexible, with the last fetched epoch and the current leader; v13 names
topics by id (KIP-516); v15 the replica state (KIP-903); v16 node endpoints (KIP-951); v17 the directory id
(KIP-853); v18 the high watermark (KIP-1166). Mirrors KafkaApis.handleFetchRequest and FetchManager.

Sessions are Kafka's FetchManager (core/fetch_sessions.py), one cache per node: a full request (epoch 0) is
answered whole and opens a session, an incremental one names only the partitions it adds, changes or forgets
and is answered with only the partitions that changed; epoch -1 fetches sessionless. With an authorizer a
consumer needs READ on each topic (TOPIC_AUTHORIZATION_FAILED otherwise, before an unknown topic is reported),
a follower CLUSTER_ACTION on the cluster.

v0-3 have no isolation level (READ_UNCOMMITTED), log start offset, sessions or topic ids, and read message
formats the log no longer stores: as Kafka 3.9's maybeConvertFetchedData, the batches are down-converted, to
magic 0 for v0-1 and magic 1 for v2-3 (legacy_records.down_convert, LazyDownConversionRecords), into new bytes rather
than the stored ones. v0-2 have no request-wide max_bytes and no KIP-74 "at least one batch": a first batch
larger than partition_max_bytes gives nothing but an overflow entry. Below v10 a topic whose compression.type
is zstd, or a zstd batch to down-convert first, is UNSUPPORTED_COMPRESSION_TYPE; a consumer's v0-3 fetch of a
topic whose `message.downconversion.enable` (a 3.9 or 2.8 profile's config) is false, UNSUPPORTED_VERSION, as
in Kafka 3.9. Not modelled: the partial batch Kafka's log slice can end with, which it counts in the size it
announces.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, NamedTuple

from ..core.acls import AclOperation, ResourceType
from ..core.cluster import Cluster
from ..core.cluster_model import Partition
from ..core.fetch_sessions import (
    ContextKind,
    FetchContext,
    PartitionAnswer,
    answer_session,
    new_context,
)
from ..core.pending import Pending
from ..protocol import legacy_records, records
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import FetchRequest, FetchResponse
from ..protocol.stored_batches import StoredBatches
from .context import RequestContext

API_KEY = 1
MIN_VERSION, MAX_VERSION = 4, 18
PRE_KIP896_MIN_VERSION = 0  # releases before 4.0 served v0-3
MAGIC_V0_UNTIL = 1  # the last version answered in message format v0 (magic 1 after it, to DOWN_CONVERT_UNTIL)
DOWN_CONVERT_UNTIL = 3  # the last version that cannot read record batches (magic 2)
DOWN_CONVERSION = "message.downconversion.enable"
HARD_MAX_BYTES_UNTIL = 2  # FetchRequest.hardMaxBytesLimit: no request max_bytes, no first batch past the limit
ZSTD_FROM = 10  # older versions cannot fetch from a zstd topic (KIP-110)
SESSION_MIN_VERSION = 7  # the first version with session ids and epochs
TOPIC_ID_VERSION = 13  # topics by id, in requests, answers and sessions

_TopicResponse = FetchResponse.FetchableTopicResponse
_PartitionData = _TopicResponse.PartitionData
_LeaderIdAndEpoch = _PartitionData.LeaderIdAndEpoch
_NodeEndpoint = FetchResponse.NodeEndpoint
_AbortedTransaction = _PartitionData.AbortedTransaction

# (topic key: its id from v13, its name before; the request's partition entry; the partition; an error)
_Target = tuple[Hashable, Any, Partition | None, ErrorCode]

def _topic(cluster: Cluster, version: int, key: Any) -> Any:
    return cluster.topic_by_id(key) if version >= TOPIC_ID_VERSION else cluster.topic(key)


def _replica_id(request: FetchRequest, version: int) -> int:
    state = request.replica_state if version >= 15 else None
    return state.replica_id if state is not None else request.replica_id


def _context(request: FetchRequest, ctx: RequestContext) -> FetchContext | None:
    """The request's fetch context; None before v7, which has no sessions."""
    version = ctx.api_version
    if version < SESSION_MIN_VERSION:
        return None
    uses_ids = version >= TOPIC_ID_VERSION
    fetch_data = [((t.topic_id if uses_ids else t.topic, p.partition), p) for t in request.topics for p in t.partitions]
    to_forget = [(t.topic_id if uses_ids else t.topic, p) for t in request.forgotten_topics_data for p in t.partitions]
    return new_context(ctx.cluster.fetch_sessions(ctx.node.node_id), ctx.cluster.clock.now_ms(), request.session_id,
                       request.session_epoch, uses_ids, _replica_id(request, version) >= 0, fetch_data, to_forget)


def handle(request: FetchRequest, ctx: RequestContext) -> FetchResponse | Pending:
    cluster = ctx.cluster
    version = ctx.api_version
    context = _context(request, ctx)
    if context is not None and context.kind is ContextKind.ERROR:
        return FetchResponse(throttle_time_ms=0, error_code=context.error, session_id=0, responses=[],
                             node_endpoints=[])
    wanted: list[tuple[Any, Any]]  # (topic key, the partition's fetch parameters), in fetch order
    if context is not None and context.kind is ContextKind.INCREMENTAL:
        wanted = [(cached.key[0], cached.request) for cached in context.partitions]
    else:
        key_field = "topic_id" if version >= TOPIC_ID_VERSION else "topic"
        wanted = [(getattr(t, key_field), p) for t in request.topics for p in t.partitions]
    topics = {key: _topic(cluster, version, key) for key, _ in wanted}
    missing = ErrorCode.UNKNOWN_TOPIC_ID if version >= TOPIC_ID_VERSION else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    readable = _readable_topics(request, ctx, [t.name if t is not None else k for k, t in topics.items()
                                               if t is not None or version < TOPIC_ID_VERSION])
    targets: list[_Target] = []
    for key, part_req in wanted:
        topic = topics[key]
        # KafkaApis.handleFetchRequest: an unknown topic id, then READ on the topic, then an unknown topic
        refused = readable is not None and (topic is not None or version < TOPIC_ID_VERSION) and (
            topic.name if topic is not None else key) not in readable
        if refused:
            targets.append((key, part_req, None, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
        elif topic is None or (partition := topic.partition(part_req.partition)) is None:
            targets.append((key, part_req, None, missing))
        else:
            targets.append((key, part_req, partition, ErrorCode.NONE))

    def build() -> FetchResponse:
        return _build_response(request, ctx, targets, context)

    min_bytes = max(request.min_bytes, 1)
    ready = _bytes_ready(ctx, targets, request)
    if request.max_wait_ms <= 0 or ready >= min_bytes or not targets:
        return build()
    # Built when the server sends it (Pending), so it reads the log as it is then.
    pending = Pending(build, cluster.clock.now_ms() + request.max_wait_ms)
    arrived = [ready]

    def on_append(size: int) -> None:
        if request.isolation_level == READ_COMMITTED:
            # as Kafka's DelayedFetch: only bytes below the last stable offset count, so an append
            # inside an open transaction does not wake the fetch, and its commit marker does
            arrived[0] = _bytes_ready(ctx, targets, request)
        else:
            arrived[0] += size
        if arrived[0] >= min_bytes:
            pending.complete()

    for _key, _part_req, partition, error in targets:
        if partition is not None and error == ErrorCode.NONE:
            pending.on_finish(partition.log.watch(on_append))
    return pending


READ_COMMITTED = 1


def _readable_topics(request: FetchRequest, ctx: RequestContext, names: list[str]) -> set[str] | None:
    """Which of the fetched topics `names` the caller may read, None when all: READ on the topic for a
    consumer, CLUSTER_ACTION on the cluster for a follower (replica id >= 0), which may then fetch every topic."""
    if ctx.cluster.authorizer is None:
        return None
    if _replica_id(request, ctx.api_version) >= 0:
        return None if ctx.authorize_cluster(AclOperation.CLUSTER_ACTION) else set()
    return ctx.authorized_names(AclOperation.READ, ResourceType.TOPIC, names)


def _upper_bound(ctx: RequestContext, request: FetchRequest, partition: Partition) -> int | None:
    """READ_COMMITTED reads stop at the last stable offset; READ_UNCOMMITTED at the high watermark."""
    if request.isolation_level == READ_COMMITTED:
        return ctx.cluster.last_stable_offset(partition)
    return None


def _bytes_ready(ctx: RequestContext, targets: list[_Target], request: FetchRequest) -> int:
    total = 0
    for _key, part_req, partition, error in targets:
        if partition is None or error != ErrorCode.NONE:
            return 1 << 30  # an error answers at once
        if partition.leader_id != ctx.node.node_id:
            return 1 << 30
        log = partition.log
        if not log.log_start_offset <= part_req.fetch_offset <= log.log_end_offset:
            return 1 << 30
        total += log.bytes_after(part_req.fetch_offset, _upper_bound(ctx, request, partition))
    return total


class _Read(NamedTuple):
    """What was read of one partition, before it becomes an answer's PartitionData (only if it is sent)."""

    error_code: int
    high_watermark: int
    log_start_offset: int
    batches: StoredBatches
    size: int  # of the batches
    aborted: list[Any] | None
    current_leader: Any


def _build_response(request: FetchRequest, ctx: RequestContext, targets: list[_Target],
                    context: FetchContext | None) -> FetchResponse:
    version = ctx.api_version
    remaining = request.max_bytes if version >= 3 else 2**31 - 1
    reads: list[_Read] = []
    leaders: set[int] = set()
    for _key, part_req, partition, error in targets:
        min_one = version > HARD_MAX_BYTES_UNTIL and remaining == request.max_bytes
        read = _read(ctx, request, part_req, partition, error, remaining, min_one=min_one)
        remaining -= read.size
        if read.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER and partition is not None:
            leaders.add(partition.leader_id)
        reads.append(read)
    node_endpoints = []
    if version >= 16:
        for node_id in sorted(leaders):
            node = ctx.cluster.node(node_id)
            if node is not None:
                host, port = ctx.address(node)
                node_endpoints.append(_NodeEndpoint(node_id=node.node_id, host=host, port=port, rack=node.rack))
    session_id = 0
    included: list[int] | range = range(len(reads))
    if context is not None:
        # preferred_read_replica is always -1 here: every partition has one replica to read from
        answers = [PartitionAnswer((key, part_req.partition), part_req, read.size, read.high_watermark,
                                   read.log_start_offset, read.error_code)
                   for (key, part_req, _partition, _error), read in zip(targets, reads, strict=True)]
        outcome = answer_session(context, ctx.cluster.fetch_sessions(ctx.node.node_id), ctx.cluster.clock.now_ms(),
                                 answers)
        if outcome.error != ErrorCode.NONE:
            return FetchResponse(throttle_time_ms=0, error_code=outcome.error, session_id=outcome.session_id,
                                 responses=[], node_endpoints=node_endpoints)
        session_id, included = outcome.session_id, outcome.included
    # FetchResponse.toMessage: consecutive partitions of one topic share a topic entry
    responses: list[Any] = []
    last_key: Any = object()
    follower = _replica_id(request, version) >= 0
    for index in included:
        key, part_req, partition, _error = targets[index]
        if key != last_key:
            responses.append(_TopicResponse(topic_id=key, partitions=[]) if version >= TOPIC_ID_VERSION
                             else _TopicResponse(topic=key, partitions=[]))
            last_key = key
        responses[-1].partitions.append(_partition_data(ctx, key, part_req, partition, reads[index], follower))
    return FetchResponse(throttle_time_ms=0, error_code=0, session_id=session_id, responses=responses,
                         node_endpoints=node_endpoints)


def _read(ctx: RequestContext, request: FetchRequest, part_req: Any, partition: Partition | None,
          error: ErrorCode, remaining: int, min_one: bool) -> _Read:
    if partition is None:  # FetchResponse.partitionResponse: the generated default, an empty aborted list
        return _Read(error, -1, -1, StoredBatches(), 0, [], None)
    log = partition.log
    code = ErrorCode.NONE
    current_leader = None
    if partition.leader_id != ctx.node.node_id:
        code = ErrorCode.NOT_LEADER_OR_FOLLOWER
        if ctx.api_version >= 12:
            current_leader = _LeaderIdAndEpoch(leader_id=partition.leader_id, leader_epoch=log.leader_epoch)
    elif part_req.current_leader_epoch > log.leader_epoch:
        code = ErrorCode.UNKNOWN_LEADER_EPOCH
    elif 0 <= part_req.current_leader_epoch < log.leader_epoch:
        code = ErrorCode.FENCED_LEADER_EPOCH
    batches = StoredBatches()
    aborted = None
    if code == ErrorCode.NONE:
        try:
            limit = max(min(part_req.partition_max_bytes, remaining), 0)
            batches = StoredBatches(log.read(part_req.fetch_offset, limit, min_one=min_one,
                                             upper_bound=_upper_bound(ctx, request, partition)))
        except KafkaError as exc:
            code = exc.code
    if code != ErrorCode.NONE:
        # ReplicaManager.readFromLocalLog's result for a failed read: no offsets, no aborted transactions
        return _Read(code, -1, -1, batches, 0, None, current_leader)
    if request.isolation_level == READ_COMMITTED:
        read_end = records.read_header(batches[-1]).last_offset + 1 if batches else part_req.fetch_offset
        aborted = [_AbortedTransaction(producer_id=txn.producer_id, first_offset=txn.first_offset)
                   for txn in partition.producer_state.aborted_between(part_req.fetch_offset, read_end)]
    return _Read(code, log.high_watermark, log.log_start_offset, batches, batches.size, aborted, current_leader)


def _local_log(ctx: RequestContext, key: Any, part_req: Any) -> Partition | None:
    """The partition asked for, by topic name (before v13) and index, if this node holds its log
    (ReplicaManager.getLogConfig), whatever the answer's error."""
    if ctx.api_version >= TOPIC_ID_VERSION:
        return None
    return ctx.cluster.hosted_partition(ctx.node.node_id, key, part_req.partition)


def _partition_data(ctx: RequestContext, key: Any, part_req: Any, partition: Partition | None, read: _Read,
                    follower: bool) -> Any:
    version = ctx.api_version
    local = _local_log(ctx, key, part_req) if version < ZSTD_FROM else None
    if local is not None:
        # KafkaApis.maybeConvertFetchedData, after the session has seen the unconverted answer, for every partition
        # whose log this node holds, refused ones too: an error answer's empty records become an overflow entry,
        # and a zstd topic answers UNSUPPORTED_COMPRESSION_TYPE whatever the partition's error was
        if ctx.cluster.topic_config(local.topic, "compression.type") == "zstd":
            return _unsupported_compression(part_req)
        if version <= DOWN_CONVERT_UNTIL:
            if not follower and not _down_conversion_enabled(ctx, local.topic):
                # FetchResponse.partitionResponse(UNSUPPORTED_VERSION): null records, as Kafka 3.9.1 answers
                return _unsupported_compression(part_req, ErrorCode.UNSUPPORTED_VERSION, records=None)
            magic = legacy_records.MAGIC_V0 if version <= MAGIC_V0_UNTIL else legacy_records.MAGIC_V1
            try:
                converted = legacy_records.down_convert(read.batches, magic, part_req.fetch_offset)
            except KafkaError as exc:
                if exc.code != ErrorCode.UNSUPPORTED_COMPRESSION_TYPE:
                    raise
                return _unsupported_compression(part_req)
            return _PartitionData(partition_index=part_req.partition, error_code=read.error_code,
                                  high_watermark=read.high_watermark, records=converted)
    extra: dict[str, Any] = {} if read.current_leader is None else {"current_leader": read.current_leader}
    return _PartitionData(
        partition_index=part_req.partition, error_code=read.error_code, high_watermark=read.high_watermark,
        last_stable_offset=(ctx.cluster.last_stable_offset(partition)
                            if partition is not None and read.error_code == ErrorCode.NONE else -1),
        log_start_offset=read.log_start_offset, aborted_transactions=read.aborted, preferred_read_replica=-1,
        # Kafka sends an empty record set, never null, even with an error (librdkafka refuses -1); stored
        # batches go to the socket as they are (stored_batch_holders)
        records=read.batches if read.batches else b"", **extra,
    )


def _down_conversion_enabled(ctx: RequestContext, topic: Any) -> bool:
    """`message.downconversion.enable` of the topic, where the cluster's release has it (before Kafka 4.0)."""
    return (DOWN_CONVERSION not in ctx.cluster.config.topic_configs
            or bool(ctx.cluster.topic_config(topic, DOWN_CONVERSION)))


def _unsupported_compression(part_req: Any, code: ErrorCode = ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
                             records: bytes | None = b"") -> Any:
    """FetchResponse.partitionResponse(UNSUPPORTED_COMPRESSION_TYPE, or `code`): no offsets, no records (and an
    empty, not null, aborted transaction list: the generated default)."""
    return _PartitionData(partition_index=part_req.partition, error_code=code,
                          high_watermark=-1, last_stable_offset=-1, log_start_offset=-1, aborted_transactions=[],
                          preferred_read_replica=-1, records=records)


def stored_batch_holders(response: FetchResponse) -> list[Any]:
    """The parts of a Fetch answer whose `records` are StoredBatches, for dispatch.encode_response."""
    return [partition for topic in response.responses for partition in topic.partitions]
