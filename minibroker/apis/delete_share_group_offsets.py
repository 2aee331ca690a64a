"""DeleteShareGroupOffsets (92): forget an empty share group's share partitions of some topics (KIP-932).

Version 0. Mirrors KafkaApis.handleDeleteShareGroupOffsetsRequest and
GroupCoordinatorService.deleteShareGroupOffsets.

UNSUPPORTED_VERSION unless `share.version` is finalized at 1 or more; READ on the group, else
GROUP_AUTHORIZATION_FAILED; the coordinator check; an unknown group is GROUP_ID_NOT_FOUND "Group X not found.",
one with members NON_EMPTY_GROUP "The group is not empty.". Each topic needs READ (TOPIC_AUTHORIZATION_FAILED) and
must exist (UNKNOWN_TOPIC_OR_PARTITION "This server does not host this topic-partition.", the topic id then null);
its share partitions go, so a member assigned them later starts them again by `share.auto.offset.reset`.
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode
from ..protocol.messages import DeleteShareGroupOffsetsRequest, DeleteShareGroupOffsetsResponse
from .context import RequestContext
from .share_common import UNKNOWN_PARTITION, group_refusal, share_state

API_KEY = 92
MIN_VERSION, MAX_VERSION = 0, 0

_Topic = DeleteShareGroupOffsetsResponse.DeleteShareGroupOffsetsResponseTopic


def handle(request: DeleteShareGroupOffsetsRequest, ctx: RequestContext) -> DeleteShareGroupOffsetsResponse:
    group_id = request.group_id
    refusal = group_refusal(ctx, group_id, must_exist=True)
    if refusal is not None:
        return DeleteShareGroupOffsetsResponse(throttle_time_ms=0, error_code=refusal[0], error_message=refusal[1],
                                               responses=[])
    coordinator = share_state(ctx.cluster).coordinator
    topics = []
    for topic in request.topics:
        found = ctx.cluster.topic(topic.topic_name)
        if not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, topic.topic_name):
            topics.append(_topic(topic.topic_name, found, ErrorCode.TOPIC_AUTHORIZATION_FAILED))
        elif found is None:
            topics.append(_topic(topic.topic_name, None, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_PARTITION))
        else:
            coordinator.delete_offsets(group_id, topic.topic_name)
            topics.append(_topic(topic.topic_name, found))
    return DeleteShareGroupOffsetsResponse(throttle_time_ms=0, error_code=0, error_message=None, responses=topics)


def _topic(name: str, found: Any, code: ErrorCode = ErrorCode.NONE, message: str | None = None) -> Any:
    return _Topic(topic_name=name, topic_id=found.topic_id if found is not None else None, error_code=code,
                  error_message=message)
