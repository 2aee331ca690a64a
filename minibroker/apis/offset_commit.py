"""OffsetCommit (8): store committed offsets after Kafka's generation and member checks.

Versions 2-10, and v0-1 only for release profiles before 4.0 (removed by KIP-896 in Kafka 4.0): v1 adds the
generation, member id and a per-partition commit timestamp; v2 a retention time in its place; v3 the throttle
time; v5 drops the retention time; v6 adds the leader epoch; v7 the group instance id; v8 is flexible; v9 is the
first for KIP-848 consumer groups (STALE_MEMBER_EPOCH, GROUP_ID_NOT_FOUND); v10 names topics by id only.
Mirrors KafkaApis.handleOffsetCommitRequest and GroupCoordinatorService.commitOffsets.

READ on the group, else every partition gets GROUP_AUTHORIZATION_FAILED (OffsetCommitRequest.getErrorResponse,
unknown topic ids included). Then the broker answers per topic, in this order: from v10 an unknown topic id
UNKNOWN_TOPIC_ID; without READ on the topic TOPIC_AUTHORIZATION_FAILED, whether it exists or not; a topic it
does not know, or a partition the topic does not have, UNKNOWN_TOPIC_OR_PARTITION. Only the remaining
partitions reach the coordinator, so its errors (NOT_COORDINATOR, ILLEGAL_GENERATION, ...) fall on those alone,
and with none left it is not asked at all (no NOT_COORDINATOR, no group created). The empty group id is a group
like any other (only a null one is refused). For a KIP-848 consumer group the generation is the member epoch:
an older one is STALE_MEMBER_EPOCH, a newer one FENCED_MEMBER_EPOCH, and its members must commit with v9+
(ConsumerGroup.validateOffsetCommit).

v0-1 are served as a KRaft 3.9 broker served them: v1 commits to the coordinator like v2 (Kafka keeps v1's
per-partition commit timestamp as the commit time, which only offset expiry reads; here the coordinator stamps
the broker's time); v0 meant "store in ZooKeeper" (KafkaApis.commitOffsetsToZookeeper), which a KRaft broker
refuses after the checks above with UNSUPPORTED_VERSION on every partition of the request
(OffsetCommitRequest.getErrorResponse).
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
PRE_KIP896_MIN_VERSION = 0  # releases before 4.0 served v0-1

# KIP-848: from v10 topics are named by id.
TOPIC_IDS_FROM = 10
# OffsetMetadataManager.validateOffsetCommit: from v9 a generation for a group that does not exist is
# GROUP_ID_NOT_FOUND, before it ILLEGAL_GENERATION
GROUP_ID_NOT_FOUND_FROM = 9

_Topic = OffsetCommitResponse.OffsetCommitResponseTopic
_Partition = _Topic.OffsetCommitResponsePartition


def handle(request: OffsetCommitRequest, ctx: RequestContext) -> OffsetCommitResponse:
    version = ctx.api_version
    cluster = ctx.cluster
    names: list[str | None] = []
    for topic in request.topics:
        if version >= TOPIC_IDS_FROM:
            found = cluster.topic_by_id(topic.topic_id)
            names.append(found.name if found is not None else None)
        else:
            names.append(topic.name)
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return _response(request, [ErrorCode.GROUP_AUTHORIZATION_FAILED
                                   for topic in request.topics for _ in topic.partitions], version)
    readable = ctx.authorized_names(AclOperation.READ, ResourceType.TOPIC, {n for n in names if n is not None})
    exists = cluster.groups.partition_exists
    # per requested partition: the broker's own answer, or None for what goes to the coordinator
    answered: list[ErrorCode | None] = []
    allowed = []
    for name, topic in zip(names, request.topics, strict=True):
        for p in topic.partitions:
            if name is None:
                answered.append(ErrorCode.UNKNOWN_TOPIC_ID)
            elif name not in readable:
                answered.append(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
            elif not exists(name, p.partition_index):
                answered.append(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            else:
                answered.append(None)
                allowed.append((name, p.partition_index, p.committed_offset,
                                p.committed_leader_epoch if version >= 6 else -1, p.committed_metadata))
    if not allowed:
        return _response(request, [code for code in answered if code is not None], version)
    if version == 0:
        # metadataSupport.requireZkOrThrow: the whole request gets the exception's code
        return _response(request, [ErrorCode.UNSUPPORTED_VERSION for _ in answered], version)
    # a coordinator failure is OffsetCommitRequest.getErrorResponse of the request the coordinator was given
    # (GroupCoordinatorService.commitOffsets), merged with the broker's own answers (OffsetCommitResponse.Builder)
    error = coordinator_error(ctx, request.group_id)
    if error is not None:
        committed = iter([error for _ in allowed])
    else:
        committed = iter(cluster.groups.commit_offsets(
            request.group_id, request.generation_id_or_member_epoch, request.member_id,
            request.group_instance_id if version >= 7 else None, allowed,
            ErrorCode.GROUP_ID_NOT_FOUND if version >= GROUP_ID_NOT_FOUND_FROM else ErrorCode.ILLEGAL_GENERATION,
            api_version=version))
    return _response(request, [next(committed) if code is None else code for code in answered], version)


def _response(request: OffsetCommitRequest, errors: list[ErrorCode], version: int) -> OffsetCommitResponse:
    """One code per requested partition, in the order asked, each topic named as the request named it."""
    codes = iter(errors)
    topics: list[Any] = []
    for topic in request.topics:
        partitions = [_Partition(partition_index=p.partition_index, error_code=next(codes)) for p in topic.partitions]
        if version >= TOPIC_IDS_FROM:
            topics.append(_Topic(topic_id=topic.topic_id, partitions=partitions))
        else:
            topics.append(_Topic(name=topic.name, partitions=partitions))
    return OffsetCommitResponse(throttle_time_ms=0, topics=topics)
