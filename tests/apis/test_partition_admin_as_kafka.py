"""ElectLeaders, AlterPartitionReassignments, DescribeTopicPartitions and DescribeUserScramCredentials as Kafka 4.3.1.

The messages are ReplicationControlManager's (electLeaders, alterPartitionReassignments and
changePartitionReassignment, which validates the target as validateManualPartitionAssignment does), and
DescribeTopicPartitions answers a name that is not a legal topic name INVALID_TOPIC_EXCEPTION as
MetadataCache's describeTopicResponse does; each found in the differential suite's scenarios
elect_leaders, partition_reassignments and describe_topic_partitions.
"""

from __future__ import annotations

from typing import Any

import pytest

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.cluster_model import Node
from minibroker.core.config import BrokerConfig
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    AlterPartitionReassignmentsRequest,
    AlterUserScramCredentialsRequest,
    DescribeTopicPartitionsRequest,
    DescribeUserScramCredentialsRequest,
    ElectLeadersRequest,
)
from tests.apis.authz import NOW, call

NODE = 1


def one_node(*topics: str) -> Cluster:
    c = Cluster(BrokerConfig({"node.id": NODE}), clock=ManualClock(NOW))
    for name in topics:
        c.create_topic(name, 2, 1)
    return c


def elect(c: Cluster, topic: str, partitions: list[int], version: int = 2, election_type: int = 0) -> Any:
    request = ElectLeadersRequest(election_type=election_type, topic_partitions=[
        ElectLeadersRequest.TopicPartitions(topic=topic, partitions=partitions)], timeout_ms=1000)
    return call(c, request, version)


@pytest.mark.parametrize("version", [0, 1, 2])
def test_elect_leaders_names_the_unknown_topic_and_partition(version: int) -> None:
    c = one_node("t")
    unknown_partition = elect(c, "t", [9], version).replica_election_results[0].partition_result[0]
    unknown_topic = elect(c, "nope", [0], version).replica_election_results[0].partition_result[0]
    assert (unknown_partition.error_code, unknown_partition.error_message) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as t-9")
    assert (unknown_topic.error_code, unknown_topic.error_message) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as nope")


def test_elect_leaders_of_an_unknown_election_type_is_an_invalid_request_as_a_whole() -> None:
    answer = elect(one_node("t"), "t", [0, 1], election_type=5)
    assert answer.error_code == ErrorCode.INVALID_REQUEST
    assert [(r.partition_id, r.error_code, r.error_message)
            for r in answer.replica_election_results[0].partition_result] == [
        (0, ErrorCode.INVALID_REQUEST, "Unknown election type 5"),
        (1, ErrorCode.INVALID_REQUEST, "Unknown election type 5")]


def reassign(c: Cluster, topic: str, index: int, replicas: list[int] | None, version: int = 1,
             allow_change: bool = True) -> tuple[int, str | None]:
    Topic = AlterPartitionReassignmentsRequest.ReassignableTopic
    request = AlterPartitionReassignmentsRequest(timeout_ms=1000, allow_replication_factor_change=allow_change,
                                                 topics=[Topic(name=topic, partitions=[
                                                     Topic.ReassignablePartition(partition_index=index,
                                                                                 replicas=replicas)])])
    result = call(c, request, version).responses[0].partitions[0]
    return result.error_code, result.error_message


@pytest.mark.parametrize(("topic", "index", "replicas", "expected"), [
    ("t", 0, [], (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                  "The manual partition assignment includes an empty replica list.")),
    ("t", 0, [7], (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                   "The manual partition assignment includes broker 7, but no such broker is registered.")),
    ("t", 0, [NODE, NODE], (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                            f"The manual partition assignment includes the broker {NODE} more than once.")),
    ("t", 1, None, (ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None)),
    ("t", 9, [NODE], (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition t:9.")),
    ("nope", 0, [NODE], (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named nope.")),
    ("t", 0, [NODE], (ErrorCode.NONE, None)),
], ids=["empty", "unknown-broker", "twice", "cancel-none", "unknown-partition", "unknown-topic", "same"])
def test_alter_partition_reassignments_answers_as_kafka(topic: str, index: int, replicas: list[int] | None,
                                                        expected: tuple[int, str | None]) -> None:
    assert reassign(one_node("t"), topic, index, replicas) == expected


def test_a_replication_factor_change_refused_at_v1_is_worded_as_kafka() -> None:
    c = Cluster(BrokerConfig({"node.id": NODE}), clock=ManualClock(NOW),
                nodes=[Node(NODE, "127.0.0.1", 9092), Node(2, "127.0.0.1", 9093)])
    c.create_topic("t", 1, 1)
    c.replication.reassign_replicas(c.partition("t", 0), [NODE])
    assert reassign(c, "t", 0, [NODE, 2], allow_change=False) == (
        ErrorCode.INVALID_REPLICATION_FACTOR, "The replication factor is changed from 1 to 2")


def test_describe_topic_partitions_of_an_illegal_name_is_invalid_topic() -> None:
    request = DescribeTopicPartitionsRequest(topics=[DescribeTopicPartitionsRequest.TopicRequest(name="no/such topic")],
                                             response_partition_limit=2000, cursor=None)
    topic = call(one_node(), request, 0).topics[0]
    assert (topic.name, topic.error_code, topic.partitions) == ("no/such topic", ErrorCode.INVALID_TOPIC_EXCEPTION, [])


def test_describe_user_scram_credentials_answers_empty_messages_where_nothing_failed() -> None:
    """ScramControlManager.describeScramCredentials sets "" (not null) at the top and for each user described
    without an error; a refused user keeps its message (scenario user_scram_credentials)."""
    c = one_node()
    upsertion = AlterUserScramCredentialsRequest.ScramCredentialUpsertion(
        name="alice", mechanism=1, iterations=8192, salt=b"salt", salted_password=b"\x00" * 32)
    assert call(c, AlterUserScramCredentialsRequest(deletions=[], upsertions=[upsertion]), 0).results[0].error_code == 0
    Name = DescribeUserScramCredentialsRequest.UserName
    answer = call(c, DescribeUserScramCredentialsRequest(users=[Name(name="alice"), Name(name="bob")]), 0)
    assert (answer.error_code, answer.error_message) == (0, "")
    assert [(r.user, r.error_code, r.error_message) for r in answer.results] == [
        ("alice", 0, ""),
        ("bob", ErrorCode.RESOURCE_NOT_FOUND, "Attempt to describe a user credential that does not exist: bob")]
