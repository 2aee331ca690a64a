"""JoinGroup (11): join a classic group; answered when the rebalance's join phase ends.

Versions 0-9: v1 adds the rebalance timeout; v2 the throttle time; v4 has a new member rejoin with the member id
it was given (MEMBER_ID_REQUIRED); v5 the group instance id (static membership); v6 is flexible; v7 answers the
protocol type (KIP-559); v8 adds the reason (KIP-800); v9 SkipAssignment. Mirrors
KafkaApis.handleJoinGroupRequest and GroupMetadataManager's classic group join.

Joining a KIP-848 consumer group that has members makes a classic-protocol member of it (online migration,
GroupMetadataManager.classicGroupJoinToConsumerGroup): answered at once with the member epoch as generation,
no leader and the assignment the broker computed (sent by SyncGroup).

Needs READ on the group, else JoinGroupRequest.getErrorResponse with GROUP_AUTHORIZATION_FAILED: no member id,
generation -1, no members, and nothing joins.
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..core.classic_coordinator import JoinResult
from ..core.pending import Pending
from ..protocol.errors import ErrorCode
from ..protocol.messages import JoinGroupRequest, JoinGroupResponse
from .context import RequestContext
from .group_common import coordinator_error
from .share_common import is_share_group

API_KEY = 11
MIN_VERSION, MAX_VERSION = 0, 9

# KIP-394: from v4 a new member must first fetch its id (MEMBER_ID_REQUIRED), then join with it.
REQUIRE_KNOWN_MEMBER_ID_FROM = 4
# KIP-814: from v9 a rejoining static leader can be told to skip the assignment.
SKIP_ASSIGNMENT_FROM = 9


def handle(request: JoinGroupRequest, ctx: RequestContext) -> JoinGroupResponse | Pending:
    version = ctx.api_version
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return _response(JoinResult(ErrorCode.GROUP_AUTHORIZATION_FAILED), version)
    error = coordinator_error(ctx, request.group_id)
    if error is not None:
        return _response(JoinResult(error, request.member_id), version)
    if is_share_group(ctx.cluster, request.group_id):  # as Kafka 4.3.1 refuses a classic join of a share group
        return _response(JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, request.member_id), version)
    result = ctx.cluster.groups.join(
        group_id=request.group_id,
        member_id=request.member_id,
        group_instance_id=request.group_instance_id if version >= 5 else None,
        client_id=ctx.client_id or "",
        client_host=ctx.client_host,
        session_timeout_ms=request.session_timeout_ms,
        rebalance_timeout_ms=request.rebalance_timeout_ms if version >= 1 else -1,
        protocol_type=request.protocol_type,
        protocols=[(p.name, bytes(p.metadata)) for p in request.protocols],
        require_known_member_id=version >= REQUIRE_KNOWN_MEMBER_ID_FROM,
        supports_skip_assignment=version >= SKIP_ASSIGNMENT_FROM,
        # a classic member of a KIP-848 consumer group is assigned on the broker, from every topic's size
        topics=ctx.cluster.partition_counts(),
    )
    if isinstance(result, Pending):
        return result.then(lambda outcome: _response(outcome, version))
    return _response(result, version)


def _response(result: JoinResult, version: int) -> JoinGroupResponse:
    error = result.error
    if error == ErrorCode.FENCED_INSTANCE_ID and version < 5:
        error = ErrorCode.UNKNOWN_MEMBER_ID  # clients before static membership do not know the code
    return JoinGroupResponse(
        throttle_time_ms=0,
        error_code=error,
        generation_id=result.generation_id,
        protocol_type=result.protocol_type,
        protocol_name=result.protocol_name if (result.protocol_name is not None or version >= 7) else "",
        leader=result.leader,
        skip_assignment=result.skip_assignment,
        member_id=result.member_id,
        members=[JoinGroupResponse.JoinGroupResponseMember(member_id=member_id, group_instance_id=instance_id,
                                                           metadata=metadata)
                 for member_id, instance_id, metadata in result.members],
    )
