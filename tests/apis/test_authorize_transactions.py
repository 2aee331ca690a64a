"""What the transaction APIs, ListOffsets, OffsetForLeaderEpoch and DescribeProducers authorize, as KafkaApis does."""

from __future__ import annotations

from typing import Any

from minibroker.core.cluster import Cluster
from minibroker.core.transaction_coordinator import TxnState
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    DescribeProducersRequest,
    DescribeTransactionsRequest,
    EndTxnRequest,
    InitProducerIdRequest,
    ListOffsetsRequest,
    ListTransactionsRequest,
    OffsetForLeaderEpochRequest,
    TxnOffsetCommitRequest,
)

from .authz import ADMIN, Op, Pattern, Type, allow, call, deny, secured_cluster

ALICE, BOB = "User:alice", "User:bob"
TXN, GROUP = "tx-1", "g-1"

_AddTopic = AddPartitionsToTxnRequest.AddPartitionsToTxnTopic
_CommitTopic = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
_CommitPartition = _CommitTopic.TxnOffsetCommitRequestPartition


def cluster_with_producer(*topics: str) -> tuple[Cluster, int, int]:
    """A secured cluster with one-partition `topics` and a transactional producer `TXN` (producer id, epoch)."""
    c = secured_cluster()
    for topic in topics:
        c.create_topic(topic, 1, 1)
    answer = call(c, InitProducerIdRequest(transactional_id=TXN, transaction_timeout_ms=60000), 4, ADMIN)
    assert answer.error_code == 0
    return c, answer.producer_id, answer.producer_epoch


def add_partitions(c: Cluster, pid: int, epoch: int, wanted: dict[str, list[int]], principal: str = ALICE,
                   transactional_id: str = TXN) -> dict[tuple[str, int], int]:
    request = AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=transactional_id, v3_and_below_producer_id=pid,
        v3_and_below_producer_epoch=epoch,
        v3_and_below_topics=[_AddTopic(name=name, partitions=parts) for name, parts in wanted.items()])
    answer = call(c, request, 3, principal)
    return {(t.name, p.partition_index): p.partition_error_code
            for t in answer.results_by_topic_v3_and_below for p in t.results_by_partition}


def txn_partitions(c: Cluster) -> set[tuple[str, int]]:
    return c.transactions.transactions[TXN].partitions


def start_transaction(c: Cluster, pid: int, epoch: int, *topics: str) -> None:
    assert set(add_partitions(c, pid, epoch, {t: [0] for t in topics}, ADMIN).values()) == {0}


# -- AddPartitionsToTxn ------------------------------------------------------------------------------------------

def test_add_partitions_without_write_on_the_transactional_id_is_refused_for_every_partition() -> None:
    c, pid, epoch = cluster_with_producer("orders")
    allow(c, ALICE, Op.WRITE, Type.TOPIC, "orders")
    codes = add_partitions(c, pid, epoch, {"orders": [0], "missing": [0]})
    assert codes == {("orders", 0): ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                     ("missing", 0): ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED}
    assert c.transactions.transactions[TXN].state is TxnState.EMPTY and not txn_partitions(c)


def test_add_partitions_with_write_on_the_transactional_id_and_the_topic_adds_them() -> None:
    c, pid, epoch = cluster_with_producer("orders", "audit")
    allow(c, ALICE, Op.WRITE, Type.TRANSACTIONAL_ID, TXN)
    allow(c, ALICE, Op.WRITE, Type.TOPIC, "orders")
    assert add_partitions(c, pid, epoch, {"orders": [0]}) == {("orders", 0): 0}
    assert txn_partitions(c) == {("orders", 0)}
    assert add_partitions(c, pid, epoch, {"audit": [0]}, ADMIN) == {("audit", 0): 0}
    assert txn_partitions(c) == {("orders", 0), ("audit", 0)}


