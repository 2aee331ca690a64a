"""ShareGroupDescribe (77): state, epochs, members and assignments of share groups (KIP-932).

Version 1 (Kafka 4.1+; version 0 was 4.0's early access). Mirrors KafkaApis.handleShareGroupDescribe and
GroupMetadataManager.shareGroupDescribe.

UNSUPPORTED_VERSION for every group unless `share.version` is finalized at 1 or more; DESCRIBE on each group,
else GROUP_AUTHORIZATION_FAILED; an unknown id is GROUP_ID_NOT_FOUND "Group X not found.", a group of another
type "Group X is not a share group.".
"""

from __future__ import annotations

from typing import Any

from ..core.share_groups import ASSIGNOR_NAME
from ..protocol.errors import ErrorCode
from ..protocol.messages import ShareGroupDescribeRequest, ShareGroupDescribeResponse
from .authorized_operations import NOT_REQUESTED_INT32
from .context import RequestContext
from .group_common import assignment_by_topic_id, describe_each, failed_group
from .share_common import share_enabled, share_state

API_KEY = 77
MIN_VERSION, MAX_VERSION = 1, 1


_Group = ShareGroupDescribeResponse.DescribedGroup
_Member = _Group.Member


def _failed(group_id: str, code: ErrorCode, message: str | None = None) -> Any:
    return failed_group(_Group, group_id, code, message, assignor_name="")


def handle(request: ShareGroupDescribeRequest, ctx: RequestContext) -> ShareGroupDescribeResponse:
    if not share_enabled(ctx.cluster):
        return ShareGroupDescribeResponse(throttle_time_ms=0, groups=[
            _failed(g, ErrorCode.UNSUPPORTED_VERSION) for g in request.group_ids])
    groups = describe_each(ctx, request.group_ids, request.include_authorized_operations, _failed,
                           lambda group_id: _describe(ctx, group_id))
    return ShareGroupDescribeResponse(throttle_time_ms=0, groups=groups)


def _describe(ctx: RequestContext, group_id: str) -> Any:
    coordinator = share_state(ctx.cluster).coordinator
    coordinator.expire()
    group = coordinator.group(group_id)
    if group is None:
        if ctx.cluster.groups.group_type(group_id) in ("classic", "consumer"):
            return _failed(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        return _failed(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
    members = []
    for member in group.members.values():
        parts = assignment_by_topic_id(ctx, member.assignment, _Member.Assignment.TopicPartitions, with_names=True)
        members.append(_Member(member_id=member.member_id, rack_id=member.rack_id, member_epoch=member.member_epoch,
                               client_id=member.client_id, client_host=member.client_host,
                               subscribed_topic_names=list(member.subscribed_topic_names),
                               assignment=_Member.Assignment(topic_partitions=parts)))
    return _Group(error_code=0, error_message=None, group_id=group_id, group_state=group.state,
                  group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch, assignor_name=ASSIGNOR_NAME,
                  members=members, authorized_operations=NOT_REQUESTED_INT32)
