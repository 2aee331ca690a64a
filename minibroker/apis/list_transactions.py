"""ListTransactions (66): transactional ids filtered by state and producer id.

Versions 0-2: v1 adds the duration filter (KIP-994); v2 the transactional id pattern (KIP-1152), which may
answer INVALID_REGULAR_EXPRESSION. Mirrors KafkaApis.handleListTransactionsRequest and
TransactionCoordinator.handleListTransactions.

With an authorizer only the transactional ids the caller may DESCRIBE are listed.
"""

from __future__ import annotations

import re

from ..core.acls import AclOperation, ResourceType
from ..core.transaction_coordinator import TxnState
from ..protocol.errors import ErrorCode
from ..protocol.messages import ListTransactionsRequest, ListTransactionsResponse
from .context import RequestContext

API_KEY = 66
MIN_VERSION, MAX_VERSION = 0, 2

KNOWN_STATES = {state.value for state in TxnState}


def handle(request: ListTransactionsRequest, ctx: RequestContext) -> ListTransactionsResponse:
    wanted = set(request.state_filters)
    unknown = sorted(wanted - KNOWN_STATES)
    pattern = request.transactional_id_pattern if ctx.api_version >= 2 else None
    if pattern:
        try:
            re.compile(pattern)
        except re.error:
            return ListTransactionsResponse(throttle_time_ms=0, error_code=ErrorCode.INVALID_REQUEST,
                                            unknown_state_filters=[], transaction_states=[])
    found = ctx.cluster.transactions.list(wanted & KNOWN_STATES if wanted else set(), set(request.producer_id_filters),
                                          request.duration_filter if ctx.api_version >= 1 else -1, pattern)
    if wanted and not wanted & KNOWN_STATES:
        found = []
    found = [t for t in found
             if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, t.transactional_id)]
    return ListTransactionsResponse(
        throttle_time_ms=0, error_code=0, unknown_state_filters=unknown,
        transaction_states=[ListTransactionsResponse.TransactionState(
            transactional_id=t.transactional_id, producer_id=t.producer_id, transaction_state=t.state.value)
            for t in found])
