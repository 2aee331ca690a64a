"""FindCoordinator (10): the node coordinating a group or a transactional id.

Versions 0-6: v1 adds the key type, the throttle time and error messages; v3 is flexible; v4 batches keys
(KIP-699); v5 may answer TRANSACTION_ABORTABLE (KIP-890); v6 adds share keys (KIP-932). Mirrors
KafkaApis.handleFindCoordinatorRequest and KafkaApis.getCoordinator.

A group key needs DESCRIBE on the group (else GROUP_AUTHORIZATION_FAILED) and a transactional key DESCRIBE on
the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED), checked per key for the batched v4+ and for
the single key of v0-3. A share key ("groupId:topicId:partition", SharePartitionKey, which brokers send to find
the share coordinator of a share partition's state) is INVALID_REQUEST below v6 and when malformed; it needs
CLUSTER_ACTION on the cluster, whose refusal fails the whole request (CLUSTER_AUTHORIZATION_FAILED for every key).
Its coordinator is the leader of the key's partition of `__share_group_state`; the topic id need not exist.
"""

from __future__ import annotations

import base64
import binascii
import re

from ..core.acls import AclOperation, ResourceType
from ..core.cluster_model import GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC, Node, coordinator_partition
from ..protocol.errors import ErrorCode
from ..protocol.messages import FindCoordinatorRequest, FindCoordinatorResponse
from .context import RequestContext

API_KEY = 10
MIN_VERSION, MAX_VERSION = 0, 6

GROUP, TRANSACTION, SHARE = 0, 1, 2
SHARE_FROM = 6  # the first version taking share keys
SHARE_GROUP_STATE_TOPIC = "__share_group_state"

# v1-3 carry Errors.message() in error_message (KafkaApis.handleFindCoordinatorRequestLessThanV4 sets it on
# success, FindCoordinatorResponse.prepareOldResponse on a refusal): an error's default text, and for NONE,
# which has no exception, the enum's name. v4+ leave each key's message at the schema's default "" (Kafka
# 4.3.1 answers so), except on the whole-request error path (an unknown key type), which fills Errors.message().
_OLD_RESPONSE_MESSAGES = {
    ErrorCode.NONE: "NONE",
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "Transactional Id authorization failed.",
    ErrorCode.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
    ErrorCode.INVALID_REQUEST: "This most likely occurs because of a request being malformed by the client library "
                               "or the message was sent to an incompatible broker. See the broker logs for more "
                               "details.",
}


def handle(request: FindCoordinatorRequest, ctx: RequestContext) -> FindCoordinatorResponse:
    key_type = request.key_type if ctx.api_version >= 1 else GROUP
    if ctx.api_version >= 4:
        refusal = None
        if key_type not in (GROUP, TRANSACTION, SHARE):
            # CoordinatorType.forId throws for the first key
            refusal = ErrorCode.INVALID_REQUEST
        elif key_type == SHARE and ctx.api_version >= SHARE_FROM \
                and not ctx.authorize_cluster(AclOperation.CLUSTER_ACTION):
            # AuthHelper.authorizeClusterOperation throws for the first share key
            refusal = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        if refusal is not None:
            # FindCoordinatorRequest.getErrorResponse answers every key with the error and its default message
            message = _OLD_RESPONSE_MESSAGES[refusal]
            return FindCoordinatorResponse(throttle_time_ms=0, coordinators=[
                FindCoordinatorResponse.Coordinator(key=key, node_id=-1, host="", port=-1,
                                                    error_code=refusal, error_message=message)
                for key in request.coordinator_keys])
        coordinators = []
        for key in request.coordinator_keys:
            code, node = _lookup(ctx, key, key_type)
            coordinators.append(FindCoordinatorResponse.Coordinator(
                key=key, node_id=node.node_id if node else -1, host=ctx.address(node)[0] if node else "",
                port=ctx.address(node)[1] if node else -1, error_code=code, error_message=""))
        return FindCoordinatorResponse(throttle_time_ms=0, coordinators=coordinators)
    code, node = _lookup(ctx, request.key, key_type)
    return FindCoordinatorResponse(throttle_time_ms=0, error_code=code, error_message=_OLD_RESPONSE_MESSAGES.get(code),
                                   node_id=node.node_id if node else -1,
                                   host=ctx.address(node)[0] if node else "", port=ctx.address(node)[1] if node else -1)


