"""ListOffsets, DescribeProducers and the empty group id, answered as Apache Kafka 4.x answers them.

ListOffsets follows ListOffsetsRequest (its duplicate partitions) and ReplicaManager.fetchOffset; DescribeProducers
ReplicaManager.activeProducerState; the empty group id GroupCoordinatorService (commitOffsets, fetchOffsets,
deleteOffsets) and OffsetMetadataManager.validateOffsetCommit.
"""

from __future__ import annotations

from typing import Any

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.cluster_model import Node
from minibroker.core.config import BrokerConfig
from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    DeleteGroupsRequest,
    DescribeProducersRequest,
    ListOffsetsRequest,
    OffsetCommitRequest,
    OffsetDeleteRequest,
    OffsetFetchRequest,
    ProduceRequest,
)

from .authz import ADMIN, Op, Type, allow, coordinator, other_node, secured_cluster
from .authz import call_node as call

NOW = 1_700_000_000_000
ALICE = "User:alice"
INVALID_REQUEST = ErrorCode.INVALID_REQUEST
UNSUPPORTED = ErrorCode.UNSUPPORTED_VERSION


def nodes(count: int = 2) -> Cluster:
    """A cluster of `count` nodes without an authorizer."""
    return Cluster(BrokerConfig({"node.id": 1}), clock=ManualClock(NOW),
                   nodes=[Node(i, "127.0.0.1", 9091 + i) for i in range(1, count + 1)])


def node(c: Cluster, node_id: int) -> Node:
    return next(n for n in c.nodes if n.node_id == node_id)


# -- ListOffsets ----------------------------------------------------------------------------------------------

_LoTopic = ListOffsetsRequest.ListOffsetsTopic
_LoPartition = _LoTopic.ListOffsetsPartition


def list_offsets(*topics: tuple[str, list[int]], timestamp: int = -1) -> Any:
    """One topic entry per (name, partition indexes), each partition asking for `timestamp`."""
    return ListOffsetsRequest(replica_id=-1, isolation_level=0, timeout_ms=1000, topics=[
        _LoTopic(name=name, partitions=[_LoPartition(partition_index=i, current_leader_epoch=-1, timestamp=timestamp)
                                        for i in indexes])
        for name, indexes in topics])


def answers(response: Any) -> list[tuple[str, list[tuple[int, int, int]]]]:
    """(topic, [(partition, error, offset)]) in the order answered."""
    return [(t.name, [(p.partition_index, p.error_code, p.offset) for p in t.partitions]) for t in response.topics]


def test_list_offsets_partition_named_twice_is_answered_once_invalid_request() -> None:
    c = nodes(1)
    c.create_topic("orders", 2, 1)
    assert answers(call(c, list_offsets(("orders", [0, 0, 1])), 9)) == [
        ("orders", [(0, INVALID_REQUEST, -1), (1, 0, 0)])]
    # named again in a second entry of the same topic: still one answer, and one topic entry (statusByPartition)
    assert answers(call(c, list_offsets(("orders", [1]), ("orders", [1, 0])), 9)) == [
        ("orders", [(1, INVALID_REQUEST, -1), (0, 0, 0)])]
    # the duplicate check comes before the partition is looked up
    assert answers(call(c, list_offsets(("ghost", [3, 3])), 9)) == [("ghost", [(3, INVALID_REQUEST, -1)])]


def test_list_offsets_duplicates_of_a_refused_topic_are_each_answered_topic_authorization_failed() -> None:
    c = secured_cluster()
    c.create_topic("orders", 1, 1)
    c.create_topic("secret", 1, 1)
    allow(c, ALICE, Op.DESCRIBE, Type.TOPIC, "orders")
    answer = call(c, list_offsets(("secret", [0, 0]), ("orders", [0, 0])), 9, principal=ALICE)
    taf = ErrorCode.TOPIC_AUTHORIZATION_FAILED
    # KafkaApis answers a refused topic entry as it was asked, after what the replica manager answered
    assert answers(answer) == [("orders", [(0, INVALID_REQUEST, -1)]), ("secret", [(0, taf, -1), (0, taf, -1)])]
    assert answers(call(c, list_offsets(("orders", [0, 0])), 9, principal=ADMIN)) == [
        ("orders", [(0, INVALID_REQUEST, -1)])]


