"""What the transaction APIs, DescribeProducers, ListOffsets and OffsetForLeaderEpoch refuse, in which order,
and how they lay out their answers, as Kafka 4's KafkaApis and TransactionCoordinator do (with and without ACLs)."""

from __future__ import annotations

import struct
from typing import Any

from minibroker.apis.context import Session
from minibroker.apis.dispatch import Reply, handle_frame
from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.cluster_model import GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC, Node
from minibroker.core.config import BrokerConfig
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    DescribeProducersRequest,
    DescribeTransactionsRequest,
    InitProducerIdRequest,
    ListOffsetsRequest,
    OffsetForLeaderEpochRequest,
    TxnOffsetCommitRequest,
)
from minibroker.testing.wire import WireClient

from .authz import ADMIN, NOW, Op, Type, allow, secured_cluster

ALICE = "User:alice"
TXN, GROUP = "tx-1", "g-1"
SHARE_GROUP_STATE_TOPIC = "__share_group_state"

_AddTopic = AddPartitionsToTxnRequest.AddPartitionsToTxnTopic
_CommitTopic = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
_CommitPartition = _CommitTopic.TxnOffsetCommitRequestPartition


def open_cluster(nodes: int = 1) -> Cluster:
    """A cluster without an authorizer, as most deployments run."""
    return Cluster(BrokerConfig({"node.id": 1}), clock=ManualClock(NOW),
                   nodes=[Node(i, "127.0.0.1", 9092 + i) for i in range(1, nodes + 1)])


def call(cluster: Cluster, request: Any, version: int, node: Node | None = None, principal: str = ADMIN) -> Any:
    """Send `request` at `version` to `node` (default: the first) and return the decoded answer."""
    frame = WireClient.__new__(WireClient)
    frame.client_id, frame._correlation_id = "refusals-test", 0
    data = frame.encode_request(request, version)[4:]
    outcome = handle_frame(memoryview(bytearray(data)), cluster, node or cluster.nodes[0],
                           Session(client_host="/127.0.0.1", listener="PLAINTEXT", principal=principal))
    assert isinstance(outcome, Reply)
    raw = outcome.data if isinstance(outcome.data, bytes) else b"".join(bytes(part) for part in outcome.data)
    assert struct.unpack_from(">i", raw)[0] == len(raw) - 4
    return WireClient.decode_response(raw[4:], request.API_KEY, version)[1]


def other_node(c: Cluster, key: str, internal_topic: str) -> Node:
    """A node that does not coordinate `key`."""
    coordinator = c.coordinator_node(key, internal_topic)
    return next(n for n in c.nodes if n.node_id != coordinator.node_id)


def init_producer(c: Cluster, principal: str = ADMIN) -> tuple[int, int]:
    node = c.coordinator_node(TXN, TRANSACTION_STATE_TOPIC)
    answer = call(c, InitProducerIdRequest(transactional_id=TXN, transaction_timeout_ms=60000), 4, node, principal)
    assert answer.error_code == 0
    return answer.producer_id, answer.producer_epoch


def add_partitions(c: Cluster, pid: int, epoch: int, wanted: dict[str, list[int]], transactional_id: str = TXN,
                   node: Node | None = None, principal: str = ADMIN) -> dict[tuple[str, int], int]:
    request = AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=transactional_id, v3_and_below_producer_id=pid,
        v3_and_below_producer_epoch=epoch,
        v3_and_below_topics=[_AddTopic(name=name, partitions=parts) for name, parts in wanted.items()])
    answer = call(c, request, 3, node, principal)
    return {(t.name, p.partition_index): p.partition_error_code
            for t in answer.results_by_topic_v3_and_below for p in t.results_by_partition}


def broker_add(c: Cluster, transactional_id: str, wanted: dict[str, list[int]], verify_only: bool = False,
               node: Node | None = None) -> dict[tuple[str, int], int]:
    request = AddPartitionsToTxnRequest(transactions=[AddPartitionsToTxnRequest.AddPartitionsToTxnTransaction(
        transactional_id=transactional_id, producer_id=1000, producer_epoch=0, verify_only=verify_only,
        topics=[_AddTopic(name=name, partitions=parts) for name, parts in wanted.items()])])
    answer = call(c, request, 4, node)
    assert answer.error_code == 0
    return {(t.name, p.partition_index): p.partition_error_code
            for r in answer.results_by_transaction for t in r.topic_results for p in t.results_by_partition}


