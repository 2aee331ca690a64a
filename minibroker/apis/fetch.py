"""Fetch (1): stored batches back to back, with a long poll woken by appends.

With an authorizer a consumer needs READ on each topic (TOPIC_AUTHORIZATION_FAILED otherwise, before an
unknown topic is reported), a follower CLUSTER_ACTION on the cluster (KafkaApis.handleFetchRequest).
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..core.cluster import Cluster, Partition
from ..core.pending import Pending
from ..protocol import records
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import FetchRequest, FetchResponse
from ..protocol.stored_batches import StoredBatches
from .context import RequestContext

API_KEY = 1
MIN_VERSION, MAX_VERSION = 4, 18

_TopicResponse = FetchResponse.FetchableTopicResponse
_PartitionData = _TopicResponse.PartitionData
_LeaderIdAndEpoch = _PartitionData.LeaderIdAndEpoch
_NodeEndpoint = FetchResponse.NodeEndpoint
_AbortedTransaction = _PartitionData.AbortedTransaction


def _resolve(cluster: Cluster, version: int, topic_req: Any) -> tuple[Any, ErrorCode]:
    if version >= 13:
        return cluster.topics_by_id.get(topic_req.topic_id), ErrorCode.UNKNOWN_TOPIC_ID
    return cluster.topics.get(topic_req.topic), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


def handle(request: FetchRequest, ctx: RequestContext) -> FetchResponse | Pending:
    cluster = ctx.cluster
    version = ctx.api_version
    if version >= 7 and request.session_id != 0:
        # We never hand out fetch sessions, so an incremental fetch names an unknown one.
        return FetchResponse(throttle_time_ms=0, error_code=ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
                             session_id=0, responses=[], node_endpoints=[])
    targets: list[tuple[Any, Any, Partition | None, ErrorCode]] = []
    readable = _readable_topics(request, ctx)
    for topic_req in request.topics:
        topic, missing = _resolve(cluster, version, topic_req)
        # KafkaApis.handleFetchRequest: an unknown topic id, then READ on the topic, then an unknown topic
        refused = readable is not None and (topic is not None or version < 13) and (
            topic.name if topic is not None else topic_req.topic) not in readable
        for part_req in topic_req.partitions:
            if refused:
                targets.append((topic_req, part_req, None, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            elif topic is None or not 0 <= part_req.partition < len(topic.partitions):
                targets.append((topic_req, part_req, None, missing))
            else:
                targets.append((topic_req, part_req, topic.partitions[part_req.partition], ErrorCode.NONE))

    def build() -> FetchResponse:
        return _build_response(request, ctx, targets)

    min_bytes = max(request.min_bytes, 1)
    ready = _bytes_ready(ctx, targets, request)
    if request.max_wait_ms <= 0 or ready >= min_bytes:
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

    for _topic_req, _part_req, partition, error in targets:
        if partition is not None and error == ErrorCode.NONE:
            pending.on_finish(partition.log.watch(on_append))
    return pending


READ_COMMITTED = 1


def _readable_topics(request: FetchRequest, ctx: RequestContext) -> set[str] | None:
    """The topics the caller may fetch from, None when all: READ on the topic for a consumer, CLUSTER_ACTION on
    the cluster for a follower (replica id >= 0), which may then fetch every topic."""
    if ctx.cluster.authorizer is None:
        return None
    state = request.replica_state if ctx.api_version >= 15 else None
    replica_id = state.replica_id if state is not None else request.replica_id
    if replica_id >= 0:
        return None if ctx.authorize_cluster(AclOperation.CLUSTER_ACTION) else set()
    if ctx.api_version >= 13:
        topics = (ctx.cluster.topics_by_id.get(t.topic_id) for t in request.topics)
        names = [topic.name for topic in topics if topic is not None]
    else:
        names = [t.topic for t in request.topics]
    return ctx.authorized_names(AclOperation.READ, ResourceType.TOPIC, names)


def _upper_bound(ctx: RequestContext, request: FetchRequest, partition: Partition) -> int | None:
    """READ_COMMITTED reads stop at the last stable offset; READ_UNCOMMITTED at the high watermark."""
    if request.isolation_level == READ_COMMITTED:
        return ctx.cluster.last_stable_offset(partition)
    return None


def _bytes_ready(ctx: RequestContext, targets: list[tuple[Any, Any, Partition | None, ErrorCode]],
                 request: FetchRequest) -> int:
    total = 0
    for _topic_req, part_req, partition, error in targets:
        if partition is None or error != ErrorCode.NONE:
            return 1 << 30  # an error answers at once
        if partition.leader_id != ctx.node.node_id:
            return 1 << 30
        log = partition.log
        if not log.log_start_offset <= part_req.fetch_offset <= log.log_end_offset:
            return 1 << 30
        total += log.bytes_after(part_req.fetch_offset, _upper_bound(ctx, request, partition))
    return total


def _build_response(request: FetchRequest, ctx: RequestContext,
                    targets: list[tuple[Any, Any, Partition | None, ErrorCode]]) -> FetchResponse:
    version = ctx.api_version
    remaining = request.max_bytes if version >= 3 else 2**31 - 1
    by_topic: dict[int, Any] = {}
    leaders: set[int] = set()
    for topic_req, part_req, partition, error in targets:
        data = _partition_data(ctx, request, part_req, partition, error, remaining,
                               min_one=remaining == request.max_bytes)
        remaining -= data.records.size if isinstance(data.records, StoredBatches) else len(data.records)
        if data.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER and partition is not None:
            leaders.add(partition.leader_id)
        key = id(topic_req)
        if key not in by_topic:
            if version >= 13:
                by_topic[key] = _TopicResponse(topic_id=topic_req.topic_id, partitions=[])
            else:
                by_topic[key] = _TopicResponse(topic=topic_req.topic, partitions=[])
        by_topic[key].partitions.append(data)
    node_endpoints = []
    if version >= 16:
        for node_id in sorted(leaders):
            node = ctx.cluster.node(node_id)
            if node is not None:
                host, port = ctx.address(node)
                node_endpoints.append(_NodeEndpoint(node_id=node.node_id, host=host, port=port, rack=node.rack))
    return FetchResponse(throttle_time_ms=0, error_code=0, session_id=0, responses=list(by_topic.values()),
                         node_endpoints=node_endpoints)


def _partition_data(ctx: RequestContext, request: FetchRequest, part_req: Any, partition: Partition | None,
                    error: ErrorCode, remaining: int, min_one: bool) -> Any:
    index = part_req.partition
    if partition is None:
        return _PartitionData(partition_index=index, error_code=error, high_watermark=-1, last_stable_offset=-1,
                              log_start_offset=-1, aborted_transactions=None, preferred_read_replica=-1,
                              records=b"")
    log = partition.log
    code = ErrorCode.NONE
    extra: dict[str, Any] = {}
    if partition.leader_id != ctx.node.node_id:
        code = ErrorCode.NOT_LEADER_OR_FOLLOWER
        if ctx.api_version >= 12:
            extra["current_leader"] = _LeaderIdAndEpoch(leader_id=partition.leader_id, leader_epoch=log.leader_epoch)
    elif part_req.current_leader_epoch > log.leader_epoch:
        code = ErrorCode.UNKNOWN_LEADER_EPOCH
    elif 0 <= part_req.current_leader_epoch < log.leader_epoch:
        code = ErrorCode.FENCED_LEADER_EPOCH
    batches = StoredBatches()
    upper_bound = _upper_bound(ctx, request, partition)
    aborted = None
    if code == ErrorCode.NONE:
        try:
            limit = max(min(part_req.partition_max_bytes, remaining), 0)
            batches = StoredBatches(log.read(part_req.fetch_offset, limit, min_one=min_one, upper_bound=upper_bound))
        except KafkaError as exc:
            code = exc.code
    if request.isolation_level == READ_COMMITTED:
        read_end = records.read_header(batches[-1]).last_offset + 1 if batches else part_req.fetch_offset
        aborted = [_AbortedTransaction(producer_id=txn.producer_id, first_offset=txn.first_offset)
                   for txn in partition.producer_state.aborted_between(part_req.fetch_offset, read_end)]
    return _PartitionData(
        partition_index=index, error_code=code, high_watermark=log.high_watermark,
        last_stable_offset=ctx.cluster.last_stable_offset(partition), log_start_offset=log.log_start_offset,
        aborted_transactions=aborted, preferred_read_replica=-1,
        # Kafka sends an empty record set, never null, even with an error (librdkafka refuses -1); stored
        # batches go to the socket as they are (stored_batch_holders)
        records=batches if batches else b"", **extra,
    )


def stored_batch_holders(response: FetchResponse) -> list[Any]:
    """The parts of a Fetch answer whose `records` are StoredBatches, for dispatch.encode_response."""
    return [partition for topic in response.responses for partition in topic.partitions]
