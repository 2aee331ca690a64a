"""OffsetDelete (47): remove committed offsets the group no longer subscribes to.

Authorized as KafkaApis.handleOffsetDeleteRequest: DELETE on the group, else a top-level
GROUP_AUTHORIZATION_FAILED and no topics (OffsetDeleteRequest.getErrorResponse); then READ on each topic,
else its partitions get TOPIC_AUTHORIZATION_FAILED and keep their offsets. A group-level error from the
coordinator replaces every partition result (OffsetDeleteResponse.Builder.merge).
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
    wanted = [(t.name, p.partition_index) for t in request.topics if t.name in readable for p in t.partitions]
    # the coordinator is asked even when every topic is refused, as Kafka asks it with no topics
    error = coordinator_error(ctx, request.group_id)
    if error is None:
        error, codes = ctx.cluster.groups.delete_offsets(request.group_id, wanted)
    if error:
        return OffsetDeleteResponse(error_code=error, throttle_time_ms=0, topics=[])
    by_key = dict(zip(wanted, codes, strict=True))
    topics = [_Topic(name=t.name, partitions=[
        _Partition(partition_index=p.partition_index,
                   error_code=by_key[(t.name, p.partition_index)] if t.name in readable
                   else ErrorCode.TOPIC_AUTHORIZATION_FAILED)
        for p in t.partitions])
              for t in request.topics]
    return OffsetDeleteResponse(error_code=0, throttle_time_ms=0, topics=topics)
