"""LeaveGroup (13): members leave a group.

Versions 0-5: one member in v0-2, v1 adding the throttle time; v3 a batch of members with group instance ids; v4
is flexible; v5 adds the reason (KIP-800). Mirrors KafkaApis.handleLeaveGroupRequest.

Needs READ on the group, else LeaveGroupRequest.getErrorResponse: GROUP_AUTHORIZATION_FAILED at the top level,
no member results, and nobody leaves. Classic members of a KIP-848 consumer group leave it the same way; when
only classic members remain, the group becomes classic again.
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode
from ..protocol.messages import LeaveGroupRequest, LeaveGroupResponse
from .context import RequestContext
from .group_common import coordinator_error

API_KEY = 13
MIN_VERSION, MAX_VERSION = 0, 5


def handle(request: LeaveGroupRequest, ctx: RequestContext) -> LeaveGroupResponse:
    version = ctx.api_version
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return LeaveGroupResponse(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, members=[])
    if version >= 3:
        leaving = [(m.member_id, m.group_instance_id) for m in request.members]
    else:
        leaving = [(request.member_id, None)]
    error = coordinator_error(ctx, request.group_id)
    if error is not None:
        errors = [error for _ in leaving]
    else:
        error, errors = ctx.cluster.groups.leave(request.group_id, leaving)
    if version < 3:
        return LeaveGroupResponse(throttle_time_ms=0, error_code=error if error else errors[0])
    return LeaveGroupResponse(
        throttle_time_ms=0, error_code=error,
        members=[LeaveGroupResponse.MemberResponse(member_id=member_id, group_instance_id=instance_id,
                                                   error_code=code)
                 for (member_id, instance_id), code in zip(leaving, errors, strict=True)],
    )
