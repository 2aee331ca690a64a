"""ShareAcknowledge (79): accept, release, reject or renew records a share consumer holds (KIP-932).

Versions 1-2 (Kafka 4.1+; version 0 was 4.0's early access): v2 adds IsRenewAck and answers the acquisition
lock duration (KIP-1222). Mirrors KafkaApis.handleShareAcknowledgeRequest and SharePartition.acknowledge
(core/share_partition.py).

UNSUPPORTED_VERSION unless `share.version` is finalized at 1 or more; READ on the group, else
GROUP_AUTHORIZATION_FAILED; READ on each topic, else that partition's TOPIC_AUTHORIZATION_FAILED. The share
session must exist (SHARE_SESSION_NOT_FOUND) and the epoch must be its next one, never 0
(INVALID_SHARE_SESSION_EPOCH); epoch -1 acknowledges, then closes the session and releases what the member
still holds. An acknowledgement of records the member does not hold is INVALID_RECORD_STATE for its partition.

A renewal (AcknowledgeType RENEW, KIP-1222) restarts the records' locks. It needs v2 and IsRenewAck (else
INVALID_REQUEST for its partition, whose batches are then not applied, as KafkaApis.validateAcknowledgementBatches
refuses them) and the group's `share.renew.acknowledge.enable` (else INVALID_RECORD_STATE, SharePartition's text).
"""

from __future__ import annotations

import uuid
from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..core.share_partition import RENEW_DISABLED, AcknowledgeType
from ..core.share_sessions import FINAL_EPOCH, INITIAL_EPOCH
from ..protocol.errors import ErrorCode
from ..protocol.messages import ShareAcknowledgeRequest, ShareAcknowledgeResponse
from .context import RequestContext
from .share_common import acknowledge_partition, share_enabled, share_state

API_KEY = 79
MIN_VERSION, MAX_VERSION = 1, 2

LOCK_TIMEOUT_FROM = 2  # AcquisitionLockTimeoutMs in the answer
RENEW_FROM = 2  # IsRenewAck, and with it AcknowledgeType RENEW, in ShareFetch and ShareAcknowledge

# acknowledge_partition's refusals that come before a partition's batches are looked at
_TOPIC_REFUSALS = (ErrorCode.UNKNOWN_TOPIC_ID, ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                   ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)

_Topic = ShareAcknowledgeResponse.ShareAcknowledgeTopicResponse
_Partition = _Topic.PartitionData


def _answer(ctx: RequestContext, code: ErrorCode, topics: list[Any], lock_ms: int = 0) -> ShareAcknowledgeResponse:
    extra = {"acquisition_lock_timeout_ms": lock_ms} if ctx.api_version >= LOCK_TIMEOUT_FROM else {}
    return ShareAcknowledgeResponse(throttle_time_ms=0, error_code=code, error_message=None, responses=topics,
                                    node_endpoints=[], **extra)


def handle(request: ShareAcknowledgeRequest, ctx: RequestContext) -> ShareAcknowledgeResponse:
    cluster = ctx.cluster
    if not share_enabled(cluster):
        return _answer(ctx, ErrorCode.UNSUPPORTED_VERSION, [])
    group_id, member_id = request.group_id or "", request.member_id or ""
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, group_id):
        return _answer(ctx, ErrorCode.GROUP_AUTHORIZATION_FAILED, [])
    state = share_state(cluster)
    epoch = request.share_session_epoch
    if epoch == INITIAL_EPOCH:
        return _answer(ctx, ErrorCode.INVALID_SHARE_SESSION_EPOCH, [])
    error = state.sessions.check(group_id, member_id, epoch)
    if error is not ErrorCode.NONE:
        return _answer(ctx, error, [])
    lock_ms = state.coordinator.config_int(group_id, "share.record.lock.duration.ms")
    topics = []
    for topic in request.topics:
        parts = []
        for part in topic.partitions:
            batches = [(b.first_offset, b.last_offset, list(b.acknowledge_types)) for b in part.acknowledgement_batches]
            code, message, _ = acknowledge_batches(ctx, group_id, member_id, topic.topic_id,
                                                   part.partition_index, batches, renewing(ctx, request))
            # CurrentLeader: LeaderIdAndEpoch's defaults, as Kafka 4.3.1 answers but for NOT_LEADER_OR_FOLLOWER
            parts.append(_Partition(partition_index=part.partition_index, error_code=code, error_message=message,
                                    current_leader=_Partition.LeaderIdAndEpoch(leader_id=0, leader_epoch=0)))
        topics.append(_Topic(topic_id=topic.topic_id, partitions=parts))
    if epoch == FINAL_EPOCH:
        state.sessions.close(group_id, member_id)
        state.coordinator.release_member(group_id, member_id)
    else:
        session = state.sessions.get(group_id, member_id)
        if session is not None:
            state.sessions.advance(session)
    return _answer(ctx, ErrorCode.NONE, topics, lock_ms)


def renewing(ctx: RequestContext, request: Any) -> bool:
    """Whether a ShareFetch or ShareAcknowledge may carry renewals: v2 with IsRenewAck set."""
    return ctx.api_version >= RENEW_FROM and bool(request.is_renew_ack)


def acknowledge_batches(ctx: RequestContext, group_id: str, member_id: str, topic_id: uuid.UUID, index: int,
                        batches: list[tuple[int, int, list[int]]],
                        renew_allowed: bool) -> tuple[ErrorCode, str | None, tuple[int, int]]:
    """acknowledge_partition, with a renewal's checks first: (error, message, (leader id, leader epoch))."""
    if any(AcknowledgeType.RENEW in types for _, _, types in batches):
        # the partition's own refusals and the share partition's existence, with no batch applied
        code, message, leader = acknowledge_partition(ctx, group_id, member_id, topic_id, index, [])
        if code in _TOPIC_REFUSALS:
            return code, message, leader
        if not renew_allowed:
            return ErrorCode.INVALID_REQUEST, None, leader
        if code is not ErrorCode.NONE:
            return code, message, leader
        if ctx.cluster.config.group_value(group_id, "share.renew.acknowledge.enable") not in (True, "true"):
            return ErrorCode.INVALID_RECORD_STATE, RENEW_DISABLED, leader
    return acknowledge_partition(ctx, group_id, member_id, topic_id, index, batches)
