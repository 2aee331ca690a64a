"""OffsetFetch (9): committed offsets of one group (v1-7) or several (v8+)."""

from __future__ import annotations

from typing import Any

from ..core.cluster import Cluster
from ..protocol.errors import ErrorCode
from ..protocol.messages import OffsetFetchRequest, OffsetFetchResponse
from .context import RequestContext
from .group_common import coordinator_error

API_KEY = 9
MIN_VERSION, MAX_VERSION = 1, 10

NO_OFFSET = -1


def handle(request: OffsetFetchRequest, ctx: RequestContext) -> OffsetFetchResponse:
    version = ctx.api_version
    if version >= 8:
        return OffsetFetchResponse(throttle_time_ms=0,
                                   groups=[_group(ctx, g, request.require_stable) for g in request.groups])
    error = coordinator_error(ctx, request.group_id)
    wanted = None if request.topics is None else [(t.name, i) for t in request.topics for i in t.partition_indexes]
    rows = [] if error is not None else ctx.cluster.groups.fetch_offsets(request.group_id, wanted)
    require_stable = version >= 7 and request.require_stable
    by_topic: dict[str, list[Any]] = {}
    for topic, partition, committed in rows:
        unstable = require_stable and ctx.cluster.groups.has_pending_txn_offset(request.group_id, topic, partition)
        by_topic.setdefault(topic, []).append(OffsetFetchResponse.OffsetFetchResponseTopic.OffsetFetchResponsePartition(
            partition_index=partition, committed_offset=committed.offset if committed and not unstable else NO_OFFSET,
            committed_leader_epoch=committed.leader_epoch if committed else -1,
            metadata=committed.metadata if committed else "",
            error_code=ErrorCode.UNSTABLE_OFFSET_COMMIT if unstable else 0))
    topics = [OffsetFetchResponse.OffsetFetchResponseTopic(name=name, partitions=parts)
              for name, parts in by_topic.items()]
    if error is not None and version < 2:
        # v1 has no top-level error: report it on every requested partition
        topics = [OffsetFetchResponse.OffsetFetchResponseTopic(name=t.name, partitions=[
            OffsetFetchResponse.OffsetFetchResponseTopic.OffsetFetchResponsePartition(
                partition_index=i, committed_offset=NO_OFFSET, metadata="", error_code=error)
            for i in t.partition_indexes]) for t in request.topics or []]
    return OffsetFetchResponse(throttle_time_ms=0, topics=topics, error_code=error or 0)


def _group(ctx: RequestContext, wanted_group: Any, require_stable: bool) -> Any:
    cluster: Cluster = ctx.cluster
    version = ctx.api_version
    error = coordinator_error(ctx, wanted_group.group_id)
    names_by_id = {}
    wanted = None
    if wanted_group.topics is not None:
        wanted = []
        for topic in wanted_group.topics:
            name = topic.name if version < 10 else getattr(cluster.topics_by_id.get(topic.topic_id), "name", None)
            names_by_id[topic.topic_id if version >= 10 else name] = name
            wanted += [(name or "", i) for i in topic.partition_indexes]
    rows = [] if error is not None else cluster.groups.fetch_offsets(wanted_group.group_id, wanted)
    by_topic: dict[str, list[Any]] = {}
    for topic, partition, committed in rows:
        unstable = require_stable and cluster.groups.has_pending_txn_offset(
            wanted_group.group_id, topic, partition)
        code = 0 if (topic or wanted is None) else ErrorCode.UNKNOWN_TOPIC_ID
        by_topic.setdefault(topic, []).append(
            OffsetFetchResponse.OffsetFetchResponseGroup.OffsetFetchResponseTopics.OffsetFetchResponsePartitions(
                partition_index=partition,
                committed_offset=committed.offset if committed and not unstable else NO_OFFSET,
                committed_leader_epoch=committed.leader_epoch if committed else -1,
                metadata=committed.metadata if committed else "",
                error_code=ErrorCode.UNSTABLE_OFFSET_COMMIT if unstable else code))
    topics = []
    for name, partitions in by_topic.items():
        entry = OffsetFetchResponse.OffsetFetchResponseGroup.OffsetFetchResponseTopics(partitions=partitions)
        if version >= 10:
            known = cluster.topics.get(name)
            entry.topic_id = known.topic_id if known is not None else next(
                (tid for tid, n in names_by_id.items() if n is None), None)
        else:
            entry.name = name
        topics.append(entry)
    return OffsetFetchResponse.OffsetFetchResponseGroup(group_id=wanted_group.group_id, topics=topics,
                                                        error_code=error or 0)