def test_list_offsets_timestamp_the_version_does_not_know_is_unsupported_version_before_the_partition_lookup() -> None:
    c = nodes(2)
    c.create_topic("orders", 1, 1)
    leader = node(c, c.topics["orders"].partitions[0].leader_id)
    follower = next(n for n in c.nodes if n is not leader)
    # ReplicaManager.timestampMinSupportedVersion; any other negative timestamp is never supported
    for timestamp, first_version in ((-3, 7), (-4, 8), (-5, 9), (-6, 11)):
        older = first_version - 1
        for to in (leader, follower):  # before the leader check ...
            assert answers(call(c, list_offsets(("orders", [0]), timestamp=timestamp), older, to)) == [
                ("orders", [(0, UNSUPPORTED, -1)])]
        # ... and before the topic is looked up
        assert answers(call(c, list_offsets(("ghost", [0]), timestamp=timestamp), older)) == [
            ("ghost", [(0, UNSUPPORTED, -1)])]
        assert call(c, list_offsets(("orders", [0]), timestamp=timestamp), first_version, leader
                    ).topics[0].partitions[0].error_code == 0
    assert answers(call(c, list_offsets(("ghost", [0]), timestamp=-7), 11)) == [("ghost", [(0, UNSUPPORTED, -1)])]
    for timestamp in (-1, -2):
        assert call(c, list_offsets(("orders", [0]), timestamp=timestamp), 1, leader
                    ).topics[0].partitions[0].error_code == 0
    # a duplicate is found first
    assert answers(call(c, list_offsets(("orders", [0, 0]), timestamp=-7), 11)) == [
        ("orders", [(0, INVALID_REQUEST, -1)])]


# -- DescribeProducers ----------------------------------------------------------------------------------------

def produce_idempotent(c: Cluster, topic: str, to: Node, producer_id: int = 7) -> None:
    batch = records.build_batch([(b"k", b"v")], timestamp=NOW, producer_id=producer_id, producer_epoch=0,
                                base_sequence=0)
    answer = call(c, ProduceRequest(transactional_id=None, acks=-1, timeout_ms=1000, topic_data=[
        ProduceRequest.TopicProduceData(name=topic, partition_data=[
            ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=batch)])]), 9, to)
    assert answer.responses[0].partition_responses[0].error_code == 0


def describe_producers(c: Cluster, topic: str, indexes: list[int], to: Node) -> list[tuple[int, int, Any, list]]:
    answer = call(c, DescribeProducersRequest(topics=[
        DescribeProducersRequest.TopicRequest(name=topic, partition_indexes=indexes)]), 0, to)
    return [(p.partition_index, p.error_code, p.error_message, [s.producer_id for s in p.active_producers])
            for p in answer.topics[0].partitions]


def test_describe_producers_answers_on_a_follower_as_on_the_leader() -> None:
    c = nodes(2)
    c.create_topic("orders", 1, 2)
    partition = c.topics["orders"].partitions[0]
    leader = node(c, partition.leader_id)
    follower = next(n for n in c.nodes if n is not leader)
    assert follower.node_id in partition.replicas
    produce_idempotent(c, "orders", leader)
    assert describe_producers(c, "orders", [0], leader) == [(0, 0, None, [7])]
    assert describe_producers(c, "orders", [0], follower) == [(0, 0, None, [7])]
    # a partition the topic does not have: ReplicaManager.getPartitionOrError, no message
    assert describe_producers(c, "orders", [4], follower) == [(4, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None, [])]


def test_describe_producers_on_a_node_without_a_replica_is_not_leader_or_follower() -> None:
    c = nodes(2)
    c.create_topic("orders", 1, 1)
    partition = c.topics["orders"].partitions[0]
    elsewhere = next(n for n in c.nodes if n.node_id not in partition.replicas)
    produce_idempotent(c, "orders", node(c, partition.leader_id))
    assert describe_producers(c, "orders", [0], elsewhere) == [(0, ErrorCode.NOT_LEADER_OR_FOLLOWER, None, [])]


# -- the empty group id ---------------------------------------------------------------------------------------

def commit(group: str, topic: str, index: int = 0, offset: int = 5, generation: int = -1) -> Any:
    _Topic = OffsetCommitRequest.OffsetCommitRequestTopic
    return OffsetCommitRequest(group_id=group, generation_id_or_member_epoch=generation, member_id="",
                               group_instance_id=None, retention_time_ms=-1, topics=[_Topic(name=topic, partitions=[
                                   _Topic.OffsetCommitRequestPartition(partition_index=index, committed_offset=offset,
                                                                       committed_leader_epoch=-1,
                                                                       committed_metadata="m")])])


def commit_codes(response: Any) -> list[int]:
    return [p.error_code for t in response.topics for p in t.partitions]


def fetched(c: Cluster, group: str, topic: str, version: int, to: Node) -> tuple[int, int]:
    """(group error, committed offset of partition 0) from OffsetFetch at `version`."""
    if version >= 8:
        wanted = OffsetFetchRequest.OffsetFetchRequestGroup.OffsetFetchRequestTopics(name=topic, partition_indexes=[0])
        answer = call(c, OffsetFetchRequest(groups=[OffsetFetchRequest.OffsetFetchRequestGroup(
            group_id=group, topics=[wanted])], require_stable=False), version, to).groups[0]
        assert answer.group_id == group
    else:
        answer = call(c, OffsetFetchRequest(group_id=group, topics=[OffsetFetchRequest.OffsetFetchRequestTopic(
            name=topic, partition_indexes=[0])], require_stable=False), version, to)
    offsets = [p.committed_offset for t in answer.topics for p in t.partitions]
    return answer.error_code if version >= 2 else 0, offsets[0] if offsets else -1


