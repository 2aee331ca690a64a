"""AddOffsetsToTxn (25): a consumer group's offsets join a transaction.

Versions 0-4: v1 is v0; v2 may answer PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before); v3 is flexible; v4 may
answer TRANSACTION_ABORTABLE (KIP-890 part 1). Transactions V2 clients (TxnOffsetCommit v5) never send it.
Mirrors KafkaApis.handleAddOffsetsToTxnRequest and TransactionCoordinator.handleAddPartitionsToTransaction for
the group's offsets partition.

With an authorizer: WRITE on the transactional id, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED; then READ on the
group, else GROUP_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode
from ..protocol.messages import AddOffsetsToTxnRequest, AddOffsetsToTxnResponse
from .context import RequestContext
from .txn_common import coordinator_error, for_version, may_write

API_KEY = 25
MIN_VERSION, MAX_VERSION = 0, 4

PRODUCER_FENCED_FROM = 2


def handle(request: AddOffsetsToTxnRequest, ctx: RequestContext) -> AddOffsetsToTxnResponse:
    if not may_write(ctx, request.transactional_id):
        error = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        error = ErrorCode.GROUP_AUTHORIZATION_FAILED
    elif not request.transactional_id:
        error = ErrorCode.INVALID_REQUEST
    else:
        error = coordinator_error(ctx, request.transactional_id) or ctx.cluster.transactions.add_offsets(
            request.transactional_id, request.producer_id, request.producer_epoch, request.group_id)
    return AddOffsetsToTxnResponse(throttle_time_ms=0,
                                   error_code=for_version(error, ctx.api_version, PRODUCER_FENCED_FROM))
