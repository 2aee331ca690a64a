"""StreamsGroupHeartbeat (88): join, heartbeat in and leave a KIP-1071 streams group.

Version 0 (Kafka 4.2-4.3). Mirrors KafkaApis.handleStreamsGroupHeartbeat and GroupMetadataManager's streams
path (core/streams_groups.py).

UNSUPPORTED_VERSION unless `group.coordinator.rebalance.protocols` contains `streams` and `streams.version` is
finalized at 1 or more; READ on the group, else GROUP_AUTHORIZATION_FAILED; a topology naming Kafka's internal
topics or invalid names is STREAMS_INVALID_TOPOLOGY, and without DESCRIBE on every topic it names the answer is
TOPIC_AUTHORIZATION_FAILED, both before the coordinator sees it. The internal topics the group misses are created
here, as Kafka's AutoTopicCreationManager creates them, with the partitions the coordinator derived and the
configs the topology declares; the member sees MISSING_INTERNAL_TOPICS until they exist. Without CREATE on the
cluster or on every one of them, none is created and that status names the topics the member may not create.
"""

from __future__ import annotations

import weakref
from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..core.cluster import Cluster
from ..core.cluster_model import INTERNAL_TOPICS, invalid_topic_reason
from ..core.features import hash_map_order
from ..core.streams_groups import Tasks, streams_protocol_enabled
from ..core.streams_topology import StatusCode, Subtopology, TopicInfo, Topology
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResponse
from .context import RequestContext
from .feature_levels import feature_levels
from .group_common import coordinator_error

API_KEY = 88
MIN_VERSION, MAX_VERSION = 0, 0

STREAMS_VERSION = "streams.version"
KAFKA_INTERNAL_TOPICS = INTERNAL_TOPICS | {"__share_group_state"}  # Topic.INTERNAL_TOPICS of Kafka 4.x

_Response = StreamsGroupHeartbeatResponse


def streams_groups_enabled(ctx: RequestContext) -> bool:
    """KafkaApis.isStreamsGroupProtocolEnabled: the protocol is configured and streams.version is 1 or more."""
    return streams_protocol_enabled(ctx.cluster.config) and feature_levels(ctx.cluster).level(STREAMS_VERSION) >= 1


def _error(code: ErrorCode, message: str | None = None) -> StreamsGroupHeartbeatResponse:
    return _Response(throttle_time_ms=0, error_code=code, error_message=message, member_id="", member_epoch=0,
                     heartbeat_interval_ms=0, acceptable_recovery_lag=0, task_offset_interval_ms=0, status=[],
                     active_tasks=None, standby_tasks=None, warmup_tasks=None, endpoint_information_epoch=0,
                     partitions_by_user_endpoint=None)


def _topic_info(info: Any) -> TopicInfo:
    return TopicInfo(info.name, info.partitions, info.replication_factor,
                     tuple((kv.key, kv.value) for kv in info.topic_configs))


def _topology(data: Any) -> Topology | None:
    if data is None:
        return None
    return Topology(data.epoch, tuple(
        Subtopology(sub.subtopology_id, tuple(sub.source_topics), tuple(sub.repartition_sink_topics),
                    tuple(_topic_info(t) for t in sub.state_changelog_topics),
                    tuple(_topic_info(t) for t in sub.repartition_source_topics),
                    tuple((tuple(g.source_topics), tuple(g.repartition_source_topics))
                          for g in sub.copartition_groups))
        for sub in data.subtopologies))


def _tasks(entries: list[Any] | None) -> Tasks | None:
    if entries is None:
        return None
    tasks: Tasks = {}
    for entry in entries:
        tasks.setdefault(entry.subtopology_id, set()).update(entry.partitions)
    return tasks


def _task_ids(tasks: Tasks) -> list[Any]:
    return [_Response.TaskIds(subtopology_id=sid, partitions=sorted(parts))
            for sid, parts in sorted(tasks.items()) if parts]


def _topic_partitions(by_topic: Tasks) -> list[Any]:
    return [_Response.EndpointToPartitions.TopicPartition(topic=name, partitions=sorted(parts))
            for name, parts in sorted(by_topic.items())]


def _required_topics(topology: Any) -> list[str]:
    """KafkaApis' requiredTopics: every topic the topology names, once each, in the order first named."""
    names: list[str] = []
    for sub in topology.subtopologies:
        names += sub.source_topics + sub.repartition_sink_topics
        names += [t.name for t in sub.repartition_source_topics] + [t.name for t in sub.state_changelog_topics]
    return list(dict.fromkeys(names))


def _topology_refusal(names: list[str]) -> str | None:
    """Kafka's internal topics, then invalid names, refused before the coordinator sees the topology."""
    internal = [name for name in names if name in KAFKA_INTERNAL_TOPICS]
    if internal:
        return f"Use of Kafka internal topics {','.join(internal)} in a Kafka Streams topology is prohibited."
    invalid = [name for name in names if invalid_topic_reason(name) is not None]
    if invalid:
        return f"Topic names {','.join(invalid)} are not valid topic names."
    return None


