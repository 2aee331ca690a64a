"""AddOffsetsToTxn (25): a consumer group's offsets join a transaction."""

from __future__ import annotations

from ..protocol.errors import ErrorCode
from ..protocol.messages import AddOffsetsToTxnRequest, AddOffsetsToTxnResponse
from .context import RequestContext
from .txn_common import coordinator_error, for_version

API_KEY = 25
MIN_VERSION, MAX_VERSION = 0, 4

PRODUCER_FENCED_FROM = 2


def handle(request: AddOffsetsToTxnRequest, ctx: RequestContext) -> AddOffsetsToTxnResponse:
    if not request.transactional_id:
        error = ErrorCode.INVALID_REQUEST
    else:
        error = coordinator_error(ctx, request.transactional_id) or ctx.cluster.transactions.add_offsets(
            request.transactional_id, request.producer_id, request.producer_epoch, request.group_id)
    return AddOffsetsToTxnResponse(throttle_time_ms=0,
                                   error_code=for_version(error, ctx.api_version, PRODUCER_FENCED_FROM))
