"""StreamsGroupDescribe (89): state, epochs, topology, members and task assignments of KIP-1071 streams groups.

Version 0 (Kafka 4.2-4.3). Mirrors KafkaApis.handleStreamsGroupDescribe and
GroupMetadataManager.streamsGroupDescribe.

UNSUPPORTED_VERSION for every group unless streams groups are enabled (streams_group_heartbeat.py); DESCRIBE on
each group, else GROUP_AUTHORIZATION_FAILED; an unknown id is GROUP_ID_NOT_FOUND "Group X not found." and a group
of another type "Group X is not a streams group.". The topology is the one the group was given, with the
internal topics' partitions once it is configured against the cluster's topics (as declared before).
"""

from __future__ import annotations

from typing import Any

from ..core.streams_groups import StreamsGroup, TaskAssignment, Tasks
from ..core.streams_topology import TopicInfo
from ..protocol.errors import ErrorCode
from ..protocol.messages import StreamsGroupDescribeRequest, StreamsGroupDescribeResponse
from .authorized_operations import NOT_REQUESTED_INT32
from .context import RequestContext
from .group_common import describe_each, failed_group
from .streams_group_heartbeat import streams_groups_enabled

API_KEY = 89
MIN_VERSION, MAX_VERSION = 0, 0

_Group = StreamsGroupDescribeResponse.DescribedGroup
_Member = _Group.Member
_Topology = _Group.Topology
_Subtopology = _Topology.Subtopology
R = StreamsGroupDescribeResponse


def _failed(group_id: str, code: ErrorCode, message: str | None = None) -> Any:
    return failed_group(_Group, group_id, code, message, topology=None)


def handle(request: StreamsGroupDescribeRequest, ctx: RequestContext) -> StreamsGroupDescribeResponse:
    if not streams_groups_enabled(ctx):
        return R(throttle_time_ms=0, groups=[_failed(g, ErrorCode.UNSUPPORTED_VERSION) for g in request.group_ids])
    groups = describe_each(ctx, request.group_ids, request.include_authorized_operations, _failed,
                           lambda group_id: _describe(ctx, group_id))
    return R(throttle_time_ms=0, groups=groups)


def _topic_info(info: TopicInfo, partitions: dict[str, int]) -> Any:
    return _Subtopology.TopicInfo(name=info.name, partitions=partitions.get(info.name, info.partitions),
                                  replication_factor=info.replication_factor,
                                  topic_configs=[_Subtopology.TopicInfo.KeyValue(key=k, value=v)
                                                 for k, v in info.configs])


def _task_ids(tasks: Tasks) -> list[Any]:
    return [_Member.Assignment.TaskIds(subtopology_id=sid, partitions=sorted(parts))
            for sid, parts in sorted(tasks.items()) if parts]


def _assignment(assignment: TaskAssignment) -> Any:
    return _Member.Assignment(active_tasks=_task_ids(assignment.active),
                              standby_tasks=_task_ids(assignment.standby), warmup_tasks=_task_ids(assignment.warmup))


def _topology(group: StreamsGroup) -> Any:
    if group.topology is None:
        return None
    # a configured (ready) topology shows its internal topics' partitions, as Kafka describes its configured one
    partitions = group.configured.internal_partitions if group.configured is not None else {}
    return _Topology(epoch=group.topology.epoch, subtopologies=[
        _Subtopology(subtopology_id=sub.subtopology_id, source_topics=list(sub.source_topics),
                     repartition_sink_topics=list(sub.repartition_sink_topics),
                     state_changelog_topics=[_topic_info(t, partitions) for t in sub.state_changelog_topics],
                     repartition_source_topics=[_topic_info(t, partitions) for t in sub.repartition_source_topics])
        for sub in group.topology.subtopologies])


def _describe(ctx: RequestContext, group_id: str) -> Any:
    coordinator = ctx.cluster.groups
    group = coordinator.streams_group(group_id)
    if group is None:
        if coordinator.group_type(group_id) is not None:
            return _failed(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a streams group.")
        return _failed(group_id, ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
    members = [
        _Member(member_id=m.member_id, member_epoch=m.member_epoch, instance_id=m.instance_id, rack_id=m.rack_id,
                client_id=m.client_id, client_host=m.client_host, topology_epoch=m.topology_epoch,
                process_id=m.process_id,
                user_endpoint=None if m.user_endpoint is None else _Member.Endpoint(host=m.user_endpoint[0],
                                                                                    port=m.user_endpoint[1]),
                client_tags=[_Member.KeyValue(key=k, value=v) for k, v in sorted(m.client_tags.items())],
                task_offsets=[], task_end_offsets=[], assignment=_assignment(m.assigned),
                target_assignment=_assignment(group.target.get(m.member_id, TaskAssignment())), is_classic=False)
        for m in group.members.values()
    ]
    return _Group(error_code=0, error_message=None, group_id=group_id, group_state=group.state().value,
                  group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch, topology=_topology(group),
                  members=members, authorized_operations=NOT_REQUESTED_INT32)
