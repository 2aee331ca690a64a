"""SyncGroup (14): the leader hands out assignments; every member receives its own.

Needs READ on the group (KafkaApis.handleSyncGroupRequest), else GROUP_AUTHORIZATION_FAILED with an empty
assignment and nothing handed out.
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..core.group_coordinator import SyncResult
from ..core.pending import Pending
from ..protocol.errors import ErrorCode
from ..protocol.messages import SyncGroupRequest, SyncGroupResponse
from .context import RequestContext
from .group_common import coordinator_error

API_KEY = 14
MIN_VERSION, MAX_VERSION = 0, 5


def handle(request: SyncGroupRequest, ctx: RequestContext) -> SyncGroupResponse | Pending:
    version = ctx.api_version
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return _response(SyncResult(ErrorCode.GROUP_AUTHORIZATION_FAILED))
    error = coordinator_error(ctx, request.group_id)
    if error is not None:
        return _response(SyncResult(error))
    result = ctx.cluster.groups.sync(
        group_id=request.group_id,
        generation_id=request.generation_id,
        member_id=request.member_id,
        group_instance_id=request.group_instance_id if version >= 3 else None,
        protocol_type=request.protocol_type if version >= 5 else None,
        protocol_name=request.protocol_name if version >= 5 else None,
        assignments=[(a.member_id, bytes(a.assignment)) for a in request.assignments],
    )
    if isinstance(result, Pending):
        return result.then(_response)
    return _response(result)


def _response(result: SyncResult) -> SyncGroupResponse:
    return SyncGroupResponse(throttle_time_ms=0, error_code=result.error, protocol_type=result.protocol_type,
                             protocol_name=result.protocol_name, assignment=result.assignment)
