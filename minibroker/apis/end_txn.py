"""EndTxn (26): commit or abort a transaction.

Versions 0-5: v2 may answer PRODUCER_FENCED (INVALID_PRODUCER_EPOCH before); v3 is flexible; v4 may answer
TRANSACTION_ABORTABLE (KIP-890 part 1); v5 is a transactions V2 client (KIP-890 part 2,
TransactionVersion.transactionVersionForEndTxn, whatever `transaction.version` the cluster finalized): the
coordinator bumps the epoch at every commit or abort and the answer carries the producer id and epoch to use
next (-1 on an error). Mirrors KafkaApis.handleEndTxnRequest and TransactionCoordinator.handleEndTransaction.

With an authorizer: WRITE on the transactional id, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

from ..protocol.errors import ErrorCode
from ..protocol.messages import EndTxnRequest, EndTxnResponse
from .context import RequestContext
from .txn_common import coordinator_error, for_version, may_write

API_KEY = 26
MIN_VERSION, MAX_VERSION = 0, 5

PRODUCER_FENCED_FROM = 2
TRANSACTIONS_V2_FROM = 5


def handle(request: EndTxnRequest, ctx: RequestContext) -> EndTxnResponse:
    producer_id, epoch = -1, -1
    if not may_write(ctx, request.transactional_id):
        error = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif not request.transactional_id:
        error = ErrorCode.INVALID_REQUEST
    elif (refused := coordinator_error(ctx, request.transactional_id)) is not None:
        error = refused
    elif ctx.api_version >= TRANSACTIONS_V2_FROM:
        error, producer_id, epoch = ctx.cluster.transactions.end_txn_v2(
            request.transactional_id, request.producer_id, request.producer_epoch, request.committed)
    else:
        error = ctx.cluster.transactions.end_txn(request.transactional_id, request.producer_id,
                                                 request.producer_epoch, request.committed)
    return EndTxnResponse(throttle_time_ms=0, error_code=for_version(error, ctx.api_version, PRODUCER_FENCED_FROM),
                          producer_id=producer_id, producer_epoch=epoch)
