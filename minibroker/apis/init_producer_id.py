"""InitProducerId (22): a new producer id for idempotent producers."""

from __future__ import annotations

from ..protocol.errors import ErrorCode
from ..protocol.messages import InitProducerIdRequest, InitProducerIdResponse
from .context import RequestContext

API_KEY = 22
MIN_VERSION, MAX_VERSION = 0, 5


def handle(request: InitProducerIdRequest, ctx: RequestContext) -> InitProducerIdResponse:
    if request.transactional_id is not None:
        # No transaction coordinator yet: refuse plainly rather than pretend.
        return InitProducerIdResponse(throttle_time_ms=0, error_code=ErrorCode.UNSUPPORTED_VERSION,
                                      producer_id=-1, producer_epoch=-1)
    # As in Kafka, an idempotent producer always gets a fresh id at epoch 0,
    # whatever (producer id, epoch) it presents.
    return InitProducerIdResponse(throttle_time_ms=0, error_code=0, producer_id=ctx.cluster.new_producer_id(),
                                  producer_epoch=0)
