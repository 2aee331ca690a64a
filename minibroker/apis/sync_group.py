"""SyncGroup (14): the leader hands out assignments; every member receives its own.

Versions 0-5: v1 adds the throttle time; v3 the group instance id (static membership); v4 is flexible; v5 has
the client send the protocol type and name and the broker answer them (KIP-559). Mirrors
KafkaApis.handleSyncGroupRequest and GroupMetadataManager's classic group sync.

Needs READ on the group, else GROUP_AUTHORIZATION_FAILED with an empty assignment and nothing handed out.
Before that, a v5+ request without a protocol type or name is refused INCONSISTENT_GROUP_PROTOCOL
(SyncGroupRequest.areMandatoryProtocolTypeAndNamePresent). A classic member of a KIP-848 consumer group gets
the assignment the broker computed for it, in the consumer protocol's embedded format
(GroupMetadataManager.classicGroupSyncToConsumerGroup).
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..core.classic_coordinator import SyncResult
from ..core.pending import Pending
from ..protocol.errors import ErrorCode
from ..protocol.messages import SyncGroupRequest, SyncGroupResponse
from .context import RequestContext
from .group_common import coordinator_error

API_KEY = 14
MIN_VERSION, MAX_VERSION = 0, 5

# KIP-559: from v5 the protocol type and name are sent, and must be (null is refused, an empty string is not).
PROTOCOL_REQUIRED_FROM = 5


def handle(request: SyncGroupRequest, ctx: RequestContext) -> SyncGroupResponse | Pending:
    version = ctx.api_version
    if version >= PROTOCOL_REQUIRED_FROM and (request.protocol_type is None or request.protocol_name is None):
        # KafkaApis.handleSyncGroupRequest checks this before the group's READ and before the coordinator
        return _response(SyncResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL))
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return _response(SyncResult(ErrorCode.GROUP_AUTHORIZATION_FAILED))
    error = coordinator_error(ctx, request.group_id)
    if error is not None:
        return _response(SyncResult(error))
    result = ctx.cluster.groups.sync(
        group_id=request.group_id,
        generation_id=request.generation_id,
        member_id=request.member_id,
        group_instance_id=request.group_instance_id if version >= 3 else None,
        protocol_type=request.protocol_type if version >= PROTOCOL_REQUIRED_FROM else None,
        protocol_name=request.protocol_name if version >= PROTOCOL_REQUIRED_FROM else None,
        assignments=[(a.member_id, bytes(a.assignment)) for a in request.assignments],
    )
    if isinstance(result, Pending):
        return result.then(_response)
    return _response(result)


def _response(result: SyncResult) -> SyncGroupResponse:
    """A refusal is SyncGroupRequest.getErrorResponse: no protocol type or name, an empty assignment."""
    return SyncGroupResponse(throttle_time_ms=0, error_code=result.error, protocol_type=result.protocol_type,
                             protocol_name=result.protocol_name, assignment=result.assignment)
