"""AlterShareGroupOffsets (91): set the start offsets of an empty share group's share partitions (KIP-932).

Version 0. Mirrors KafkaApis.handleAlterShareGroupOffsetsRequest and GroupCoordinatorService.alterShareGroupOffsets.

UNSUPPORTED_VERSION unless `share.version` is finalized at 1 or more; READ on the group, else
GROUP_AUTHORIZATION_FAILED; the coordinator check; a group with members is NON_EMPTY_GROUP "The group is not
empty.". A group that does not exist is made, as Kafka 4.3.1 makes it. Each partition needs READ on its topic
(TOPIC_AUTHORIZATION_FAILED) and must exist (UNKNOWN_TOPIC_OR_PARTITION "This server does not host this
topic-partition.", the topic id then null); its share partition starts afresh at the given offset.
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode
from ..protocol.messages import AlterShareGroupOffsetsRequest, AlterShareGroupOffsetsResponse
from .context import RequestContext
from .share_common import UNKNOWN_PARTITION, group_refusal, share_state

API_KEY = 91
MIN_VERSION, MAX_VERSION = 0, 0

_Topic = AlterShareGroupOffsetsResponse.AlterShareGroupOffsetsResponseTopic
_Partition = _Topic.AlterShareGroupOffsetsResponsePartition


def handle(request: AlterShareGroupOffsetsRequest, ctx: RequestContext) -> AlterShareGroupOffsetsResponse:
    group_id = request.group_id
    refusal = group_refusal(ctx, group_id, must_exist=False)
    if refusal is not None:
        return AlterShareGroupOffsetsResponse(throttle_time_ms=0, error_code=refusal[0], error_message=refusal[1],
                                              responses=[])
    coordinator = share_state(ctx.cluster).coordinator
    topics = []
    for topic in request.topics:
        found = ctx.cluster.topic(topic.topic_name)
        allowed = ctx.authorize(AclOperation.READ, ResourceType.TOPIC, topic.topic_name)
        parts = []
        for part in topic.partitions:
            index = part.partition_index
            if not allowed:
                parts.append(_partition(index, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
            elif found is None or found.partition(index) is None:
                parts.append(_partition(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_PARTITION))
            else:
                coordinator.alter_start_offset(group_id, topic.topic_name, index, part.start_offset)
                parts.append(_partition(index))
        topics.append(_Topic(topic_name=topic.topic_name, topic_id=found.topic_id if found is not None else None,
                             partitions=parts))
    return AlterShareGroupOffsetsResponse(throttle_time_ms=0, error_code=0, error_message=None, responses=topics)


def _partition(index: int, code: ErrorCode = ErrorCode.NONE, message: str | None = None) -> Any:
    return _Partition(partition_index=index, error_code=code, error_message=message)
