"""DescribeTransactions (65): state, producer and partitions of transactional ids.

Version 0, the only one. Mirrors KafkaApis.handleDescribeTransactionsRequest and
TransactionCoordinator.handleDescribeTransactions.

With an authorizer: DESCRIBE on each transactional id, else TRANSACTIONAL_ID_AUTHORIZATION_FAILED for it;
partitions of topics the caller may not DESCRIBE are left out. An empty id is INVALID_REQUEST, one this node
does not coordinate NOT_COORDINATOR, an unknown one TRANSACTIONAL_ID_NOT_FOUND.
"""

from __future__ import annotations

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode
from ..protocol.messages import DescribeTransactionsRequest, DescribeTransactionsResponse
from .context import RequestContext
from .txn_common import coordinator_error

API_KEY = 65
MIN_VERSION, MAX_VERSION = 0, 0

_State = DescribeTransactionsResponse.TransactionState


def handle(request: DescribeTransactionsRequest, ctx: RequestContext) -> DescribeTransactionsResponse:
    states = []
    for transactional_id in request.transactional_ids:
        error = _refusal(ctx, transactional_id)
        txn = ctx.cluster.transactions.transaction(transactional_id) if error is None else None
        if txn is None:
            # KafkaApis and TransactionCoordinator.handleDescribeTransactions set only the id and the code on a
            # refusal: the other fields keep the schema's defaults, "" and 0
            states.append(_State(error_code=error or ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
                                 transactional_id=transactional_id, transaction_state="", transaction_timeout_ms=0,
                                 transaction_start_time_ms=0, producer_id=0, producer_epoch=0, topics=[]))
            continue
        by_topic: dict[str, list[int]] = {}
        for topic, partition in sorted(txn.partitions):
            by_topic.setdefault(topic, []).append(partition)
        describable = ctx.authorized_names(AclOperation.DESCRIBE, ResourceType.TOPIC, by_topic)
        states.append(_State(
            error_code=0, transactional_id=transactional_id, transaction_state=txn.state.value,
            transaction_timeout_ms=txn.timeout_ms, transaction_start_time_ms=txn.start_timestamp_ms,
            producer_id=txn.producer_id, producer_epoch=txn.producer_epoch,
            topics=[_State.TopicData(topic=topic, partitions=parts) for topic, parts in by_topic.items()
                    if topic in describable]))
    return DescribeTransactionsResponse(throttle_time_ms=0, transaction_states=states)


def _refusal(ctx: RequestContext, transactional_id: str) -> ErrorCode | None:
    """Why `transactional_id` is not described, before looking it up (KafkaApis's DESCRIBE check, then
    TransactionCoordinator.handleDescribeTransactions: the empty id, then the coordinator's ownership)."""
    if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, transactional_id):
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    if not transactional_id:
        return ErrorCode.INVALID_REQUEST
    return coordinator_error(ctx, transactional_id)
