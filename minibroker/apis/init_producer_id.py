"""InitProducerId (22): a producer id and epoch for idempotent and transactional producers.

Versions 0-5 (not v6, KIP-939's two-phase commit): v2 is flexible; v3 adds the producer id and epoch a producer
resumes with after INVALID_PRODUCER_EPOCH (KIP-360); v4 may answer PRODUCER_FENCED; v5 TRANSACTION_ABORTABLE
(KIP-890). Mirrors KafkaApis.handleInitProducerIdRequest and TransactionCoordinator.handleInitProducerId.

With an authorizer: WRITE on the transactional id, or for an idempotent producer IDEMPOTENT_WRITE on the
cluster or WRITE on any topic. From v3 a producer id without an epoch, or an epoch without an id, is
INVALID_REQUEST, as Kafka 4.3.1 answers.
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode
from ..protocol.messages import InitProducerIdRequest, InitProducerIdResponse
from .context import RequestContext
from .txn_common import coordinator_error, for_version

API_KEY = 22
MIN_VERSION, MAX_VERSION = 0, 5

PRODUCER_FENCED_FROM = 4
NO_PRODUCER_ID, NO_PRODUCER_EPOCH = -1, -1


def handle(request: InitProducerIdRequest, ctx: RequestContext) -> InitProducerIdResponse:
    refusal = _authorization_error(request, ctx)
    if refusal is not None:
        return InitProducerIdResponse(throttle_time_ms=0, error_code=refusal, producer_id=-1, producer_epoch=-1)
    no_id, no_epoch = request.producer_id == NO_PRODUCER_ID, request.producer_epoch == NO_PRODUCER_EPOCH
    if ctx.api_version >= 3 and no_id != no_epoch:
        # KafkaApis: a producer id without an epoch, or an epoch without an id, is INVALID_REQUEST for idempotent
        # and transactional producers alike, before the coordinator is asked
        return InitProducerIdResponse(throttle_time_ms=0, error_code=ErrorCode.INVALID_REQUEST, producer_id=-1,
                                      producer_epoch=-1)
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


def _authorization_error(request: InitProducerIdRequest, ctx: RequestContext) -> ErrorCode | None:
    """KafkaApis.handleInitProducerIdRequest: WRITE on the transactional id; an idempotent producer needs
    IDEMPOTENT_WRITE on the cluster or WRITE on some topic."""
    if request.transactional_id is not None:
        if not ctx.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id):
            return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif not (ctx.authorize_cluster(AclOperation.IDEMPOTENT_WRITE)
              or ctx.authorize_by_resource_type(AclOperation.WRITE, ResourceType.TOPIC)):
        return ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    return None
