"""ListOffsets (2): earliest, latest, by timestamp and max timestamp offsets.

Versions 1-11, and v0 only for release profiles before 4.0 (removed by KIP-896 in Kafka 4.0): v1 answers one
offset with its timestamp; v2 adds the isolation level; v4 the current leader epoch; v5 may answer
OFFSET_NOT_AVAILABLE; v6 is flexible; v7 lists by max timestamp (KIP-734); v8 by local log start offset
(KIP-405); v9 by last tiered offset (KIP-1005); v10 allows async remote lookups (KIP-1075); v11 by earliest
pending upload offset (KIP-1023). Mirrors KafkaApis.handleListOffsetRequest and ReplicaManager.fetchOffset.

With an authorizer: DESCRIBE on each topic, else its partitions get TOPIC_AUTHORIZATION_FAILED, before an
unknown topic is reported; refused topics come last in the answer, each entry as it was asked. Then a
partition named more than once in the request is INVALID_REQUEST, then a special timestamp the request's
version does not know is UNSUPPORTED_VERSION, both before the partition is looked up; each partition is
answered once, and each topic in one entry.

v0 is Kafka 3.9's handleListOffsetRequestV0: up to `max_num_offsets` offsets in `old_style_offsets`, newest
first.
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode
from ..protocol.messages import ListOffsetsRequest, ListOffsetsResponse
from .context import RequestContext

API_KEY = 2
MIN_VERSION, MAX_VERSION = 1, 11
PRE_KIP896_MIN_VERSION = 0  # releases before 4.0 served v0

LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5
EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6

# ReplicaManager.timestampMinSupportedVersion: the first version that may ask for each special timestamp
TIMESTAMP_MIN_SUPPORTED_VERSION = {
    EARLIEST_TIMESTAMP: 1,
    LATEST_TIMESTAMP: 1,
    MAX_TIMESTAMP: 7,
    EARLIEST_LOCAL_TIMESTAMP: 8,
    LATEST_TIERED_TIMESTAMP: 9,
    EARLIEST_PENDING_UPLOAD_TIMESTAMP: 11,
}

_Topic = ListOffsetsResponse.ListOffsetsTopicResponse
_Partition = _Topic.ListOffsetsPartitionResponse


def handle(request: ListOffsetsRequest, ctx: RequestContext) -> ListOffsetsResponse:
    if ctx.api_version == 0:
        return _handle_v0(request, ctx)
    cluster = ctx.cluster
    refused = []
    describable = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, (t.name for t in request.topics))
    duplicates = _duplicate_partitions(request)
    # ReplicaManager.fetchOffset keeps one status per topic partition and groups them by topic
    answered: dict[str, dict[int, Any]] = {}
    for topic_req in request.topics:
        if topic_req.name not in describable:
            refused.append(_Topic(name=topic_req.name, partitions=[
                _answer(p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for p in topic_req.partitions]))
            continue
        partitions = answered.setdefault(topic_req.name, {})
        for part_req in topic_req.partitions:
            index = part_req.partition_index
            if (topic_req.name, index) in duplicates:
                partitions[index] = _answer(index, ErrorCode.INVALID_REQUEST)
            elif _timestamp_unsupported(part_req.timestamp, ctx.api_version):
                partitions[index] = _answer(index, ErrorCode.UNSUPPORTED_VERSION)
            elif (partition := cluster.find_partition(topic_req.name, index)) is None:
                partitions[index] = _answer(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            else:
                log = partition.log
                if partition.leader_id != ctx.node.node_id:
                    partitions[index] = _answer(index, ErrorCode.NOT_LEADER_OR_FOLLOWER)
                elif part_req.current_leader_epoch > log.leader_epoch:
                    partitions[index] = _answer(index, ErrorCode.UNKNOWN_LEADER_EPOCH)
                elif 0 <= part_req.current_leader_epoch < log.leader_epoch:
                    partitions[index] = _answer(index, ErrorCode.FENCED_LEADER_EPOCH)
                else:
                    stable = cluster.last_stable_offset(partition) if request.isolation_level == 1 else None
                    partitions[index] = _lookup(part_req, log, stable)
    topics = [_Topic(name=name, partitions=list(partitions.values())) for name, partitions in answered.items()]
    # KafkaApis.handleListOffsetRequest adds the refused topics after what ReplicaManager.fetchOffset answered
    return ListOffsetsResponse(throttle_time_ms=0, topics=topics + refused)


def _duplicate_partitions(request: ListOffsetsRequest) -> set[tuple[str, int]]:
    """The topic partitions named more than once, across all topic entries (ListOffsetsRequest's constructor)."""
    seen: set[tuple[str, int]] = set()
    duplicates: set[tuple[str, int]] = set()
    for topic_req in request.topics:
        for part_req in topic_req.partitions:
            key = (topic_req.name, part_req.partition_index)
            (duplicates if key in seen else seen).add(key)
    return duplicates


def _timestamp_unsupported(timestamp: int, version: int) -> bool:
    """ReplicaManager.isListOffsetsTimestampUnsupported: an unknown negative timestamp, or one newer than `version`."""
    if timestamp >= 0:
        return False
    first_version = TIMESTAMP_MIN_SUPPORTED_VERSION.get(timestamp)
    return first_version is None or version < first_version


def _answer(index: int, code: ErrorCode, timestamp: int = -1, offset: int = -1, epoch: int = -1) -> Any:
    return _Partition(partition_index=index, error_code=code, timestamp=timestamp, offset=offset, leader_epoch=epoch)


def _lookup(part_req: Any, log: Any, last_stable_offset: int | None) -> Any:
    """The answer for one partition; READ_COMMITTED passes the LSO, which then stands for "latest"."""
    index = part_req.partition_index
    target = part_req.timestamp
    epoch = log.leader_epoch
    if target == LATEST_TIMESTAMP:
        latest = log.high_watermark if last_stable_offset is None else last_stable_offset
        return _answer(index, ErrorCode.NONE, -1, latest, epoch)
    if target in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
        return _answer(index, ErrorCode.NONE, -1, log.log_start_offset, epoch)
    if target in (LATEST_TIERED_TIMESTAMP, EARLIEST_PENDING_UPLOAD_TIMESTAMP):
        # No tiered storage: nothing is or will be uploaded.
        return _answer(index, ErrorCode.NONE, -1, -1, -1)
    if target == MAX_TIMESTAMP:
        found = log.max_timestamp_offset()
        if found is None:
            return _answer(index, ErrorCode.NONE, -1, -1, -1)
        return _answer(index, ErrorCode.NONE, found[1], found[0], epoch)
    # every other negative timestamp was refused by _timestamp_unsupported
    found = log.offset_for_timestamp(target)
    if found is None:
        return _answer(index, ErrorCode.NONE, -1, -1, -1)
    return _answer(index, ErrorCode.NONE, found[1], found[0], epoch)


def _handle_v0(request: ListOffsetsRequest, ctx: RequestContext) -> ListOffsetsResponse:
    """KafkaApis.handleListOffsetRequestV0: DESCRIBE per topic, then UnifiedLog.legacyFetchOffsetsBefore."""
    describable = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, (t.name for t in request.topics))
    answered, refused = [], []
    for topic_req in request.topics:
        if topic_req.name not in describable:
            refused.append(_Topic(name=topic_req.name, partitions=[
                _old_style(p.partition_index, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for p in topic_req.partitions]))
            continue
        partitions = []
        for part_req in topic_req.partitions:
            index = part_req.partition_index
            partition = ctx.cluster.find_partition(topic_req.name, index)
            if partition is None:
                partitions.append(_old_style(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION))
            elif partition.leader_id != ctx.node.node_id:
                partitions.append(_old_style(index, ErrorCode.NOT_LEADER_OR_FOLLOWER))
            else:
                log = partition.log
                partitions.append(_old_style(index, ErrorCode.NONE, _legacy_offsets(
                    log, part_req.timestamp, part_req.max_num_offsets, request.replica_id,
                    ctx.cluster.clock.now_ms())))
        answered.append(_Topic(name=topic_req.name, partitions=partitions))
    return ListOffsetsResponse(throttle_time_ms=0, topics=answered + refused)


def _legacy_offsets(log: Any, timestamp: int, max_num_offsets: int, replica_id: int, now_ms: int) -> list[int]:
    """legacyFetchOffsetsBefore over our one segment: its start (last written now) and, when it holds
    anything, the log end offset at the present time; a consumer never sees past the high watermark."""
    points = [log.log_start_offset]
    if log.log_end_offset > log.log_start_offset:
        points.append(log.log_end_offset)
    if timestamp == LATEST_TIMESTAMP:
        start = len(points) - 1
    elif timestamp == EARLIEST_TIMESTAMP:
        start = 0
    else:
        # the one segment was last modified by the latest append: only "latest" is at or before a time
        # from the past; a timestamp from before every segment finds nothing
        start = len(points) - 1 if timestamp >= now_ms else -1
    offsets = sorted((points[i] for i in range(start, max(start - max_num_offsets, -1), -1)), reverse=True)
    if replica_id == -1:  # a consumer
        high_watermark = log.high_watermark
        if any(offset > high_watermark for offset in offsets):
            offsets = [high_watermark] + [offset for offset in offsets if offset <= high_watermark]
    return offsets


def _old_style(index: int, code: ErrorCode, offsets: list[int] | None = None) -> Any:
    return _Partition(partition_index=index, error_code=code, timestamp=-1, offset=-1, leader_epoch=-1,
                      old_style_offsets=offsets or [])
