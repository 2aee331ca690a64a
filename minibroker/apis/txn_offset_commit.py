"""TxnOffsetCommit (28): offsets committed inside a transaction, visible once it commits.

With an authorizer (KafkaApis.handleTxnOffsetCommitRequest): WRITE on the transactional id, else every
partition gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED; READ on the group, else GROUP_AUTHORIZATION_FAILED;
READ on each topic, else its partitions get TOPIC_AUTHORIZATION_FAILED and are not committed.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.acls import AclOperation, ResourceType
from ..protocol.errors import ErrorCode
from ..protocol.messages import TxnOffsetCommitRequest, TxnOffsetCommitResponse
from . import group_common
from .context import RequestContext
from .txn_common import for_version, may_write

API_KEY = 28
# v5 means transactions V2 (the group joins the transaction implicitly), which is not implemented.
MIN_VERSION, MAX_VERSION = 0, 4

PRODUCER_FENCED_FROM = 3
MEMBER_FIELDS_FROM = 3

_Topic = TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic
_Partition = _Topic.TxnOffsetCommitResponsePartition


def handle(request: TxnOffsetCommitRequest, ctx: RequestContext) -> TxnOffsetCommitResponse:
    version = ctx.api_version
    refusal = _request_refusal(request, ctx)
    if refusal is not None:
        # TxnOffsetCommitRequest.getErrorResponse: every partition gets the code
        return _response(request, lambda _topic: refusal)
    readable = ctx.authorized_names(AclOperation.READ, ResourceType.TOPIC, (t.name for t in request.topics))
    entries = [(t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch if version >= 2 else -1,
                p.committed_metadata) for t in request.topics if t.name in readable for p in t.partitions]
    codes: list[ErrorCode]
    if not entries and len(readable) < len({t.name for t in request.topics}):
        # Kafka answers refused topics itself and asks the coordinator only about what is left.
        codes = []
    else:
        codes = _commit(request, ctx, entries)
    it = iter(codes)
    return _response(request, lambda topic: next(it) if topic in readable else ErrorCode.TOPIC_AUTHORIZATION_FAILED)


def _request_refusal(request: TxnOffsetCommitRequest, ctx: RequestContext) -> ErrorCode | None:
    """The code for a request the caller may not make at all, else None."""
    # Kafka skips the producer id's authorization: WRITE on the transactional id implies it.
    if not may_write(ctx, request.transactional_id):
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    if not ctx.authorize(AclOperation.READ, ResourceType.GROUP, request.group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED
    return None


def _commit(request: TxnOffsetCommitRequest, ctx: RequestContext,
            entries: list[tuple[str, int, int, int, str | None]]) -> list[ErrorCode]:
    """One code per entry, from the coordinator checks and the group coordinator."""
    version = ctx.api_version
    error = group_common.coordinator_error(ctx, request.group_id)
    if error is None:
        error = ctx.cluster.transactions.group_in_transaction(
            request.transactional_id, request.producer_id, request.producer_epoch, request.group_id)
        if error is ErrorCode.NONE:
            error = None
    if error is not None:
        return [for_version(error, version, PRODUCER_FENCED_FROM) for _ in entries]
    with_member = version >= MEMBER_FIELDS_FROM
    return ctx.cluster.groups.commit_txn_offsets(
        request.group_id, request.producer_id,
        request.generation_id if with_member else -1, request.member_id if with_member else "",
        request.group_instance_id if with_member else None, entries)


def _response(request: TxnOffsetCommitRequest, code_for: Callable[[str], int]) -> TxnOffsetCommitResponse:
    """The answer in the request's order, each partition's code from `code_for(topic name)`."""
    return TxnOffsetCommitResponse(throttle_time_ms=0, topics=[
        _Topic(name=t.name, partitions=[_Partition(partition_index=p.partition_index, error_code=code_for(t.name))
                                        for p in t.partitions])
        for t in request.topics])