def test_offset_commit_and_fetch_take_the_empty_group_id_as_any_other() -> None:
    c = nodes(2)
    c.create_topic("orders", 1, 1)
    here, elsewhere = coordinator(c, ""), other_node(c, "")
    assert [fetched(c, "", "orders", v, here) for v in (1, 7, 8)] == [(0, -1)] * 3
    assert commit_codes(call(c, commit("", "orders"), 9, here)) == [0]  # a simple group "" is created
    assert [fetched(c, "", "orders", v, here) for v in (1, 2, 7, 8, 9)] == [(0, 5)] * 5
    # the empty id is routed to its coordinator like any other
    assert commit_codes(call(c, commit("", "orders"), 9, elsewhere)) == [ErrorCode.NOT_COORDINATOR]
    assert fetched(c, "", "orders", 8, elsewhere)[0] == ErrorCode.NOT_COORDINATOR
    # and, being a group, DeleteGroups finds it (GroupMetadataManager.validateDeleteGroup)
    deleted = call(c, DeleteGroupsRequest(groups_names=[""]), 2, here).results
    assert [(r.group_id, r.error_code) for r in deleted] == [("", 0)]
    gone = call(c, DeleteGroupsRequest(groups_names=[""]), 2, here).results
    assert [(r.group_id, r.error_code) for r in gone] == [("", ErrorCode.GROUP_ID_NOT_FOUND)]


def test_offset_commit_with_a_generation_to_a_group_that_does_not_exist_is_group_id_not_found_from_v9() -> None:
    c = nodes(1)
    c.create_topic("orders", 1, 1)
    for group in ("", "g"):
        assert commit_codes(call(c, commit(group, "orders", generation=1), 8)) == [ErrorCode.ILLEGAL_GENERATION]
        for version in (9, 10):
            request = commit(group, "orders", generation=1)
            if version >= 10:
                request.topics[0].topic_id = c.topics["orders"].topic_id
            assert commit_codes(call(c, request, version)) == [ErrorCode.GROUP_ID_NOT_FOUND]
        assert group not in c.groups.groups


def offset_delete(group: str, topic: str, index: int = 0) -> Any:
    _Topic = OffsetDeleteRequest.OffsetDeleteRequestTopic
    return OffsetDeleteRequest(group_id=group, topics=[
        _Topic(name=topic, partitions=[_Topic.OffsetDeleteRequestPartition(partition_index=index)])])


def test_offset_delete_of_the_empty_group_id_is_invalid_group_id_on_any_node() -> None:
    c = nodes(2)
    c.create_topic("orders", 1, 1)
    assert commit_codes(call(c, commit("", "orders"), 9, coordinator(c, ""))) == [0]
    for to in (coordinator(c, ""), other_node(c, "")):
        answer = call(c, offset_delete("", "orders"), 0, to)
        assert (answer.error_code, answer.topics) == (ErrorCode.INVALID_GROUP_ID, [])
        unknown = call(c, offset_delete("", "ghost"), 0, to)
        assert (unknown.error_code, unknown.topics) == (ErrorCode.INVALID_GROUP_ID, [])
    assert "" in c.groups.groups and [row[:2] for row in c.groups.fetch_offsets("", None)] == [("orders", 0)]


def test_offset_delete_of_the_empty_group_id_needs_delete_on_it_first() -> None:
    c = secured_cluster()
    c.create_topic("orders", 1, 1)
    answer = call(c, offset_delete("", "orders"), 0, principal=ALICE)
    assert (answer.error_code, answer.topics) == (ErrorCode.GROUP_AUTHORIZATION_FAILED, [])
    allow(c, ALICE, Op.DELETE, Type.GROUP, "")
    assert call(c, offset_delete("", "orders"), 0, principal=ALICE).error_code == ErrorCode.INVALID_GROUP_ID


def test_txn_offset_commit_with_an_empty_group_id_is_invalid_group_id_on_every_node() -> None:
    from minibroker.protocol.messages import TxnOffsetCommitRequest

    c = Cluster(BrokerConfig({"node.id": 1}), clock=ManualClock(1_700_000_000_000))
    c.create_topic("t", 1, 1)
    request = TxnOffsetCommitRequest(
        transactional_id="tx", group_id="", producer_id=1, producer_epoch=0, generation_id=-1, member_id="",
        group_instance_id=None, topics=[TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic(name="t", partitions=[
            TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic.TxnOffsetCommitRequestPartition(
                partition_index=0, committed_offset=5, committed_leader_epoch=-1, committed_metadata="")])])
    answer = call(c, request, 3)
    assert answer.topics[0].partitions[0].error_code == ErrorCode.INVALID_GROUP_ID
