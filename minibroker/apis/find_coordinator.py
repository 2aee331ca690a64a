"""FindCoordinator (10): the node coordinating a group or a transactional id.

Versions 0-6: v1 adds the key type, the throttle time and error messages; v3 is flexible; v4 batches keys
(KIP-699); v5 may answer TRANSACTION_ABORTABLE (KIP-890); v6 adds share group keys (KIP-932). Mirrors
KafkaApis.handleFindCoordinatorRequest and KafkaApis.getCoordinator.

A group key needs DESCRIBE on the group (else GROUP_AUTHORIZATION_FAILED) and a transactional key DESCRIBE on
the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED), checked per key for the batched v4+ and for
the single key of v0-3.
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..core.cluster_model import GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC
from ..protocol.errors import ErrorCode
from ..protocol.messages import FindCoordinatorRequest, FindCoordinatorResponse
from .context import RequestContext

API_KEY = 10
MIN_VERSION, MAX_VERSION = 0, 6

GROUP, TRANSACTION = 0, 1

# v1-3 carry Errors.message() in error_message (KafkaApis.handleFindCoordinatorRequestLessThanV4 sets it on
# success, FindCoordinatorResponse.prepareOldResponse on a refusal): an error's default text, and for NONE,
# which has no exception, the enum's name. v4+ leave each key's message at the schema's default "" (Kafka
# 4.3.1 answers so), except on the whole-request error path (an unknown key type), which fills Errors.message().
_OLD_RESPONSE_MESSAGES = {
    ErrorCode.NONE: "NONE",
    ErrorCode.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
    ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "Transactional Id authorization failed.",
    ErrorCode.INVALID_REQUEST: "This most likely occurs because of a request being malformed by the client library "
                               "or the message was sent to an incompatible broker. See the broker logs for more "
                               "details.",
}


def handle(request: FindCoordinatorRequest, ctx: RequestContext) -> FindCoordinatorResponse:
    key_type = request.key_type if ctx.api_version >= 1 else GROUP
    if ctx.api_version >= 4:
        if key_type not in (GROUP, TRANSACTION):
            # CoordinatorType.forId throws for the first key: FindCoordinatorRequest.getErrorResponse answers
            # every key with the error and its default message
            message = _OLD_RESPONSE_MESSAGES[ErrorCode.INVALID_REQUEST]
            return FindCoordinatorResponse(throttle_time_ms=0, coordinators=[
                FindCoordinatorResponse.Coordinator(key=key, node_id=-1, host="", port=-1,
                                                    error_code=ErrorCode.INVALID_REQUEST, error_message=message)
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


def _lookup(ctx: RequestContext, key: str, key_type: int):  # type: ignore[no-untyped-def]
    # KafkaApis.getCoordinator: the key's DESCRIBE comes before anything else is looked at
    if key_type == GROUP and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, key):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED, None
    if key_type == TRANSACTION and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key):
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, None
    if key_type not in (GROUP, TRANSACTION):
        return ErrorCode.INVALID_REQUEST, None
    internal_topic = GROUP_METADATA_TOPIC if key_type == GROUP else TRANSACTION_STATE_TOPIC
    return ErrorCode.NONE, ctx.cluster.coordinator_node(key, internal_topic)
