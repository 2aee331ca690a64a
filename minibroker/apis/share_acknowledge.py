"""ShareAcknowledge (79): accept, release, reject or renew records a share consumer holds (KIP-932).

Versions 1-2 (Kafka 4.1+; version 0 was 4.0's early access): v2 adds IsRenewAck and answers the acquisition
lock duration (KIP-1222). Mirrors KafkaApis.handleShareAcknowledgeRequest and SharePartition.acknowledge
(core/share_partition.py).

UNSUPPORTED_VERSION unless `share.version` is finalized at 1 or more; READ on the group, else
GROUP_AUTHORIZATION_FAILED; READ on each topic, else that partition's TOPIC_AUTHORIZATION_FAILED. The share
session must exist (SHARE_SESSION_NOT_FOUND) and the epoch must be its next one, never 0
(INVALID_SHARE_SESSION_EPOCH); epoch -1 acknowledges, then closes the session and releases what the member
still holds. An acknowledgement of records the member does not hold is INVALID_RECORD_STATE for its partition.
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..core.share_sessions import FINAL_EPOCH, INITIAL_EPOCH
from ..protocol.errors import ErrorCode
from ..protocol.messages import ShareAcknowledgeRequest, ShareAcknowledgeResponse
from .context import RequestContext
from .share_common import acknowledge_partition, share_enabled, share_state

API_KEY = 79
MIN_VERSION, MAX_VERSION = 1, 2

LOCK_TIMEOUT_FROM = 2  # AcquisitionLockTimeoutMs in the answer

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
            code, message, leader = acknowledge_partition(ctx, group_id, member_id, topic.topic_id,
                                                          part.partition_index, batches)
            parts.append(_Partition(partition_index=part.partition_index, error_code=code, error_message=message,
                                    current_leader=_Partition.LeaderIdAndEpoch(leader_id=leader[0],
                                                                               leader_epoch=leader[1])))
        topics.append(_Topic(topic_id=topic.topic_id, partitions=parts))
    if epoch == FINAL_EPOCH:
        state.sessions.close(group_id, member_id)
        state.coordinator.release_member(group_id, member_id)
    else:
        session = state.sessions.get(group_id, member_id)
        if session is not None:
            state.sessions.advance(session)
    return _answer(ctx, ErrorCode.NONE, topics, lock_ms)
