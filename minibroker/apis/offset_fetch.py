"""OffsetFetch (9): committed offsets of one group, or from v8 of several.

Versions 1-10, and v0 only for release profiles before 4.0 (removed by KIP-896 in Kafka 4.0): v1 reads the
offsets topic where v0 read ZooKeeper; v2 allows a null topic list (all topics) and adds a top-level error; v3
the throttle time; v5 leader epochs; v6 is flexible; v7 RequireStable (UNSTABLE_OFFSET_COMMIT); v8 several
groups; v9 the member id and epoch of KIP-848 consumer groups; v10 names topics by id only. Mirrors
KafkaApis.handleOffsetFetchRequest and GroupCoordinatorService.fetchOffsets.

DESCRIBE on each group, else the group's answer is GROUP_AUTHORIZATION_FAILED (OffsetFetchResponse.groupError);
then DESCRIBE on each topic: a listed topic the caller may not describe is answered TOPIC_AUTHORIZATION_FAILED
on its partitions, after the others, and an "all partitions" request leaves such topics out without a word.
From v9 a member of a KIP-848 consumer group names itself and its epoch: UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH
or FENCED_MEMBER_EPOCH for the group otherwise (ConsumerGroup.validateOffsetFetch).

v0 read offsets from ZooKeeper (KafkaApis.handleOffsetFetchRequestFromZookeeper): a KRaft 3.9 broker, once the
group is authorized, answers it UNSUPPORTED_VERSION on every requested partition
(OffsetFetchRequest.getErrorResponse).
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..core.cluster import Cluster
from ..protocol.errors import ErrorCode
from ..protocol.messages import OffsetFetchRequest, OffsetFetchResponse
from .context import RequestContext
from .group_common import coordinator_error

API_KEY = 9
MIN_VERSION, MAX_VERSION = 1, 10
PRE_KIP896_MIN_VERSION = 0  # releases before 4.0 served v0

NO_OFFSET = -1
MEMBER_EPOCH_FROM = 9  # KIP-848: OffsetFetch names the member and its epoch

_Partition = OffsetFetchResponse.OffsetFetchResponseTopic.OffsetFetchResponsePartition  # v1-7
_Topics = OffsetFetchResponse.OffsetFetchResponseGroup.OffsetFetchResponseTopics  # v8+
_Partitions = _Topics.OffsetFetchResponsePartitions


def handle(request: OffsetFetchRequest, ctx: RequestContext) -> OffsetFetchResponse:
    version = ctx.api_version
    if version >= 8:
        return OffsetFetchResponse(throttle_time_ms=0,
                                   groups=[_group(ctx, g, request.require_stable) for g in request.groups])
    error = _group_error(ctx, request.group_id)
    if version == 0 and error is not ErrorCode.GROUP_AUTHORIZATION_FAILED:
        error = ErrorCode.UNSUPPORTED_VERSION  # metadataSupport.requireZkOrThrow
    describable = _describable(ctx, [t.name for t in request.topics or []])
    wanted = None if request.topics is None else [
        (t.name, i) for t in request.topics if t.name in describable for i in t.partition_indexes]
    rows = [] if error is not None else ctx.cluster.groups.fetch_offsets(request.group_id, wanted)
    require_stable = version >= 7 and request.require_stable
    visible = _visible(ctx, rows, wanted)
    by_topic: dict[str, list[Any]] = {}
    for topic, partition, committed in rows:
        if topic not in visible:
            continue
        unstable = require_stable and ctx.cluster.groups.has_pending_txn_offset(request.group_id, topic, partition)
        by_topic.setdefault(topic, []).append(_Partition(
            partition_index=partition, committed_offset=committed.offset if committed and not unstable else NO_OFFSET,
            committed_leader_epoch=committed.leader_epoch if committed else -1,
            metadata=committed.metadata if committed else "",
            error_code=ErrorCode.UNSTABLE_OFFSET_COMMIT if unstable else 0))
    topics = [OffsetFetchResponse.OffsetFetchResponseTopic(name=name, partitions=parts)
              for name, parts in by_topic.items()]
    if error is None:
        topics += [OffsetFetchResponse.OffsetFetchResponseTopic(name=t.name, partitions=[
            _Partition(partition_index=i, committed_offset=NO_OFFSET, committed_leader_epoch=-1, metadata="",
                       error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED) for i in t.partition_indexes])
                   for t in request.topics or [] if t.name not in describable]
    if error is not None and version < 2:
        # v1 has no top-level error: report it on every requested partition
        topics = [OffsetFetchResponse.OffsetFetchResponseTopic(name=t.name, partitions=[
            _Partition(partition_index=i, committed_offset=NO_OFFSET, metadata="", error_code=error)
            for i in t.partition_indexes]) for t in request.topics or []]
    return OffsetFetchResponse(throttle_time_ms=0, topics=topics, error_code=error or 0)


def _group_error(ctx: RequestContext, group_id: str) -> ErrorCode | None:
    """DESCRIBE on the group comes before the coordinator is asked."""
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED
    return coordinator_error(ctx, group_id)


def _describable(ctx: RequestContext, names: list[str]) -> set[str]:
    """The listed topics the caller may describe (fetchOffsetsForGroup's partitionSeqByAuthorized)."""
    return ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, names)