# Per cluster, why the broker could not create an internal topic: AutoTopicCreationManager's error cache, which
# the next heartbeat of a group missing that topic reports (Kafka creates them after answering the heartbeat).
_CREATION_ERRORS: weakref.WeakKeyDictionary[Cluster, dict[str, str]] = weakref.WeakKeyDictionary()


def _create_unauthorized(ctx: RequestContext, topics: dict[str, TopicInfo]) -> list[str]:
    """The internal topics the member may not create (CREATE on the cluster, else on each topic), in Kafka's
    HashMap order: while there is one, Kafka creates none of them."""
    if ctx.authorize_cluster(AclOperation.CREATE):
        return []
    allowed = ctx.authorized_names(AclOperation.CREATE, ResourceType.TOPIC, topics)
    return [name for name in hash_map_order(topics) if name not in allowed]


def _create_internal_topics(ctx: RequestContext, topics: dict[str, TopicInfo]) -> str:
    """AutoTopicCreationManager.createStreamsInternalTopics, after the heartbeat's answer: the status detail's
    "; Creation failed: ..." suffix for the earlier failures of these topics, then a new attempt for each."""
    errors = _CREATION_ERRORS.setdefault(ctx.cluster, {})
    failed = [f"{name} ({errors[name]})" for name in hash_map_order(topics) if name in errors]
    for name, info in topics.items():
        try:
            ctx.cluster.create_topic(name, info.partitions, info.replication_factor or -1, dict(info.configs))
            errors.pop(name, None)
        except KafkaError as error:
            if error.code is not ErrorCode.TOPIC_ALREADY_EXISTS:
                errors[name] = error.message or error.code.name
    return f"; Creation failed: {', '.join(failed)}." if failed else ""


def handle(request: StreamsGroupHeartbeatRequest, ctx: RequestContext) -> StreamsGroupHeartbeatResponse:
    cluster = ctx.cluster
    if not streams_groups_enabled(ctx):
        return _error(ErrorCode.UNSUPPORTED_VERSION)
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return _error(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if request.topology is not None:
        names = _required_topics(request.topology)
        refusal = _topology_refusal(names)
        if refusal is not None:
            return _error(ErrorCode.STREAMS_INVALID_TOPOLOGY, refusal)
        if len(ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, names)) < len(names):
            return _error(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
    error = coordinator_error(ctx, request.group_id)
    if error is not None:
        return _error(error)
    endpoint = request.user_endpoint
    result = cluster.groups.streams_heartbeat(
        request.group_id, request.member_id, request.member_epoch,
        partitions_of=lambda name: len(topic.partitions) if (topic := cluster.topic(name)) is not None else None,
        instance_id=request.instance_id, rack_id=request.rack_id, rebalance_timeout_ms=request.rebalance_timeout_ms,
        topology=_topology(request.topology), owned_active=_tasks(request.active_tasks),
        owned_standby=_tasks(request.standby_tasks), owned_warmup=_tasks(request.warmup_tasks),
        process_id=request.process_id, user_endpoint=None if endpoint is None else (endpoint.host, endpoint.port),
        client_tags=None if request.client_tags is None else {kv.key: kv.value for kv in request.client_tags},
        shutdown_application=request.shutdown_application,
        endpoint_information_epoch=request.endpoint_information_epoch, client_id=ctx.client_id or "",
        client_host=ctx.client_host,
        uses_regex=request.topology is not None and any(s.source_topic_regex for s in request.topology.subtopologies),
        task_offsets=request.task_offsets is not None, task_end_offsets=request.task_end_offsets is not None)
    if result.error is not ErrorCode.NONE:
        return _error(result.error, result.message)
    if result.topics_to_create:
        unauthorized = _create_unauthorized(ctx, result.topics_to_create)
        if unauthorized:
            suffix = f"; Unauthorized to CREATE on topics {', '.join(unauthorized)}."
        else:
            suffix = _create_internal_topics(ctx, result.topics_to_create)
        result.status = [(code, detail + suffix if code == StatusCode.MISSING_INTERNAL_TOPICS else detail)
                         for code, detail in result.status]
    assignment = result.assignment
    endpoints = None
    if result.partitions_by_user_endpoint is not None:
        to_partitions = _Response.EndpointToPartitions
        endpoints = [to_partitions(user_endpoint=to_partitions.Endpoint(host=host, port=port),
                                   active_partitions=_topic_partitions(active),
                                   standby_partitions=_topic_partitions(standby))
            for (host, port), active, standby in result.partitions_by_user_endpoint]
    return _Response(
        throttle_time_ms=0, error_code=0, error_message=None, member_id=result.member_id,
        member_epoch=result.member_epoch, heartbeat_interval_ms=result.heartbeat_interval_ms,
        acceptable_recovery_lag=0, task_offset_interval_ms=0,
        status=[_Response.Status(status_code=code, status_detail=detail) for code, detail in result.status],
        active_tasks=None if assignment is None else _task_ids(assignment.active),
        standby_tasks=None if assignment is None else _task_ids(assignment.standby),
        warmup_tasks=None if assignment is None else _task_ids(assignment.warmup),
        endpoint_information_epoch=result.endpoint_information_epoch, partitions_by_user_endpoint=endpoints)
