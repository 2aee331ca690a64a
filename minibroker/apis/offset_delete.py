"""OffsetDelete (47): remove committed offsets the group no longer subscribes to."""

from __future__ import annotations

from ..protocol.messages import OffsetDeleteRequest, OffsetDeleteResponse
from .context import RequestContext
from .group_common import coordinator_error

API_KEY = 47
MIN_VERSION, MAX_VERSION = 0, 0

_Topic = OffsetDeleteResponse.OffsetDeleteResponseTopic
_Partition = _Topic.OffsetDeleteResponsePartition


def handle(request: OffsetDeleteRequest, ctx: RequestContext) -> OffsetDeleteResponse:
    wanted = [(t.name, p.partition_index) for t in request.topics for p in t.partitions]
    error = coordinator_error(ctx, request.group_id)
    if error is None:
        error, codes = ctx.cluster.groups.delete_offsets(request.group_id, wanted)
    if error:
        return OffsetDeleteResponse(error_code=error, throttle_time_ms=0, topics=[])
    by_key = dict(zip(wanted, codes, strict=True))
    topics = [_Topic(name=t.name, partitions=[_Partition(partition_index=p.partition_index,
                                                         error_code=by_key[(t.name, p.partition_index)])
                                              for p in t.partitions])
              for t in request.topics]
    return OffsetDeleteResponse(error_code=0, throttle_time_ms=0, topics=topics)