def test_add_partitions_with_a_refused_topic_adds_nothing_and_marks_the_others_not_attempted() -> None:
    c, pid, epoch = cluster_with_producer("orders", "secret")
    allow(c, ALICE, Op.WRITE, Type.TRANSACTIONAL_ID, TXN)
    allow(c, ALICE, Op.WRITE, Type.TOPIC, "orders")
    allow(c, ALICE, Op.WRITE, Type.TOPIC, "known-", Pattern.PREFIXED)
    codes = add_partitions(c, pid, epoch, {"orders": [0, 5], "secret": [0], "ghost": [0], "known-missing": [0]})
    assert codes == {("orders", 0): ErrorCode.OPERATION_NOT_ATTEMPTED,
                     ("orders", 5): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                     ("secret", 0): ErrorCode.TOPIC_AUTHORIZATION_FAILED,
                     ("ghost", 0): ErrorCode.TOPIC_AUTHORIZATION_FAILED,  # unknown, but not revealed
                     ("known-missing", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert c.transactions.transactions[TXN].state is TxnState.EMPTY and not txn_partitions(c)


def test_add_partitions_denied_on_the_topic_wins_over_a_wildcard_allow() -> None:
    c, pid, epoch = cluster_with_producer("orders")
    allow(c, "User:*", Op.WRITE, Type.TRANSACTIONAL_ID, "*")
    allow(c, "User:*", Op.WRITE, Type.TOPIC, "*")
    deny(c, BOB, Op.WRITE, Type.TOPIC, "orders")
    assert add_partitions(c, pid, epoch, {"orders": [0]}, BOB) == {("orders", 0): ErrorCode.TOPIC_AUTHORIZATION_FAILED}
    assert not txn_partitions(c)
    assert add_partitions(c, pid, epoch, {"orders": [0]}, ALICE) == {("orders", 0): 0}


def test_add_partitions_never_adds_an_internal_topic_even_for_a_super_user() -> None:
    c, pid, epoch = cluster_with_producer("orders")
    c.replication.internal_topic("__consumer_offsets")
    codes = add_partitions(c, pid, epoch, {"orders": [0], "__consumer_offsets": [0]}, ADMIN)
    assert codes == {("orders", 0): ErrorCode.OPERATION_NOT_ATTEMPTED,
                     ("__consumer_offsets", 0): ErrorCode.TOPIC_AUTHORIZATION_FAILED}
    assert not txn_partitions(c)


def broker_add(transactional_id: str, pid: int, epoch: int) -> Any:
    return AddPartitionsToTxnRequest(transactions=[AddPartitionsToTxnRequest.AddPartitionsToTxnTransaction(
        transactional_id=transactional_id, producer_id=pid, producer_epoch=epoch, verify_only=False,
        topics=[_AddTopic(name="orders", partitions=[0])])])


def test_add_partitions_v4_without_cluster_action_fails_the_whole_request() -> None:
    c, pid, epoch = cluster_with_producer("orders")
    allow(c, ALICE, Op.WRITE, Type.TRANSACTIONAL_ID, TXN)
    allow(c, ALICE, Op.WRITE, Type.TOPIC, "orders")
    answer = call(c, broker_add(TXN, pid, epoch), 4, ALICE)
    assert (answer.error_code, answer.results_by_transaction) == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [])
    assert not txn_partitions(c)


def test_add_partitions_v4_with_cluster_action_needs_no_transactional_id_or_topic_acl() -> None:
    c, pid, epoch = cluster_with_producer("orders")
    allow(c, BOB, Op.CLUSTER_ACTION, Type.CLUSTER)
    answer = call(c, broker_add(TXN, pid, epoch), 5, BOB)
    assert answer.error_code == 0
    assert [p.partition_error_code for r in answer.results_by_transaction for t in r.topic_results
            for p in t.results_by_partition] == [0]
    assert txn_partitions(c) == {("orders", 0)}
    assert call(c, broker_add(TXN, pid, epoch), 5, ADMIN).error_code == 0


# -- AddOffsetsToTxn ---------------------------------------------------------------------------------------------

def add_offsets(c: Cluster, pid: int, epoch: int, principal: str = ALICE) -> int:
    request = AddOffsetsToTxnRequest(transactional_id=TXN, producer_id=pid, producer_epoch=epoch, group_id=GROUP)
    return int(call(c, request, 3, principal).error_code)


def test_add_offsets_without_write_on_the_transactional_id_is_refused_before_the_group_is_checked() -> None:
    c, pid, epoch = cluster_with_producer()
    assert add_offsets(c, pid, epoch) == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    allow(c, ALICE, Op.READ, Type.GROUP, GROUP)
    assert add_offsets(c, pid, epoch) == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    txn = c.transactions.transactions[TXN]
    assert txn.state is TxnState.EMPTY and not txn.groups


def test_add_offsets_without_read_on_the_group_is_group_authorization_failed() -> None:
    c, pid, epoch = cluster_with_producer()
    allow(c, ALICE, Op.WRITE, Type.TRANSACTIONAL_ID, TXN)
    assert add_offsets(c, pid, epoch) == ErrorCode.GROUP_AUTHORIZATION_FAILED
    txn = c.transactions.transactions[TXN]
    assert txn.state is TxnState.EMPTY and not txn.groups
    allow(c, ALICE, Op.READ, Type.GROUP, GROUP)
    assert add_offsets(c, pid, epoch) == 0
    assert txn.state is TxnState.ONGOING and txn.groups == {GROUP}


def test_add_offsets_by_a_super_user_passes() -> None:
    c, pid, epoch = cluster_with_producer()
    assert add_offsets(c, pid, epoch, ADMIN) == 0
    assert c.transactions.transactions[TXN].groups == {GROUP}


# -- EndTxn ------------------------------------------------------------------------------------------------------

def end_txn(c: Cluster, pid: int, epoch: int, principal: str = ALICE) -> int:
    request = EndTxnRequest(transactional_id=TXN, producer_id=pid, producer_epoch=epoch, committed=True)
    return int(call(c, request, 3, principal).error_code)


def test_end_txn_without_write_on_the_transactional_id_leaves_the_transaction_open() -> None:
    c, pid, epoch = cluster_with_producer("orders")
    start_transaction(c, pid, epoch, "orders")
    allow(c, ALICE, Op.DESCRIBE, Type.TRANSACTIONAL_ID, TXN)  # DESCRIBE does not imply WRITE
    assert end_txn(c, pid, epoch) == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert c.transactions.transactions[TXN].state is TxnState.ONGOING
    assert c.topics["orders"].partitions[0].log.log_end_offset == 0  # no marker written
    allow(c, ALICE, Op.WRITE, Type.TRANSACTIONAL_ID, TXN)
    assert end_txn(c, pid, epoch) == 0
    assert c.transactions.transactions[TXN].state is TxnState.COMPLETE_COMMIT


def test_end_txn_by_a_super_user_passes() -> None:
    c, pid, epoch = cluster_with_producer("orders")
    start_transaction(c, pid, epoch, "orders")
    assert end_txn(c, pid, epoch, ADMIN) == 0
    assert c.transactions.transactions[TXN].state is TxnState.COMPLETE_COMMIT


# -- TxnOffsetCommit ---------------------------------------------------------------------------------------------

def txn_commit(c: Cluster, pid: int, epoch: int, topics: list[str], principal: str = ALICE) -> dict[str, int]:
    request = TxnOffsetCommitRequest(
        transactional_id=TXN, group_id=GROUP, producer_id=pid, producer_epoch=epoch,
        topics=[_CommitTopic(name=name, partitions=[
            _CommitPartition(partition_index=0, committed_offset=5, committed_metadata="")]) for name in topics])
    return {t.name: p.error_code for t in call(c, request, 3, principal).topics for p in t.partitions}


def pending_offsets(c: Cluster) -> set[tuple[str, int]]:
    return c.groups.offset_metadata.pending_transactional_partitions(GROUP)


def cluster_in_transaction_with_group(*topics: str) -> tuple[Cluster, int, int]:
    c, pid, epoch = cluster_with_producer(*topics)
    assert add_offsets(c, pid, epoch, ADMIN) == 0
    return c, pid, epoch


def test_txn_offset_commit_without_write_on_the_transactional_id_commits_nothing() -> None:
    c, pid, epoch = cluster_in_transaction_with_group("orders")
    allow(c, ALICE, Op.READ, Type.GROUP, GROUP)
    allow(c, ALICE, Op.READ, Type.TOPIC, "orders")
    refused = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    assert txn_commit(c, pid, epoch, ["orders", "ghost"]) == {"orders": refused, "ghost": refused}
    assert pending_offsets(c) == set() and GROUP not in c.groups.groups


def test_txn_offset_commit_without_read_on_the_group_is_group_authorization_failed() -> None:
    c, pid, epoch = cluster_in_transaction_with_group("orders")
    allow(c, ALICE, Op.WRITE, Type.TRANSACTIONAL_ID, TXN)
    allow(c, ALICE, Op.READ, Type.TOPIC, "orders")
    assert txn_commit(c, pid, epoch, ["orders"]) == {"orders": ErrorCode.GROUP_AUTHORIZATION_FAILED}
    assert pending_offsets(c) == set()


def test_txn_offset_commit_commits_only_the_topics_the_caller_may_read() -> None:
    c, pid, epoch = cluster_in_transaction_with_group("orders", "secret")
    allow(c, ALICE, Op.WRITE, Type.TRANSACTIONAL_ID, TXN)
    allow(c, ALICE, Op.READ, Type.GROUP, GROUP)
    allow(c, ALICE, Op.READ, Type.TOPIC, "orders")
    assert txn_commit(c, pid, epoch, ["orders", "secret", "ghost"]) == {
        "orders": 0, "secret": ErrorCode.TOPIC_AUTHORIZATION_FAILED, "ghost": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
    assert pending_offsets(c) == {("orders", 0)}


def test_txn_offset_commit_with_every_topic_refused_does_not_reach_the_group_coordinator() -> None:
    c, pid, epoch = cluster_in_transaction_with_group("secret")
    allow(c, ALICE, Op.WRITE, Type.TRANSACTIONAL_ID, TXN)
    allow(c, ALICE, Op.READ, Type.GROUP, GROUP)
    assert txn_commit(c, pid, epoch, ["secret"]) == {"secret": ErrorCode.TOPIC_AUTHORIZATION_FAILED}
    assert GROUP not in c.groups.groups


def test_txn_offset_commit_by_a_super_user_passes() -> None:
    c, pid, epoch = cluster_in_transaction_with_group("orders")
    assert txn_commit(c, pid, epoch, ["orders"], ADMIN) == {"orders": 0}
    assert pending_offsets(c) == {("orders", 0)}


# -- DescribeTransactions and ListTransactions -------------------------------------------------------------------

def describe_transactions(c: Cluster, principal: str = ALICE) -> Any:
    answer = call(c, DescribeTransactionsRequest(transactional_ids=[TXN]), 0, principal)
    return answer.transaction_states[0]


def test_describe_transactions_without_describe_on_the_transactional_id_reveals_nothing() -> None:
    c, pid, epoch = cluster_with_producer("orders")
    start_transaction(c, pid, epoch, "orders")
    state = describe_transactions(c)
    assert (state.error_code, state.transactional_id, state.transaction_state, state.producer_id,
            state.producer_epoch, state.transaction_start_time_ms, state.topics) == (
        ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, TXN, "", 0, 0, 0, [])


def test_describe_transactions_leaves_out_the_topics_the_caller_may_not_describe() -> None:
    c, pid, epoch = cluster_with_producer("orders", "secret")
    start_transaction(c, pid, epoch, "orders", "secret")
    allow(c, ALICE, Op.WRITE, Type.TRANSACTIONAL_ID, TXN)  # WRITE implies DESCRIBE
    allow(c, ALICE, Op.READ, Type.TOPIC, "orders")  # READ implies DESCRIBE
    state = describe_transactions(c)
    assert (state.error_code, state.transaction_state, state.producer_id) == (0, "Ongoing", pid)
    assert [(t.topic, t.partitions) for t in state.topics] == [("orders", [0])]
    assert [t.topic for t in describe_transactions(c, ADMIN).topics] == ["orders", "secret"]


def listed(c: Cluster, principal: str) -> list[str]:
    answer = call(c, ListTransactionsRequest(state_filters=[], producer_id_filters=[]), 1, principal)
    assert answer.error_code == 0
    return sorted(t.transactional_id for t in answer.transaction_states)


def test_list_transactions_lists_only_the_transactional_ids_the_caller_may_describe() -> None:
    c, _, _ = cluster_with_producer()
    assert call(c, InitProducerIdRequest(transactional_id="tx-2", transaction_timeout_ms=60000), 4,
                ADMIN).error_code == 0
    allow(c, ALICE, Op.DESCRIBE, Type.TRANSACTIONAL_ID, TXN)
    assert listed(c, ALICE) == [TXN]
    assert listed(c, BOB) == []
    assert listed(c, ADMIN) == [TXN, "tx-2"]


# -- DescribeProducers -------------------------------------------------------------------------------------------

def describe_producers(c: Cluster, topic: str, principal: str = ALICE) -> Any:
    request = DescribeProducersRequest(topics=[DescribeProducersRequest.TopicRequest(name=topic,
                                                                                      partition_indexes=[0, 1])])
    return call(c, request, 0, principal).topics[0].partitions


def test_describe_producers_without_read_on_the_topic_is_topic_authorization_failed() -> None:
    c = secured_cluster()
    c.create_topic("orders", 1, 1)
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "orders")  # DESCRIBE is not enough
    refused = describe_producers(c, "orders")
    assert [(p.partition_index, p.error_code, p.error_message, p.active_producers) for p in refused] == [
        (0, ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.", []),
        (1, ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed.", [])]
    assert describe_producers(c, "ghost")[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    allow(c, ALICE, Op.READ, Type.TOPIC, "orders")
    assert [p.error_code for p in describe_producers(c, "orders")] == [0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
    allow(c, ALICE, Op.READ, Type.TOPIC, "ghost")
    assert describe_producers(c, "ghost")[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert describe_producers(c, "orders", ADMIN)[0].error_code == 0


# -- ListOffsets -------------------------------------------------------------------------------------------------

def list_offsets(c: Cluster, topics: list[str], principal: str = ALICE) -> dict[str, tuple[int, int]]:
    request = ListOffsetsRequest(replica_id=-1, isolation_level=0, timeout_ms=1000, topics=[
        ListOffsetsRequest.ListOffsetsTopic(name=name, partitions=[
            ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(partition_index=0, timestamp=-1)])
        for name in topics])
    return {t.name: (p.error_code, p.offset) for t in call(c, request, 7, principal).topics for p in t.partitions}


def test_list_offsets_needs_describe_on_the_topic_before_an_unknown_topic_is_reported() -> None:
    c = secured_cluster()
    c.create_topic("orders", 1, 1)
    c.create_topic("secret", 1, 1)
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "orders")
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "known-", Pattern.PREFIXED)
    assert list_offsets(c, ["orders", "secret", "ghost", "known-missing"]) == {
        "orders": (0, 0), "secret": (ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1),
        "ghost": (ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1),
        "known-missing": (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)}
    assert list_offsets(c, ["secret"], ADMIN) == {"secret": (0, 0)}


# -- OffsetForLeaderEpoch ----------------------------------------------------------------------------------------

def offsets_for_epoch(c: Cluster, topics: list[str], principal: str = ALICE, replica_id: int = -1
                      ) -> dict[str, tuple[int, int]]:
    request = OffsetForLeaderEpochRequest(replica_id=replica_id, topics=[
        OffsetForLeaderEpochRequest.OffsetForLeaderTopic(topic=name, partitions=[
            OffsetForLeaderEpochRequest.OffsetForLeaderTopic.OffsetForLeaderPartition(
                partition=0, current_leader_epoch=-1, leader_epoch=0)])
        for name in topics])
    return {t.topic: (p.error_code, p.end_offset) for t in call(c, request, 4, principal).topics for p in t.partitions}


def test_offset_for_leader_epoch_needs_describe_on_the_topic_for_a_consumer() -> None:
    c = secured_cluster()
    c.create_topic("orders", 1, 1)
    c.create_topic("secret", 1, 1)
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "orders")
    assert offsets_for_epoch(c, ["orders", "secret", "ghost"]) == {
        "orders": (0, 0), "secret": (ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1),
        "ghost": (ErrorCode.TOPIC_AUTHORIZATION_FAILED, -1)}
    # Kafka does not look at the replica id: DESCRIBE is enough for a follower's request as well
    assert offsets_for_epoch(c, ["orders"], replica_id=1) == {"orders": (0, 0)}
    assert offsets_for_epoch(c, ["secret"], ADMIN) == {"secret": (0, 0)}


def test_offset_for_leader_epoch_with_cluster_action_covers_every_topic() -> None:
    c = secured_cluster()
    c.create_topic("secret", 1, 1)
    allow(c, BOB, Op.CLUSTER_ACTION, Type.CLUSTER)
    assert offsets_for_epoch(c, ["secret", "ghost"], BOB) == {
        "secret": (0, 0), "ghost": (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1)}
