"""EndTxn (26): commit or abort a transaction (transactions V1: the epoch is not bumped).

With an authorizer: WRITE on the transactional id, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED
(KafkaApis.handleEndTxnRequest).
"""

from __future__ import annotations

from ..protocol.errors import ErrorCode
from ..protocol.messages import EndTxnRequest, EndTxnResponse
from .context import RequestContext
from .txn_common import coordinator_error, for_version, may_write

API_KEY = 26
# v5 means transactions V2 (an epoch bump on every commit, KIP-890), which is not implemented.
MIN_VERSION, MAX_VERSION = 0, 4

PRODUCER_FENCED_FROM = 2


def handle(request: EndTxnRequest, ctx: RequestContext) -> EndTxnResponse:
    if not may_write(ctx, request.transactional_id):
        error = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif not request.transactional_id:
        error = ErrorCode.INVALID_REQUEST
    else:
        error = coordinator_error(ctx, request.transactional_id) or ctx.cluster.transactions.end_txn(
            request.transactional_id, request.producer_id, request.producer_epoch, request.committed)
    return EndTxnResponse(throttle_time_ms=0, error_code=for_version(error, ctx.api_version, PRODUCER_FENCED_FROM))
