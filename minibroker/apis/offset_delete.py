"""OffsetDelete (47): remove committed offsets the group no longer subscribes to.

Version 0, the only one. Mirrors KafkaApis.handleOffsetDeleteRequest and GroupCoordinatorService.deleteOffsets.

DELETE on the group, else a top-level GROUP_AUTHORIZATION_FAILED and no topics
(OffsetDeleteRequest.getErrorResponse); then READ on each topic, else its partitions get
TOPIC_AUTHORIZATION_FAILED and keep their offsets; then the broker answers a topic it does not know, or a
partition the topic does not have, UNKNOWN_TOPIC_OR_PARTITION itself. Only the rest reach the coordinator,
which is asked even with none; a group-level error from it replaces every partition result
(OffsetDeleteResponse.Builder.merge). The empty group id is INVALID_GROUP_ID on every node.
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode
from ..protocol.messages import OffsetDeleteRequest, OffsetDeleteResponse
from .context import RequestContext
from .group_common import coordinator_error

API_KEY = 47
MIN_VERSION, MAX_VERSION = 0, 0

_Topic = OffsetDeleteResponse.OffsetDeleteResponseTopic
_Partition = _Topic.OffsetDeleteResponsePartition


def handle(request: OffsetDeleteRequest, ctx: RequestContext) -> OffsetDeleteResponse:
    if not ctx.authorize(AclOperation.DELETE, ResourceType.GROUP, request.group_id):
        return OffsetDeleteResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, throttle_time_ms=0, topics=[])
    readable = ctx.authorized_names(AclOperation.READ, ResourceType.TOPIC, [t.name for t in request.topics])
    exists = ctx.cluster.groups.partition_exists
    # per requested partition: the broker's own answer, or None for what goes to the coordinator
    answered: list[ErrorCode | None] = []
    for topic in request.topics:
        for p in topic.partitions:
            if topic.name not in readable:
                answered.append(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
            elif not exists(topic.name, p.partition_index):
                answered.append(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            else:
                answered.append(None)
    keys = [(t.name, p.partition_index) for t in request.topics for p in t.partitions]
    wanted = [key for key, code in zip(keys, answered, strict=True) if code is None]
    # the coordinator is asked even when nothing is left, as Kafka asks it with no topics; but
    # GroupCoordinatorService.deleteOffsets refuses the empty group id before it routes the request anywhere
    error = ErrorCode.INVALID_GROUP_ID if not request.group_id else coordinator_error(ctx, request.group_id)
    if error is None:
        error, coordinator_codes = ctx.cluster.groups.delete_offsets(request.group_id, wanted)
    if error:
        return OffsetDeleteResponse(error_code=error, throttle_time_ms=0, topics=[])
    from_coordinator = iter(coordinator_codes)
    codes = iter([next(from_coordinator) if code is None else code for code in answered])
    topics = [_Topic(name=t.name, partitions=[_Partition(partition_index=p.partition_index, error_code=next(codes))
                                              for p in t.partitions])
              for t in request.topics]
    return OffsetDeleteResponse(error_code=0, throttle_time_ms=0, topics=topics)
