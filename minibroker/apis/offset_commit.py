"""OffsetCommit (8): store committed offsets after Kafka's generation and member checks."""

from __future__ import annotations

from ..protocol.errors import ErrorCode
from ..protocol.messages import OffsetCommitRequest, OffsetCommitResponse
from .context import RequestContext
from .group_common import coordinator_error

API_KEY = 8
MIN_VERSION, MAX_VERSION = 2, 10

_Topic = OffsetCommitResponse.OffsetCommitResponseTopic
_Partition = _Topic.OffsetCommitResponsePartition


def handle(request: OffsetCommitRequest, ctx: RequestContext) -> OffsetCommitResponse:
    version = ctx.api_version
    cluster = ctx.cluster
    names = []
    for topic in request.topics:
        if version >= 10:
            found = cluster.topics_by_id.get(topic.topic_id)
            names.append(found.name if found is not None else None)
        else:
            names.append(topic.name)
    entries = [(name or "", p.partition_index, p.committed_offset,
                p.committed_leader_epoch if version >= 6 else -1, p.committed_metadata)
               for name, topic in zip(names, request.topics, strict=True) for p in topic.partitions]
    error = coordinator_error(ctx, request.group_id)
    if error is not None:
        errors = [error for _ in entries]
    else:
        errors = cluster.groups.commit_offsets(
            request.group_id, request.generation_id_or_member_epoch, request.member_id,
            request.group_instance_id if version >= 7 else None, entries)
    codes = iter(errors)
    topics = []
    for name, topic in zip(names, request.topics, strict=True):
        partitions = []
        for p in topic.partitions:
            code = next(codes)
            if name is None and version >= 10:
                code = ErrorCode.UNKNOWN_TOPIC_ID
            partitions.append(_Partition(partition_index=p.partition_index, error_code=code))
        if version >= 10:
            topics.append(_Topic(topic_id=topic.topic_id, partitions=partitions))
        else:
            topics.append(_Topic(name=topic.name, partitions=partitions))
    return OffsetCommitResponse(throttle_time_ms=0, topics=topics)