def _visible(ctx: RequestContext, rows: list[Any], wanted: list[Any] | None) -> set[str]:
    """The topics of `rows` to answer: all that were listed, only the describable ones of "all partitions"
    (fetchAllOffsetsForGroup)."""
    topics = {topic for topic, _, _ in rows}
    return topics if wanted is not None else ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, topics)


def _group(ctx: RequestContext, wanted_group: Any, require_stable: bool) -> Any:
    cluster: Cluster = ctx.cluster
    version = ctx.api_version
    error = _group_error(ctx, wanted_group.group_id)
    if error is None and version >= MEMBER_EPOCH_FROM:
        checked = cluster.groups.validate_offset_fetch(wanted_group.group_id, wanted_group.member_id,
                                                       wanted_group.member_epoch)
        error = checked if checked is not ErrorCode.NONE else None
    names_by_id = {}
    wanted = None
    refused = []
    if wanted_group.topics is not None:
        wanted = []
        requested = []
        for topic in wanted_group.topics:
            name = topic.name if version < 10 else getattr(cluster.topic_by_id(topic.topic_id), "name", None)
            requested.append((topic, name))
        # v10: an unknown topic id has no name to authorize and is answered UNKNOWN_TOPIC_ID
        describable = _describable(ctx, [name for _, name in requested if name is not None])
        for topic, name in requested:
            if name is not None and name not in describable:
                refused.append(topic)
                continue
            names_by_id[topic.topic_id if version >= 10 else name] = name
            wanted += [(name or "", i) for i in topic.partition_indexes]
    rows = [] if error is not None else cluster.groups.fetch_offsets(wanted_group.group_id, wanted)
    visible = _visible(ctx, rows, wanted)
    by_topic: dict[str, list[Any]] = {}
    for topic, partition, committed in rows:
        if topic not in visible:
            continue
        unstable = require_stable and cluster.groups.has_pending_txn_offset(
            wanted_group.group_id, topic, partition)
        code = 0 if (topic or wanted is None) else ErrorCode.UNKNOWN_TOPIC_ID
        by_topic.setdefault(topic, []).append(_Partitions(
            partition_index=partition,
            committed_offset=committed.offset if committed and not unstable else NO_OFFSET,
            committed_leader_epoch=committed.leader_epoch if committed else -1,
            metadata=committed.metadata if committed else "",
            error_code=ErrorCode.UNSTABLE_OFFSET_COMMIT if unstable else code))
    topics = []
    for name, partitions in by_topic.items():
        entry = _Topics(partitions=partitions)
        if version >= 10:
            known = cluster.topic(name)
            entry.topic_id = known.topic_id if known is not None else next(
                (tid for tid, n in names_by_id.items() if n is None), None)
        else:
            entry.name = name
        topics.append(entry)
    if error is None:
        # fetchOffsetsForGroup: the refused topics follow the coordinator's answer
        for topic in refused:
            entry = _Topics(partitions=[
                _Partitions(partition_index=i, committed_offset=NO_OFFSET, committed_leader_epoch=-1, metadata="",
                            error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED) for i in topic.partition_indexes])
            if version >= 10:
                entry.topic_id = topic.topic_id
            else:
                entry.name = topic.name
            topics.append(entry)
    return OffsetFetchResponse.OffsetFetchResponseGroup(group_id=wanted_group.group_id, topics=topics,
                                                        error_code=error or 0)