# -- 1. AddPartitionsToTxn v0-3: internal topics -----------------------------------------------------------------
# KafkaApis.handleAddPartitionsToTxnRequest authorizes only the topics that are not Topic.isInternal; with no
# authorizer AuthHelper.filterByAuthorized returns the names it was given, so internal topics are refused too.

def test_add_partitions_refuses_internal_topics_without_an_authorizer() -> None:
    c = open_cluster()
    c.create_topic("orders", 1, 1)
    c.replication.internal_topic(GROUP_METADATA_TOPIC)
    pid, epoch = init_producer(c)
    codes = add_partitions(c, pid, epoch, {"orders": [0], GROUP_METADATA_TOPIC: [0], TRANSACTION_STATE_TOPIC: [0]})
    assert codes == {("orders", 0): ErrorCode.OPERATION_NOT_ATTEMPTED,
                     (GROUP_METADATA_TOPIC, 0): ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                     (TRANSACTION_STATE_TOPIC, 0): ErrorCode.TOPIC_AUTHORIZATION_FAILED}
    assert not c.transactions.transactions[TXN].partitions


def test_add_partitions_refuses_the_share_group_state_topic_before_knowing_whether_it_exists() -> None:
    for c in (open_cluster(), secured_cluster()):
        c.create_topic("orders", 1, 1)
        pid, epoch = init_producer(c)
        assert add_partitions(c, pid, epoch, {"orders": [0], SHARE_GROUP_STATE_TOPIC: [0]}) == {
            ("orders", 0): ErrorCode.OPERATION_NOT_ATTEMPTED,
            (SHARE_GROUP_STATE_TOPIC, 0): ErrorCode.TOPIC_AUTHORIZATION_FAILED}


def test_add_partitions_v4_from_a_broker_does_not_single_out_internal_topics() -> None:
    c = open_cluster()
    c.replication.internal_topic(GROUP_METADATA_TOPIC)
    assert broker_add(c, TXN, {GROUP_METADATA_TOPIC: [0]}) == {
        (GROUP_METADATA_TOPIC, 0): ErrorCode.INVALID_PRODUCER_ID_MAPPING}


# -- 2. what is checked first ------------------------------------------------------------------------------------
# KafkaApis reports unknown partitions itself; only a request without them reaches
# TransactionCoordinator.handleAddPartitionsToTransaction, which checks the empty id, then ownership.

