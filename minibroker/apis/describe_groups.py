"""DescribeGroups (15): state, protocol and members of classic groups.

Versions 0-6: v1 adds the throttle time; v3 the authorized operations on each group, when asked; v4 each
member's group instance id; v5 is flexible; v6 answers GROUP_ID_NOT_FOUND for a group that does not exist
(KIP-1043). Mirrors KafkaApis.handleDescribeGroupsRequest.

Each group needs DESCRIBE, else it is answered GROUP_AUTHORIZATION_FAILED with nothing about it
(DescribeGroupsResponse.groupError), ahead of the described groups. A KIP-848 consumer group is not a classic
group, nor is a KIP-1071 streams group: "Dead" with no error before v6, from v6 GROUP_ID_NOT_FOUND "Group X is
not a classic group." (what Kafka 4 answers; ConsumerGroupDescribe and StreamsGroupDescribe describe them).
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..core.classic_group import GroupState
from ..protocol.errors import ErrorCode
from ..protocol.messages import DescribeGroupsRequest, DescribeGroupsResponse
from .authorized_operations import NOT_REQUESTED
from .context import RequestContext
from .group_common import coordinator_error

API_KEY = 15
MIN_VERSION, MAX_VERSION = 0, 6

# KIP-1043: from v6 an unknown group is GROUP_ID_NOT_FOUND rather than a "Dead" entry.
NOT_FOUND_ERROR_FROM = 6
AUTHORIZED_OPERATIONS_FROM = 3

_Group = DescribeGroupsResponse.DescribedGroup
_Member = _Group.DescribedGroupMember


def handle(request: DescribeGroupsRequest, ctx: RequestContext) -> DescribeGroupsResponse:
    describable = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.GROUP, request.groups)
    refused = [group_id for group_id in request.groups if group_id not in describable]
    groups = [_describe(ctx, group_id) for group_id in request.groups if group_id in describable]
    if ctx.api_version >= AUTHORIZED_OPERATIONS_FROM and request.include_authorized_operations:
        # KafkaApis.handleDescribeGroupsRequest: the operations of every group described without error
        for group in groups:
            if group.error_code == 0:
                group.authorized_operations = set(ctx.authorized_operations(ResourceType.GROUP, group.group_id))
    # the refused groups come first: Kafka starts the response with them and appends the coordinator's answer
    return DescribeGroupsResponse(throttle_time_ms=0, groups=[_refused(g) for g in refused] + groups)


def _refused(group_id: str) -> Any:
    """DescribeGroupsResponse.groupError: empty state, protocol and members; no message."""
    return _Group(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED, error_message=None, group_id=group_id,
                  group_state="", protocol_type="", protocol_data="", members=[],
                  authorized_operations=NOT_REQUESTED)


def _describe(ctx: RequestContext, group_id: str) -> Any:
    error = coordinator_error(ctx, group_id)
    group = ctx.cluster.groups.classic_group(group_id) if error is None else None
    if group is None:
        message = None
        if error is None and ctx.api_version >= NOT_FOUND_ERROR_FROM:
            error, message = ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found."
            if ctx.cluster.groups.group_type(group_id) is not None:  # a consumer or streams group
                message = f"Group {group_id} is not a classic group."
        return _Group(error_code=error or 0, error_message=message, group_id=group_id,
                      group_state=GroupState.DEAD.value, protocol_type="", protocol_data="", members=[],
                      authorized_operations=NOT_REQUESTED)
    stable = group.state is GroupState.STABLE
    members = [
        _Member(member_id=m.member_id, group_instance_id=m.group_instance_id, client_id=m.client_id,
                client_host=m.client_host,
                member_metadata=m.metadata_for(group.protocol_name) if stable else b"",
                member_assignment=m.assignment if stable else b"")
        for m in group.members.values()
    ]
    return _Group(error_code=0, error_message=None, group_id=group_id, group_state=group.state.value,
                  protocol_type=group.protocol_type or "",
                  protocol_data=(group.protocol_name or "") if stable else "", members=members,
                  authorized_operations=NOT_REQUESTED)
