"""InitProducerId (22): a producer id and epoch for idempotent and transactional producers."""

from __future__ import annotations

from ..protocol.errors import ErrorCode
from ..protocol.messages import InitProducerIdRequest, InitProducerIdResponse
from .context import RequestContext
from .txn_common import coordinator_error, for_version

API_KEY = 22
MIN_VERSION, MAX_VERSION = 0, 5

PRODUCER_FENCED_FROM = 4


def handle(request: InitProducerIdRequest, ctx: RequestContext) -> InitProducerIdResponse:
    if request.transactional_id is None:
        # As in Kafka, an idempotent producer always gets a fresh id at epoch 0,
        # whatever (producer id, epoch) it presents.
        return InitProducerIdResponse(throttle_time_ms=0, error_code=0,
                                      producer_id=ctx.cluster.new_producer_id(), producer_epoch=0)
    error = coordinator_error(ctx, request.transactional_id)
    if error is not None:
        return InitProducerIdResponse(throttle_time_ms=0, error_code=error, producer_id=-1, producer_epoch=-1)
    expected = (request.producer_id, request.producer_epoch) if ctx.api_version >= 3 else (-1, -1)
    error, producer_id, epoch = ctx.cluster.transactions.init_producer_id(
        request.transactional_id, request.transaction_timeout_ms, *expected)
    return InitProducerIdResponse(throttle_time_ms=0,
                                  error_code=for_version(error, ctx.api_version, PRODUCER_FENCED_FROM),
                                  producer_id=producer_id if error is ErrorCode.NONE else -1,
                                  producer_epoch=epoch if error is ErrorCode.NONE else -1)
