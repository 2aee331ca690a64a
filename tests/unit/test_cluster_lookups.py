"""The named topic and partition lookups the handlers make on the Cluster (core/cluster.py, cluster_model.py)."""

from __future__ import annotations

import uuid

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.cluster_model import Node
from minibroker.core.config import BrokerConfig


def two_node_cluster() -> Cluster:
    cluster = Cluster(BrokerConfig({"node.id": 1}), ManualClock(0),
                      nodes=[Node(1, "127.0.0.1", 9092), Node(2, "127.0.0.1", 9093)])
    cluster.create_topic("b", num_partitions=2, replication_factor=1)
    cluster.create_topic("a", num_partitions=1, replication_factor=1)
    return cluster


def test_topics_by_name_and_by_id() -> None:
    cluster = two_node_cluster()
    b = cluster.topic("b")
    assert b is not None and b.name == "b"
    assert cluster.topic("missing") is None
    assert cluster.topic_by_id(b.topic_id) is b
    assert cluster.topic_by_id(uuid.uuid4()) is None
    assert cluster.topic_by_id(None) is None


def test_every_topic_in_creation_order_and_their_sizes() -> None:
    cluster = two_node_cluster()
    assert cluster.topic_names() == ["b", "a"]
    assert [topic.name for topic in cluster.all_topics()] == ["b", "a"]
    assert cluster.partition_counts() == {"b": 2, "a": 1}
    cluster.delete_topic("b")
    assert cluster.topic_names() == ["a"]
    assert cluster.partition_counts() == {"a": 1}


def test_a_partition_or_none() -> None:
    cluster = two_node_cluster()
    b = cluster.topic("b")
    assert b is not None
    assert b.partition(1) is b.partitions[1]
    assert b.partition(2) is None and b.partition(-1) is None
    assert cluster.find_partition("b", 0) is b.partitions[0]
    assert cluster.find_partition("b", 2) is None
    assert cluster.find_partition("missing", 0) is None


def test_a_hosted_partition_is_one_the_node_holds_a_replica_of() -> None:
    cluster = two_node_cluster()
    for partition in cluster.topic("b").partitions:  # type: ignore[union-attr]
        (holder,) = partition.replicas
        other = 2 if holder == 1 else 1
        assert cluster.hosted_partition(holder, "b", partition.index) is partition
        assert cluster.hosted_partition(other, "b", partition.index) is None
    assert cluster.hosted_partition(1, "b", 5) is None
    assert cluster.hosted_partition(1, "missing", 0) is None
