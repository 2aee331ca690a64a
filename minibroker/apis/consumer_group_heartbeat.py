"""ConsumerGroupHeartbeat (68): join, heartbeat in and leave a KIP-848 consumer group.

Versions 0-1 (Kafka 4.x): v1 adds the regex subscription and requires the client to name itself (KIP-1082).
Mirrors KafkaApis.handleConsumerGroupHeartbeat and GroupMetadataManager's state machine
(core/consumer_groups.py).

UNSUPPORTED_VERSION unless `group.coordinator.rebalance.protocols` contains `consumer`; READ on the group, else
GROUP_AUTHORIZATION_FAILED; DESCRIBE on every subscribed topic name, else TOPIC_AUTHORIZATION_FAILED; a regex
subscription resolves only to topics the caller may DESCRIBE. Topics travel by id on the wire and by name
inside the coordinator. A first heartbeat to a classic group of protocol type `consumer` upgrades it online
under `group.consumer.migration.policy`; the last member of this protocol leaving downgrades it
(group_coordinator.py).
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..core.consumer_groups import Assignment, consumer_protocol_enabled
from ..protocol.errors import ErrorCode
from ..protocol.messages import ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse
from .context import RequestContext
from .group_common import assignment_by_topic_id, heartbeat_refusal
from .share_common import is_share_group

API_KEY = 68
MIN_VERSION, MAX_VERSION = 0, 1

REGEX_FROM = 1
CLIENT_MEMBER_ID_FROM = 1  # KIP-1082


def _error(code: ErrorCode, message: str | None = None) -> ConsumerGroupHeartbeatResponse:
    return ConsumerGroupHeartbeatResponse(throttle_time_ms=0, error_code=code, error_message=message,
                                          member_id=None, member_epoch=0, heartbeat_interval_ms=0, assignment=None)


def handle(request: ConsumerGroupHeartbeatRequest, ctx: RequestContext) -> ConsumerGroupHeartbeatResponse:
    cluster = ctx.cluster
    if not consumer_protocol_enabled(cluster.config):
        return _error(ErrorCode.UNSUPPORTED_VERSION)
    error = heartbeat_refusal(ctx, request.group_id, request.subscribed_topic_names)
    if error is not None:
        return _error(error)
    if is_share_group(cluster, request.group_id):
        return _error(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {request.group_id} is not a consumer group.")
    if ctx.api_version >= CLIENT_MEMBER_ID_FROM and not (request.member_id or "").strip():
        return _error(ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
    regex = request.subscribed_topic_regex if ctx.api_version >= REGEX_FROM else None
    topics = cluster.partition_counts()
    if regex is not None:
        visible = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, topics)
        topics = {name: count for name, count in topics.items() if name in visible}
    owned: Assignment | None = None
    if request.topic_partitions is not None:
        owned = {}
        for entry in request.topic_partitions:
            topic = cluster.topic_by_id(entry.topic_id)
            if topic is not None:  # a deleted topic's partitions are owned by nobody
                owned.setdefault(topic.name, set()).update(entry.partitions)
    result = cluster.groups.consumer_heartbeat(
        request.group_id, request.member_id, request.member_epoch,
        instance_id=request.instance_id, rack_id=request.rack_id,
        rebalance_timeout_ms=request.rebalance_timeout_ms,
        subscribed_topic_names=request.subscribed_topic_names, subscribed_topic_regex=regex,
        server_assignor=request.server_assignor, owned=owned, client_id=ctx.client_id or "",
        client_host=ctx.client_host, topics=topics)
    if result.error is not ErrorCode.NONE:
        return _error(result.error, result.message)
    assignment: Any = None
    if result.assignment is not None:
        entry = ConsumerGroupHeartbeatResponse.Assignment.TopicPartitions
        parts = assignment_by_topic_id(ctx, result.assignment, entry)
        assignment = ConsumerGroupHeartbeatResponse.Assignment(topic_partitions=parts)
    return ConsumerGroupHeartbeatResponse(throttle_time_ms=0, error_code=0, error_message=None,
                                          member_id=result.member_id, member_epoch=result.member_epoch,
                                          heartbeat_interval_ms=result.heartbeat_interval_ms, assignment=assignment)