def _lookup(ctx: RequestContext, key: str, key_type: int) -> tuple[ErrorCode, Node | None]:
    # KafkaApis.getCoordinator: a share key below v6 is refused first (before any authorization, Kafka 4.3.1 answers
    # so to a principal with no ACLs), then the key's DESCRIBE comes before anything else is looked at
    if key_type == SHARE:
        if ctx.api_version < SHARE_FROM:
            return ErrorCode.INVALID_REQUEST, None
        canonical = share_coordinator_key(key)
        if canonical is None:
            return ErrorCode.INVALID_REQUEST, None
        return ErrorCode.NONE, _share_coordinator(ctx, canonical)
    if key_type == GROUP and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, key):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED, None
    if key_type == TRANSACTION and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key):
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None
    if key_type not in (GROUP, TRANSACTION):
        return ErrorCode.INVALID_REQUEST, None
    internal_topic = GROUP_METADATA_TOPIC if key_type == GROUP else TRANSACTION_STATE_TOPIC
    return ErrorCode.NONE, ctx.cluster.coordinator_node(key, internal_topic)


_BASE64_URL = re.compile(r"[A-Za-z0-9_-]{22}(==)?")
_JAVA_INT = re.compile(r"[+-]?\d+")  # Integer.parseInt: a sign, then decimal digits (any script's, as Java)


def share_coordinator_key(key: str) -> str | None:
    """A share key ("groupId:topicId:partition") as SharePartitionKey.asCoordinatorKey writes it back, or None when
    SharePartitionKey.validate refuses it.

    As Java's String.split(":"), trailing empty parts are dropped ("g:id:0:" is valid); the group id is trimmed as
    String.trim (must not be empty), the topic id is Uuid.fromString's (URL-safe base64 of 16 bytes, padded or
    not, at most 24 characters) and the partition Integer.parseInt's (an int, "-1" and "+3" included).
    """
    parts = key.split(":")
    while parts and parts[-1] == "":
        parts.pop()
    if len(parts) != 3:
        return None
    group_id, topic_id, partition = parts
    group_id = _java_trim(group_id)
    if not group_id or not _BASE64_URL.fullmatch(topic_id) or not _JAVA_INT.fullmatch(partition):
        return None
    index = int(partition)
    if not -2**31 <= index < 2**31:
        return None
    try:
        raw = base64.urlsafe_b64decode(topic_id[:22] + "==")
    except (binascii.Error, ValueError):  # pragma: no cover - the pattern admits only decodable text
        return None
    canonical_id = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    return f"{group_id}:{canonical_id}:{index}"


def _java_trim(text: str) -> str:
    """String.trim: every character up to U+0020 off both ends."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def _share_coordinator(ctx: RequestContext, canonical_key: str) -> Node:
    """ShareCoordinatorService.partitionFor: the leader of partition abs(hash of the key) of `__share_group_state`
    (share.coordinator.state.topic.num.partitions). minibroker keeps no share-state topic: the partition's leader is
    the node the internal topic would give it (partition p led by node p % nodes), unless the topic exists."""
    cluster = ctx.cluster
    count = int(cluster.config["share.coordinator.state.topic.num.partitions"])
    index = coordinator_partition(canonical_key, count)
    partition = cluster.find_partition(SHARE_GROUP_STATE_TOPIC, index)
    if partition is not None:
        return cluster.node(partition.leader_id) or cluster.nodes[0]
    return cluster.nodes[index % len(cluster.nodes)]
