"""TxnOffsetCommit (28): offsets committed inside a transaction, visible once it commits.

Versions 0-5 (not v6, KIP-1319's topic ids): v2 adds the leader epoch; v3 the member fields and PRODUCER_FENCED
(INVALID_PRODUCER_EPOCH before) and is flexible; v4 may answer TRANSACTION_ABORTABLE (KIP-890 part 1); v5 is a
transactions V2 client (KIP-890 part 2): the group's offsets partition joins the transaction at the coordinator
(no AddOffsetsToTxn; AddPartitionsToTxnManager's txnOffsetCommitRequestVersionToTransactionSupportedOperation),
where v4 and before are only verified to be in it. Mirrors KafkaApis.handleTxnOffsetCommitRequest and
GroupCoordinatorService.commitTransactionalOffsets.

With an authorizer: WRITE on the transactional id, else every partition gets
TRANSACTIONAL_ID_AUTHORIZATION_FAILED; READ on the group, else GROUP_AUTHORIZATION_FAILED; READ on each topic,
else its partitions get TOPIC_AUTHORIZATION_FAILED and are not committed.

Refused topics, unknown topics and unknown partitions are answered before the group coordinator is asked, and
come first in the answer (TxnOffsetCommitResponse.Builder).
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..core.transaction_coordinator import TV_2
from ..protocol.errors import ErrorCode
from ..protocol.messages import TxnOffsetCommitRequest, TxnOffsetCommitResponse
from . import group_common
from .context import RequestContext
from .txn_common import for_version, may_write

API_KEY = 28
MIN_VERSION, MAX_VERSION = 0, 5

PRODUCER_FENCED_FROM = 3
MEMBER_FIELDS_FROM = 3
ADDS_GROUP_FROM = 5  # transactions V2

_Topic = TxnOffsetCommitResponse.TxnOffsetCommitResponseTopic
_Partition = _Topic.TxnOffsetCommitResponsePartition


def handle(request: TxnOffsetCommitRequest, ctx: RequestContext) -> TxnOffsetCommitResponse:
    version = ctx.api_version
    refusal = _request_refusal(request, ctx)
    if refusal is not None:
        # TxnOffsetCommitRequest.getErrorResponse: every partition gets the code
        return _response([(t.name, [(p.partition_index, refusal) for p in t.partitions]) for t in request.topics])
    # KafkaApis.handleTxnOffsetCommitRequest answers refused topics, unknown topics and unknown partitions
    # itself, and asks the coordinator only about what is left (not at all when nothing is).
    readable = ctx.authorized_names(AclOperation.READ, ResourceType.TOPIC, (t.name for t in request.topics))
    exists = ctx.cluster.replication.partition_exists
    answered = _Answer()
    valid: list[tuple[str, list[Any]]] = []
    for topic in request.topics:
        if topic.name not in readable or ctx.cluster.topic(topic.name) is None:
            code = (ErrorCode.TOPIC_AUTHORIZATION_FAILED if topic.name not in readable
                    else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            answered.add(topic.name, [(p.partition_index, code) for p in topic.partitions])
            continue
        known = []
        for p in topic.partitions:
            if exists(topic.name, p.partition_index):
                known.append(p)
            else:
                answered.add(topic.name, [(p.partition_index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)])
        if known:
            valid.append((topic.name, known))
    if not valid:
        return _response(answered.topics)
    entries = [(name, p.partition_index, p.committed_offset, p.committed_leader_epoch if version >= 2 else -1,
                p.committed_metadata) for name, known in valid for p in known]
    codes = iter(_commit(request, ctx, entries))
    answered.merge([(name, [(p.partition_index, next(codes)) for p in known]) for name, known in valid])
    return _response(answered.topics)


class _Answer:
    """What KafkaApis answered itself, then the coordinator's answer merged in (TxnOffsetCommitResponse.Builder):
    the former comes first, and the coordinator's partitions join a topic already listed."""

    def __init__(self) -> None:
        self.topics: list[tuple[str, list[tuple[int, int]]]] = []
        self._by_name: dict[str, list[tuple[int, int]]] = {}

    def add(self, name: str, partitions: list[tuple[int, int]]) -> None:
        """Builder.addPartitions: to the topic's entry, created at the end if it has none."""
        listed = self._by_name.get(name)
        if listed is None:
            listed = self._by_name[name] = []
            self.topics.append((name, listed))
        listed.extend(partitions)

    def merge(self, coordinator: list[tuple[str, list[tuple[int, int]]]]) -> None:
        """Builder.merge: the coordinator's answer as it is when nothing was answered before."""
        if not self.topics:
            self.topics = coordinator
            return
        for name, partitions in coordinator:
            self.add(name, partitions)


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
    if not request.group_id:
        # GroupCoordinatorService.commitTransactionalOffsets refuses an empty group id before picking a coordinator
        return [ErrorCode.INVALID_GROUP_ID for _ in entries]
    error = group_common.coordinator_error(ctx, request.group_id)
    if error is None:
        transactions = ctx.cluster.transactions
        if version >= ADDS_GROUP_FROM:
            error = transactions.add_offsets(request.transactional_id, request.producer_id, request.producer_epoch,
                                             request.group_id, TV_2)
        else:
            error = transactions.group_in_transaction(
                request.transactional_id, request.producer_id, request.producer_epoch, request.group_id)
        if error is ErrorCode.NONE:
            error = None
        elif error is ErrorCode.PRODUCER_FENCED and (
                version >= ADDS_GROUP_FROM or ctx.cluster.config["transaction.partition.verification.enable"]):
            # verified first (KIP-890): AddPartitionsToTxnManager answers the coordinator's PRODUCER_FENCED as
            # INVALID_PRODUCER_EPOCH, whatever the version
            error = ErrorCode.INVALID_PRODUCER_EPOCH
    if error is not None:
        return [for_version(error, version, PRODUCER_FENCED_FROM) for _ in entries]
    with_member = version >= MEMBER_FIELDS_FROM
    return ctx.cluster.groups.commit_txn_offsets(
        request.group_id, request.producer_id,
        request.generation_id if with_member else -1, request.member_id if with_member else "",
        request.group_instance_id if with_member else None, entries)


def _response(topics: list[tuple[str, list[tuple[int, int]]]]) -> TxnOffsetCommitResponse:
    """The answer with the topics and (partition, code) pairs in the order given."""
    return TxnOffsetCommitResponse(throttle_time_ms=0, topics=[
        _Topic(name=name, partitions=[_Partition(partition_index=index, error_code=code) for index, code in partitions])
        for name, partitions in topics])
