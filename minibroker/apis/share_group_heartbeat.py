"""ShareGroupHeartbeat (76): join, heartbeat in and leave a share group (KIP-932).

Version 1 (Kafka 4.1+; version 0 was 4.0's early access and is gone). Mirrors KafkaApis.handleShareGroupHeartbeat
and GroupMetadataManager's share-group heartbeat (core/share_groups.py).

UNSUPPORTED_VERSION unless `share.version` is finalized at 1 or more; READ on the group, else
GROUP_AUTHORIZATION_FAILED; DESCRIBE on every subscribed topic, else TOPIC_AUTHORIZATION_FAILED. Topics travel by
id on the wire and by name inside the coordinator. Every member subscribed to a topic may be given the same
partitions (the simple assignor); a member leaving (epoch -1) or timing out releases the records it holds.
"""

from __future__ import annotations

from typing import Any

from ..protocol.errors import ErrorCode
from ..protocol.messages import ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse
from .context import RequestContext
from .group_common import assignment_by_topic_id, heartbeat_refusal
from .share_common import share_enabled, share_state, start_offset

API_KEY = 76
MIN_VERSION, MAX_VERSION = 1, 1


def _error(code: ErrorCode, message: str | None = None) -> ShareGroupHeartbeatResponse:
    return ShareGroupHeartbeatResponse(throttle_time_ms=0, error_code=code, error_message=message, member_id=None,
                                       member_epoch=0, heartbeat_interval_ms=0, assignment=None)


def handle(request: ShareGroupHeartbeatRequest, ctx: RequestContext) -> ShareGroupHeartbeatResponse:
    cluster = ctx.cluster
    if not share_enabled(cluster):
        return _error(ErrorCode.UNSUPPORTED_VERSION)
    error = heartbeat_refusal(ctx, request.group_id, request.subscribed_topic_names)
    if error is not None:
        return _error(error)
    if cluster.groups.group_type(request.group_id) in ("classic", "consumer"):
        return _error(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {request.group_id} is not a share group.")
    topics = cluster.partition_counts()
    result = share_state(cluster).coordinator.heartbeat(
        request.group_id, request.member_id, request.member_epoch, rack_id=request.rack_id,
        subscribed_topic_names=request.subscribed_topic_names, topics=topics, client_id=ctx.client_id or "",
        client_host=ctx.client_host,
        start_offset=lambda group, topic, index: start_offset(cluster, group, topic, index))
    if result.error is not ErrorCode.NONE:
        return _error(result.error, result.message)
    assignment: Any = None
    if result.assignment is not None:
        parts = assignment_by_topic_id(ctx, result.assignment, ShareGroupHeartbeatResponse.Assignment.TopicPartitions)
        assignment = ShareGroupHeartbeatResponse.Assignment(topic_partitions=parts)
    return ShareGroupHeartbeatResponse(throttle_time_ms=0, error_code=0, error_message=None,
                                       member_id=result.member_id, member_epoch=result.member_epoch,
                                       heartbeat_interval_ms=result.heartbeat_interval_ms, assignment=assignment)
