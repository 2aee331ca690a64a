"""Heartbeat (12): keep a member's session alive; learn of a rebalance.

Versions 0-4: v1 adds the throttle time; v3 the group instance id (static membership); v4 is flexible. Mirrors
KafkaApis.handleHeartbeatRequest and the classic group coordinator's heartbeat.

Needs READ on the group, else GROUP_AUTHORIZATION_FAILED and the session is not touched. A classic member of a
KIP-848 consumer group is told REBALANCE_IN_PROGRESS when it must rejoin to reconcile
(GroupMetadataManager.classicGroupHeartbeatToConsumerGroup).
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode
from ..protocol.messages import HeartbeatRequest, HeartbeatResponse
from .context import RequestContext
from .group_common import coordinator_error

API_KEY = 12
MIN_VERSION, MAX_VERSION = 0, 4


def handle(request: HeartbeatRequest, ctx: RequestContext) -> HeartbeatResponse:
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return HeartbeatResponse(throttle_time_ms=0, error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    error = coordinator_error(ctx, request.group_id)
    if error is None:
        error = ctx.cluster.groups.heartbeat(
            request.group_id, request.generation_id, request.member_id,
            request.group_instance_id if ctx.api_version >= 3 else None,
        )
    return HeartbeatResponse(throttle_time_ms=0, error_code=error)
