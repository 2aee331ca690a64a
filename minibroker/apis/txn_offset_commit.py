"""TxnOffsetCommit (28): offsets committed inside a transaction, visible once it commits."""

from __future__ import annotations

from ..protocol.errors import ErrorCode
from ..protocol.messages import TxnOffsetCommitRequest, TxnOffsetCommitResponse
from . import group_common
from .context import RequestContext
from .txn_common import for_version

API_KEY = 28
# v5 means transactions V2 (the group joins the transaction implicitly), which is not implemented.
MIN_VERSION, MAX_VERSION = 0, 4

PRODUCER_FENCED_FROM = 3
MEMBER_FIELDS_FROM = 3

_Topic = TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic
_Partition = _Topic.TxnOffsetCommitResponsePartition


def handle(request: TxnOffsetCommitRequest, ctx: RequestContext) -> TxnOffsetCommitResponse:
    version = ctx.api_version
    entries = [(t.name, p.partition_index, p.committed_offset, p.committed_leader_epoch if version >= 2 else -1,
                p.committed_metadata) for t in request.topics for p in t.partitions]
    error = group_common.coordinator_error(ctx, request.group_id)
    if error is None:
        error = ctx.cluster.transactions.group_in_transaction(
            request.transactional_id, request.producer_id, request.producer_epoch, request.group_id)
        if error is ErrorCode.NONE:
            error = None
    if error is not None:
        codes = [for_version(error, version, PRODUCER_FENCED_FROM) for _ in entries]
    else:
        with_member = version >= MEMBER_FIELDS_FROM
        codes = ctx.cluster.groups.commit_txn_offsets(
            request.group_id, request.producer_id,
            request.generation_id if with_member else -1, request.member_id if with_member else "",
            request.group_instance_id if with_member else None, entries)
    it = iter(codes)
    return TxnOffsetCommitResponse(throttle_time_ms=0, topics=[
        _Topic(name=t.name, partitions=[_Partition(partition_index=p.partition_index, error_code=next(it))
                                        for p in t.partitions])
        for t in request.topics])
