"""ConsumerGroupDescribe (69): state, epochs, members and assignments of KIP-848 consumer groups.

Versions 0-1 (Kafka 4.x): v1 adds each member's type (KIP-1099; always consumer here: no classic members join a
consumer group). Mirrors KafkaApis.handleConsumerGroupDescribe and GroupMetadataManager.consumerGroupDescribe.

UNSUPPORTED_VERSION for every group unless `group.coordinator.rebalance.protocols` contains `consumer`; DESCRIBE
on each group, else GROUP_AUTHORIZATION_FAILED; an unknown id is GROUP_ID_NOT_FOUND "Group X not found." and a
classic group's "Group X is not a consumer group.".
"""

from __future__ import annotations

from typing import Any

from ..core.consumer_groups import Assignment, consumer_protocol_enabled
from ..protocol.errors import ErrorCode
from ..protocol.messages import ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse
from .authorized_operations import NOT_REQUESTED_INT32
from .context import RequestContext
from .group_common import assignment_by_topic_id, describe_each, failed_group
from .share_common import is_share_group

API_KEY = 69
MIN_VERSION, MAX_VERSION = 0, 1

MEMBER_TYPE_CLASSIC, MEMBER_TYPE_CONSUMER = 0, 1  # v1 (KIP-1099): which protocol the member speaks

_Group = ConsumerGroupDescribeResponse.DescribedGroup
_Member = _Group.Member
_Assignment = _Member.Assignment


def _failed(group_id: str, code: ErrorCode, message: str | None = None) -> Any:
    return failed_group(_Group, group_id, code, message, assignor_name="")


def handle(request: ConsumerGroupDescribeRequest, ctx: RequestContext) -> ConsumerGroupDescribeResponse:
    if not consumer_protocol_enabled(ctx.cluster.config):
        return ConsumerGroupDescribeResponse(throttle_time_ms=0, groups=[
            _failed(g, ErrorCode.UNSUPPORTED_VERSION) for g in request.group_ids])
    groups = describe_each(ctx, request.group_ids, request.include_authorized_operations, _failed,
                           lambda group_id: _describe(ctx, group_id))
    return ConsumerGroupDescribeResponse(throttle_time_ms=0, groups=groups)


def _assignment(ctx: RequestContext, assignment: Assignment) -> Any:
    return _Assignment(topic_partitions=assignment_by_topic_id(ctx, assignment, _Assignment.TopicPartitions,
                                                               with_names=True))


def _describe(ctx: RequestContext, group_id: str) -> Any:
    coordinator = ctx.cluster.groups
    group = coordinator.consumer_group(group_id)
    if group is None:
        if coordinator.classic_group(group_id) is not None or is_share_group(ctx.cluster, group_id):
            return _failed(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        return _failed(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
    members = [
        _Member(member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id, member_epoch=m.member_epoch,
                client_id=m.client_id, client_host=m.client_host,
                subscribed_topic_names=sorted(m.subscribed_topic_names),
                subscribed_topic_regex=m.subscribed_topic_regex or "",  # Kafka's member without one has ""
                assignment=_assignment(ctx, m.assigned),
                target_assignment=_assignment(ctx, group.target.get(m.member_id, {})),
                member_type=MEMBER_TYPE_CLASSIC if m.classic is not None else MEMBER_TYPE_CONSUMER)
        for m in group.members.values()
    ]
    return _Group(error_code=0, error_message=None, group_id=group_id, group_state=group.state.value,
                  group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
                  assignor_name=group.assignor_name, members=members, authorized_operations=NOT_REQUESTED_INT32)
