"""OffsetCommit (8): store committed offsets after Kafka's generation and member checks.

Authorized as KafkaApis.handleOffsetCommitRequest: READ on the group, else every partition gets
GROUP_AUTHORIZATION_FAILED (OffsetCommitRequest.getErrorResponse); then READ on each topic, else its
partitions get TOPIC_AUTHORIZATION_FAILED whether the topic exists or not (v10 answers an unknown topic id
UNKNOWN_TOPIC_ID first). Only authorized partitions reach the coordinator, and when none does the
coordinator is not asked at all.
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation, ResourceType
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
    entry_names = [name for name, topic in zip(names, request.topics, strict=True) for _ in topic.partitions]
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return _response(request, names, [ErrorCode.GROUP_AUTHORIZATION_FAILED for _ in entry_names], version,
                         topic_ids_resolved=False)
    readable = ctx.authorized_names(AclOperation.READ, ResourceType.TOPIC, {n for n in names if n is not None})
    refused = [name is not None and name not in readable for name in entry_names]
    entries = [(name or "", p.partition_index, p.committed_offset,
                p.committed_leader_epoch if version >= 6 else -1, p.committed_metadata)
               for name, topic in zip(names, request.topics, strict=True) for p in topic.partitions]
    allowed = [entry for entry, no in zip(entries, refused, strict=True) if not no]
    if any(refused) and not any(name is not None and not no for name, no in zip(entry_names, refused, strict=True)):
        # Kafka sends the coordinator only authorized partitions of known topics: with none, it is not asked
        # (no NOT_COORDINATOR, no group created)
        errors = [ErrorCode.TOPIC_AUTHORIZATION_FAILED if no else ErrorCode.UNKNOWN_TOPIC_ID for no in refused]
        return _response(request, names, errors, version)
    error = coordinator_error(ctx, request.group_id)
    if error is not None:
        # a coordinator failure is OffsetCommitRequest.getErrorResponse: every partition, refused ones too
        errors = [error for _ in entries]
    else:
        committed = iter(cluster.groups.commit_offsets(
            request.group_id, request.generation_id_or_member_epoch, request.member_id,
            request.group_instance_id if version >= 7 else None, allowed))
        errors = [ErrorCode.TOPIC_AUTHORIZATION_FAILED if no else next(committed) for no in refused]
    return _response(request, names, errors, version)


def _response(request: OffsetCommitRequest, names: list[str | None], errors: list[ErrorCode], version: int,
              topic_ids_resolved: bool = True) -> OffsetCommitResponse:
    """One code per requested partition; from v10 an unresolved topic id is UNKNOWN_TOPIC_ID once ids are
    resolved (the group check comes before that)."""
    codes = iter(errors)
    topics: list[Any] = []
    for name, topic in zip(names, request.topics, strict=True):
        partitions = []
        for p in topic.partitions:
            code = next(codes)
            if name is None and version >= 10 and topic_ids_resolved:
                code = ErrorCode.UNKNOWN_TOPIC_ID
            partitions.append(_Partition(partition_index=p.partition_index, error_code=code))
        if version >= 10:
            topics.append(_Topic(topic_id=topic.topic_id, partitions=partitions))
        else:
            topics.append(_Topic(name=topic.name, partitions=partitions))
    return OffsetCommitResponse(throttle_time_ms=0, topics=topics)
