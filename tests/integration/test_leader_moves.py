"""Moving partition leaders with Kafka's own admin APIs: AlterPartitionReassignments, then ElectLeaders."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    AlterPartitionReassignmentsRequest,
    ElectLeadersRequest,
    ListPartitionReassignmentsRequest,
    MetadataRequest,
)
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic
from tests.integration.clients import JAVA_CURRENT, JavaClients, ok
from tests.integration.test_wire_protocol import create_topic, produce_request

_Topic = AlterPartitionReassignmentsRequest.ReassignableTopic
_Partition = _Topic.ReassignablePartition


@pytest.fixture
def cluster(kafka_broker_factory):
    return kafka_broker_factory(nodes=3)


def reassign(wire: WireClient, topic: str, replicas: list[int] | None, partition: int = 0, version: int = 1,
             allow_change: bool = True):
    request = AlterPartitionReassignmentsRequest(timeout_ms=5000, allow_replication_factor_change=allow_change,
                                                 topics=[_Topic(name=topic, partitions=[
                                                     _Partition(partition_index=partition, replicas=replicas)])])
    response = wire.request(request, version)
    assert response.error_code == 0
    result = response.responses[0].partitions[0]
    return result.error_code, result.error_message


def elect(wire: WireClient, topic_partitions: list[tuple[str, int]] | None, version: int = 2,
          election_type: int = 0) -> dict[tuple[str, int], int]:
    request = ElectLeadersRequest(election_type=election_type, timeout_ms=5000, topic_partitions=None if
                                  topic_partitions is None else [ElectLeadersRequest.TopicPartitions(
                                      topic=t, partitions=[p]) for t, p in topic_partitions])
    response = wire.request(request, version)
    return {(r.topic, p.partition_id): p.error_code for r in response.replica_election_results
            for p in r.partition_result}


def partition_state(wire: WireClient, topic: str) -> tuple[int, int, list[int]]:
    metadata = wire.request(MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=topic)]), 12)
    partition = metadata.topics[0].partitions[0]
    return partition.leader_id, partition.leader_epoch, list(partition.replica_nodes)


def test_reassign_then_elect_moves_the_leader_and_bumps_its_epoch(cluster):
    topic = unique_topic("move")
    with WireClient(cluster.host, cluster.port) as wire:
        create_topic(wire, topic)
        leader, epoch, replicas = partition_state(wire, topic)
        target = (leader + 1) % 3
        assert reassign(wire, topic, [target, leader]) == (0, None)
        assert partition_state(wire, topic) == (leader, epoch, [target, leader])  # the leader stays a replica
        assert elect(wire, [(topic, 0)]) == {(topic, 0): 0}
        assert partition_state(wire, topic) == (target, epoch + 1, [target, leader])
        assert elect(wire, [(topic, 0)]) == {(topic, 0): ErrorCode.ELECTION_NOT_NEEDED}
        # nothing stays in progress: reassignments complete at once on one shared log
        listed = wire.request(ListPartitionReassignmentsRequest(timeout_ms=5000, topics=None), 0)
        assert (listed.error_code, listed.topics) == (0, [])


def test_reassignment_without_the_leader_elects_the_first_new_replica(cluster):
    topic = unique_topic("move-away")
    with WireClient(cluster.host, cluster.port) as wire:
        create_topic(wire, topic)
        leader, epoch, _ = partition_state(wire, topic)
        target = (leader + 2) % 3
        assert reassign(wire, topic, [target]) == (0, None)
        assert partition_state(wire, topic) == (target, epoch + 1, [target])
        batch = records.build_batch([(None, b"v")], timestamp=int(time.time() * 1000))
        answer = wire.request(produce_request(topic, batch, version=11), 11).responses[0].partition_responses[0]
        # the old leader now refuses and names the new one
        if leader == 0:
            assert answer.error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
            assert answer.current_leader.leader_id == target


@pytest.mark.parametrize(("replicas", "code", "words"), [
    ([], ErrorCode.INVALID_REPLICA_ASSIGNMENT, "empty replica list"),
    ([1, 1], ErrorCode.INVALID_REPLICA_ASSIGNMENT, "the broker 1 more than once"),
    ([0, 9], ErrorCode.INVALID_REPLICA_ASSIGNMENT, "broker 9"),
    (None, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, None),  # Kafka 4.3.1 sends no message
])
def test_bad_reassignments_are_refused_per_partition(cluster, replicas, code, words):
    topic = unique_topic("bad-move")
    with WireClient(cluster.host, cluster.port) as wire:
        create_topic(wire, topic)
        before = partition_state(wire, topic)
        error, message = reassign(wire, topic, replicas)
        assert error == code and (message == words if words is None else words in message)
        assert partition_state(wire, topic) == before


def test_replication_factor_change_needs_permission_from_v1(cluster):
    topic = unique_topic("rf")
    with WireClient(cluster.host, cluster.port) as wire:
        create_topic(wire, topic)
        assert reassign(wire, topic, [0, 1], allow_change=False)[0] == ErrorCode.INVALID_REPLICATION_FACTOR
        assert reassign(wire, topic, [0, 1], version=0, allow_change=False)[0] == 0  # v0 has no such flag
        assert reassign(wire, unique_topic("missing"), [0])[0] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        assert elect(wire, [(topic, 5)]) == {(topic, 5): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
        assert elect(wire, [(topic, 0)], election_type=1) == {(topic, 0): ErrorCode.ELECTION_NOT_NEEDED}


def test_electing_every_partition_reports_only_those_that_moved(cluster):
    topic = unique_topic("all")
    with WireClient(cluster.host, cluster.port) as wire:
        create_topic(wire, topic)
        leader, _, _ = partition_state(wire, topic)
        target = (leader + 1) % 3
        assert reassign(wire, topic, [target, leader]) == (0, None)
        assert elect(wire, None) == {(topic, 0): 0}
        assert elect(wire, None) == {}


@pytest.mark.java
def test_java_admin_moves_a_leader(cluster, tmp_path: Path):
    java = JavaClients(tmp_path, version=JAVA_CURRENT)
    topic = unique_topic("java-move")
    results = java.scenario(cluster, "AdminScenario", (
        ["create", topic, "1"], ["leader", topic, "0"]))
    leader = ok(results[1])["leader"]
    target = (leader + 1) % 3
    results = java.scenario(cluster, "AdminScenario", (
        ["reassign", topic, "0", f"{target},{leader}"], ["elect", topic, "0"], ["leader", topic, "0"],
        ["elect", topic, "0"]))
    assert ok(results[0])["ongoing"] == 0
    ok(results[1])
    assert (ok(results[2])["leader"], results[2]["replicas"]) == (target, [target, leader])
    assert results[3]["ok"] is False and results[3]["error"].endswith("ElectionNotNeededException")
