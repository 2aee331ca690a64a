"""ListGroups (16): every group, filtered by state (v4+) and type (v5+).

As KafkaApis.handleListGroupsRequest, DESCRIBE on the cluster lists every group; without it only the
groups the caller may DESCRIBE are listed (the others are left out, no error).
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..protocol.messages import ListGroupsRequest, ListGroupsResponse
from .context import RequestContext

API_KEY = 16
MIN_VERSION, MAX_VERSION = 0, 5

CLASSIC = "classic"


def handle(request: ListGroupsRequest, ctx: RequestContext) -> ListGroupsResponse:
    states = {s.lower() for s in request.states_filter} if ctx.api_version >= 4 else set()
    types = {t.lower() for t in request.types_filter} if ctx.api_version >= 5 else set()
    sees_all = ctx.authorize_cluster(AclOperation.DESCRIBE)
    groups = []
    for group in ctx.cluster.groups.groups.values():
        if states and group.state.value.lower() not in states:
            continue
        if types and CLASSIC not in types:
            continue
        if not sees_all and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, group.group_id):
            continue
        groups.append(ListGroupsResponse.ListedGroup(group_id=group.group_id, protocol_type=group.protocol_type or "",
                                                     group_state=group.state.value, group_type=CLASSIC))
    return ListGroupsResponse(throttle_time_ms=0, error_code=0, groups=groups)
