"""AddPartitionsToTxn (24): partitions join a transaction.

Versions 0-5: v0-3 come from clients, one transaction each; v2 may answer PRODUCER_FENCED; v3 is flexible; v4
batches several transactions, adds VerifyOnly and a top-level error and comes from brokers; v5 may answer
TRANSACTION_ABORTABLE (KIP-890 part 1). Mirrors KafkaApis.handleAddPartitionsToTxnRequest and
TransactionCoordinator.handleAddPartitionsToTransaction.

With an authorizer: v4+ comes from brokers and needs CLUSTER_ACTION on the cluster, else the whole request
fails with CLUSTER_AUTHORIZATION_FAILED. v0-3 need WRITE on the transactional id
(TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition) and WRITE on each topic. Internal topics are never
authorized for v0-3, with or without an authorizer.

KafkaApis answers refused topics and unknown partitions itself, before the coordinator sees the request:
nothing is added, refused topics get TOPIC_AUTHORIZATION_FAILED, unknown partitions
UNKNOWN_TOPIC_OR_PARTITION and all others OPERATION_NOT_ATTEMPTED. Only then does the coordinator refuse an
empty transactional id (INVALID_REQUEST) and a transactional id it does not own (NOT_COORDINATOR).
"""

from __future__ import annotations

from typing import Any

from ..core.acls import AclOperation, ResourceType
from ..core.cluster_model import INTERNAL_TOPICS
from ..protocol.errors import ErrorCode
from ..protocol.messages import AddPartitionsToTxnRequest, AddPartitionsToTxnResponse
from .context import RequestContext
from .txn_common import coordinator_error, for_version, may_write

API_KEY = 24
MIN_VERSION, MAX_VERSION = 0, 5

PRODUCER_FENCED_FROM = 2
BATCHED_FROM = 4

_TopicResult = AddPartitionsToTxnResponse.AddPartitionsToTxnTopicResult
_PartitionResult = _TopicResult.AddPartitionsToTxnPartitionResult
_Key = tuple[str, int]

# Kafka 4's Topic.isInternal: the two internal topics created here, and KIP-932's share group state topic
KAFKA_INTERNAL_TOPICS = INTERNAL_TOPICS | {"__share_group_state"}


def handle(request: AddPartitionsToTxnRequest, ctx: RequestContext) -> AddPartitionsToTxnResponse:
    version = ctx.api_version
    if version < BATCHED_FROM:
        results = _one(ctx, request.v3_and_below_transactional_id, request.v3_and_below_producer_id,
                       request.v3_and_below_producer_epoch, request.v3_and_below_topics, verify_only=False)
        return AddPartitionsToTxnResponse(throttle_time_ms=0, results_by_topic_v3_and_below=results)
    if not ctx.authorize_cluster(AclOperation.CLUSTER_ACTION):
        # Kafka throws ClusterAuthorizationException; AddPartitionsToTxnRequest.getErrorResponse puts the
        # code in the top-level error_code for broker versions and lists no transaction.
        return AddPartitionsToTxnResponse(throttle_time_ms=0, error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
                                          results_by_transaction=[])
    by_transaction = [
        AddPartitionsToTxnResponse.AddPartitionsToTxnResult(
            transactional_id=txn.transactional_id,
            topic_results=_one(ctx, txn.transactional_id, txn.producer_id, txn.producer_epoch, txn.topics,
                               verify_only=txn.verify_only))
        for txn in request.transactions
    ]
    return AddPartitionsToTxnResponse(throttle_time_ms=0, error_code=0, results_by_transaction=by_transaction)


def _one(ctx: RequestContext, transactional_id: str, producer_id: int, epoch: int, topics: list[Any],
         verify_only: bool) -> list[Any]:
    """Per-partition results for one transaction: all fail together when one partition is refused or unknown."""
    cluster = ctx.cluster
    wanted = [(t.name, p) for t in topics for p in t.partitions]
    refused = _partition_refusal(ctx, transactional_id, wanted)
    codes: dict[_Key, ErrorCode]
    if refused is not None:
        codes = refused
    # TransactionCoordinator.handleAddPartitionsToTransaction (and handleVerifyPartitionsInTransaction): the
    # empty id first, then TransactionStateManager.getTransactionState's NOT_COORDINATOR
    elif not transactional_id:
        codes = {key: ErrorCode.INVALID_REQUEST for key in wanted}
    elif (error := coordinator_error(ctx, transactional_id)) is not None:
        codes = {key: error for key in wanted}
    elif verify_only:
        codes = {key: cluster.transactions.verify_partition(transactional_id, producer_id, epoch, *key)
                 for key in wanted}
    else:
        error = cluster.transactions.add_partitions(transactional_id, producer_id, epoch, wanted)
        codes = {key: error for key in wanted}
    results = []
    for topic in topics:
        results.append(_TopicResult(name=topic.name, results_by_partition=[
            _PartitionResult(partition_index=p,
                             partition_error_code=for_version(codes[(topic.name, p)], ctx.api_version,
                                                              PRODUCER_FENCED_FROM))
            for p in topic.partitions]))
    return results


def _partition_refusal(ctx: RequestContext, transactional_id: str, wanted: list[_Key]) -> dict[_Key, ErrorCode] | None:
    """The codes of a transaction KafkaApis answers itself (refused or unknown partitions), else None."""
    client = ctx.api_version < BATCHED_FROM
    if client and not may_write(ctx, transactional_id):
        return {key: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED for key in wanted}
    names = {name for name, _ in wanted}
    if client:
        # Kafka authorizes only the topics that are not Topic.isInternal; AuthHelper.filterByAuthorized
        # returns what it was given when there is no authorizer, so internal topics are refused either way.
        # A client never adds them here (AddOffsetsToTxn adds the group's offsets partition).
        writable = ctx.authorized_names(AclOperation.WRITE, ResourceType.TOPIC, names - KAFKA_INTERNAL_TOPICS)
    else:
        writable = names
    exists = ctx.cluster.replication.partition_exists
    if all(name in writable and exists(name, p) for name, p in wanted):
        return None
    return {(name, p): ErrorCode.TOPIC_AUTHORIZATION_FAILED if name not in writable
            else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if not exists(name, p)
            else ErrorCode.OPERATION_NOT_ATTEMPTED
            for name, p in wanted}