def test_add_partitions_reports_unknown_partitions_before_an_empty_transactional_id() -> None:
    c = open_cluster()
    c.create_topic("orders", 1, 1)
    assert add_partitions(c, 1000, 0, {"orders": [0, 3]}, transactional_id="") == {
        ("orders", 0): ErrorCode.OPERATION_NOT_ATTEMPTED, ("orders", 3): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert add_partitions(c, 1000, 0, {"orders": [0]}, transactional_id="") == {
        ("orders", 0): ErrorCode.INVALID_REQUEST}


def test_add_partitions_reports_unknown_partitions_before_not_coordinator() -> None:
    c = open_cluster(nodes=2)
    c.create_topic("orders", 1, 1)
    elsewhere = other_node(c, TXN, TRANSACTION_STATE_TOPIC)
    assert add_partitions(c, 1000, 0, {"orders": [0], "ghost": [0]}, node=elsewhere) == {
        ("orders", 0): ErrorCode.OPERATION_NOT_ATTEMPTED, ("ghost", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert add_partitions(c, 1000, 0, {"orders": [0]}, node=elsewhere) == {("orders", 0): ErrorCode.NOT_COORDINATOR}


def test_add_partitions_v4_reports_unknown_partitions_before_the_coordinator_checks() -> None:
    c = open_cluster()
    c.create_topic("orders", 1, 1)
    for verify_only in (False, True):
        assert broker_add(c, "", {"orders": [0, 3]}, verify_only) == {
            ("orders", 0): ErrorCode.OPERATION_NOT_ATTEMPTED, ("orders", 3): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
        assert broker_add(c, "", {"orders": [0]}, verify_only) == {("orders", 0): ErrorCode.INVALID_REQUEST}


def txn_commit(c: Cluster, pid: int, epoch: int, topics: dict[str, list[int]], node: Node | None = None,
               principal: str = ADMIN) -> list[tuple[str, list[tuple[int, int]]]]:
    """The answer as (topic, [(partition, code)]) in wire order."""
    request = TxnOffsetCommitRequest(
        transactional_id=TXN, group_id=GROUP, producer_id=pid, producer_epoch=epoch,
        topics=[_CommitTopic(name=name, partitions=[
            _CommitPartition(partition_index=p, committed_offset=5, committed_metadata="") for p in parts])
            for name, parts in topics.items()])
    return [(t.name, [(p.partition_index, p.error_code) for p in t.partitions])
            for t in call(c, request, 3, node, principal).topics]


def test_txn_offset_commit_answers_unknown_topics_and_partitions_before_the_coordinator() -> None:
    c = open_cluster()
    c.create_topic("orders", 1, 1)
    pid, epoch = init_producer(c)
    # the group did not join the transaction: only what reaches the coordinator gets INVALID_TXN_STATE
    assert txn_commit(c, pid, epoch, {"orders": [0, 4], "ghost": [0]}) == [
        ("orders", [(4, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), (0, ErrorCode.INVALID_TXN_STATE)]),
        ("ghost", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)])]


def test_txn_offset_commit_with_only_unknown_partitions_does_not_reach_the_coordinator() -> None:
    c = open_cluster(nodes=2)
    c.create_topic("orders", 1, 1)
    elsewhere = other_node(c, GROUP, GROUP_METADATA_TOPIC)
    assert txn_commit(c, 1000, 0, {"ghost": [0], "orders": [9]}, elsewhere) == [
        ("ghost", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]), ("orders", [(9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)])]
    assert txn_commit(c, 1000, 0, {}, elsewhere) == []
    assert GROUP not in c.groups.groups
    assert txn_commit(c, 1000, 0, {"orders": [0]}, elsewhere) == [("orders", [(0, ErrorCode.NOT_COORDINATOR)])]


# -- 3. DescribeProducers ----------------------------------------------------------------------------------------
# KafkaApis.handleDescribeProducersRequest: Topic.validate first (ApiError.fromThrowable keeps its message), then
# READ, then the metadata cache (ApiError(UNKNOWN_TOPIC_OR_PARTITION) carries the error's default message);
# ReplicaManager.activeProducerState sets only a code for a partition it does not know.

def describe_producers(c: Cluster, topic: str, partitions: list[int], principal: str = ADMIN) -> list[Any]:
    request = DescribeProducersRequest(topics=[DescribeProducersRequest.TopicRequest(
        name=topic, partition_indexes=partitions)])
    return [(p.partition_index, p.error_code, p.error_message)
            for p in call(c, request, 0, principal=principal).topics[0].partitions]


def test_describe_producers_validates_the_topic_name_before_authorizing_it() -> None:
    c = secured_cluster()
    invalid = ErrorCode.INVALID_TOPIC_EXCEPTION
    assert describe_producers(c, "no way", [0], ALICE) == [(0, invalid, (
        "Topic name is invalid: 'no way' contains one or more characters other than ASCII alphanumerics, "
        "'.', '_' and '-'"))]
    assert describe_producers(c, "", [0, 1], ALICE) == [
        (0, invalid, "Topic name is invalid: the empty string is not allowed"),
        (1, invalid, "Topic name is invalid: the empty string is not allowed")]
    assert describe_producers(c, "..", [0], ALICE) == [(0, invalid, "Topic name is invalid: '..' is not allowed")]
    long_name = "x" * 250
    assert describe_producers(open_cluster(), long_name, [0]) == [(0, invalid, (
        f"Topic name is invalid: the length of '{long_name}' is longer than the max allowed length 249"))]


def test_describe_producers_names_an_unknown_topic_with_kafkas_message() -> None:
    c = open_cluster()
    c.create_topic("orders", 1, 1)
    assert describe_producers(c, "ghost", [0]) == [
        (0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")]
    assert describe_producers(c, "orders", [0, 2]) == [(0, 0, None), (2, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)]


# -- 4. order within answers -------------------------------------------------------------------------------------

def test_list_offsets_puts_refused_topics_after_the_others() -> None:
    c = secured_cluster()
    for name in ("orders", "secret"):
        c.create_topic(name, 1, 1)
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "orders")
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "ghost")
    request = ListOffsetsRequest(replica_id=-1, isolation_level=0, timeout_ms=1000, topics=[
        ListOffsetsRequest.ListOffsetsTopic(name=name, partitions=[
            ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(partition_index=0, timestamp=-1)])
        for name in ("secret", "orders", "ghost")])
    assert [(t.name, t.partitions[0].error_code) for t in call(c, request, 7, principal=ALICE).topics] == [
        ("orders", 0), ("ghost", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ("secret", ErrorCode.TOPIC_AUTHORIZATION_FAILED)]


def test_offset_for_leader_epoch_puts_refused_topics_after_the_others() -> None:
    c = secured_cluster()
    for name in ("orders", "secret"):
        c.create_topic(name, 1, 1)
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "orders")
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "ghost")
    request = OffsetForLeaderEpochRequest(replica_id=-1, topics=[
        OffsetForLeaderEpochRequest.OffsetForLeaderTopic(topic=name, partitions=[
            OffsetForLeaderEpochRequest.OffsetForLeaderTopic.OffsetForLeaderPartition(
                partition=0, current_leader_epoch=-1, leader_epoch=0)])
        for name in ("secret", "orders", "ghost")])
    assert [(t.topic, t.partitions[0].error_code) for t in call(c, request, 4, principal=ALICE).topics] == [
        ("orders", 0), ("ghost", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ("secret", ErrorCode.TOPIC_AUTHORIZATION_FAILED)]


def test_txn_offset_commit_puts_refused_and_unknown_topics_before_the_committed_ones() -> None:
    # TxnOffsetCommitResponse.Builder holds what KafkaApis answered itself; merge() appends the coordinator's
    # answer, adding partitions to a topic already listed.
    c = secured_cluster()
    for name in ("orders", "secret"):
        c.create_topic(name, 2, 1)
    pid, epoch = init_producer(c)
    add = AddOffsetsToTxnRequest(transactional_id=TXN, producer_id=pid, producer_epoch=epoch, group_id=GROUP)
    assert call(c, add, 3).error_code == 0
    allow(c, ALICE, Op.WRITE, Type.TRANSACTIONAL_ID, TXN)
    allow(c, ALICE, Op.READ, Type.GROUP, GROUP)
    allow(c, ALICE, Op.READ, Type.TOPIC, "orders")
    assert txn_commit(c, pid, epoch, {"orders": [0, 7, 1], "secret": [0], "audit": [0]}, principal=ALICE) == [
        ("orders", [(7, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), (0, 0), (1, 0)]),
        ("secret", [(0, ErrorCode.TOPIC_AUTHORIZATION_FAILED)]),
        ("audit", [(0, ErrorCode.TOPIC_AUTHORIZATION_FAILED)])]
    assert txn_commit(c, pid, epoch, {"secret": [0], "orders": [0]}, principal=ALICE) == [
        ("secret", [(0, ErrorCode.TOPIC_AUTHORIZATION_FAILED)]), ("orders", [(0, 0)])]


# -- 5. DescribeTransactions -------------------------------------------------------------------------------------
# TransactionCoordinator.handleDescribeTransactions sets only the id and the code on a refusal: the other
# fields keep the schema's defaults ("" and 0). An empty id is INVALID_REQUEST before ownership is looked at.

def described(c: Cluster, transactional_id: str, node: Node | None = None) -> tuple[Any, ...]:
    state = call(c, DescribeTransactionsRequest(transactional_ids=[transactional_id]), 0, node).transaction_states[0]
    return (state.error_code, state.transactional_id, state.transaction_state, state.transaction_timeout_ms,
            state.transaction_start_time_ms, state.producer_id, state.producer_epoch, state.topics)


def test_describe_transactions_of_an_unknown_id_sends_the_schema_defaults() -> None:
    c = open_cluster()
    assert described(c, "nope") == (ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, "nope", "", 0, 0, 0, 0, [])


def test_describe_transactions_of_an_empty_id_is_invalid_request() -> None:
    c = open_cluster(nodes=2)
    for node in c.nodes:
        assert described(c, "", node) == (ErrorCode.INVALID_REQUEST, "", "", 0, 0, 0, 0, [])


def test_describe_transactions_on_another_node_is_not_coordinator_with_the_schema_defaults() -> None:
    c = open_cluster(nodes=2)
    init_producer(c)
    assert described(c, TXN, other_node(c, TXN, TRANSACTION_STATE_TOPIC)) == (
        ErrorCode.NOT_COORDINATOR, TXN, "", 0, 0, 0, 0, [])


def test_describe_transactions_of_an_idle_id_shows_its_producer() -> None:
    c = open_cluster()
    pid, epoch = init_producer(c)
    error, _, state, timeout_ms, _, producer_id, producer_epoch, _ = described(c, TXN)
    assert (error, state, timeout_ms, producer_id, producer_epoch) == (0, "Empty", 60000, pid, epoch)
