"""DeleteGroups (42): remove empty groups and their offsets."""

from __future__ import annotations

from ..protocol.errors import ErrorCode
from ..protocol.messages import DeleteGroupsRequest, DeleteGroupsResponse
from .context import RequestContext
from .group_common import coordinator_error

API_KEY = 42
MIN_VERSION, MAX_VERSION = 0, 3

_MESSAGES = {
    ErrorCode.NON_EMPTY_GROUP: "The group is not empty.",
    ErrorCode.GROUP_ID_NOT_FOUND: "The group id does not exist.",
}


def handle(request: DeleteGroupsRequest, ctx: RequestContext) -> DeleteGroupsResponse:
    local = [g for g in request.groups_names if coordinator_error(ctx, g) is None]
    codes = dict(zip(local, ctx.cluster.groups.delete_groups(local), strict=True))
    results = []
    for group_id in request.groups_names:
        code = codes.get(group_id, ErrorCode.NOT_COORDINATOR)
        results.append(DeleteGroupsResponse.DeletableGroupResult(group_id=group_id, error_code=code,
                                                                 error_message=_MESSAGES.get(code)))
    return DeleteGroupsResponse(throttle_time_ms=0, results=results)
