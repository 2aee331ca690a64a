"""The producer-state window (KIP-1269's `producer.state.batches.to.retain`): one rule, every place it is read."""

from __future__ import annotations

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import KAFKA_BATCHES_TO_RETAIN, Cluster
from minibroker.core.cluster_model import Node
from minibroker.core.config import BrokerConfig

NOW = 1_700_000_000_000


def two_nodes(second_release: str = "latest") -> Cluster:
    return Cluster(BrokerConfig({"node.id": 1}), ManualClock(NOW),
                   nodes=[Node(1, "127.0.0.1", 9092), Node(2, "127.0.0.1", 9093, release=second_release)])


def test_a_kip1269_leader_keeps_the_topics_window_and_produce_reports_it() -> None:
    c = two_nodes()
    topic = c.create_topic("t", 2, 1, {"producer.state.batches.to.retain": "20"})
    assert topic is not None
    assert [c.reported_batches_to_retain(topic, i) for i in range(2)] == [20, 20]
    assert [c.batches_to_retain(p) for p in topic.partitions] == [20, 20]


def test_a_released_kafka_leader_keeps_kafkas_fixed_five_whatever_the_topic_says() -> None:
    c = two_nodes(second_release="4.3")
    topic = c.create_topic("t", 1, 2, {"producer.state.batches.to.retain": "20"})
    assert topic is not None
    c.replication.move_leader("t", 0, 2)
    assert c.batches_to_retain(topic.partitions[0]) == KAFKA_BATCHES_TO_RETAIN == 5
    c.replication.move_leader("t", 0, 1)
    assert c.batches_to_retain(topic.partitions[0]) == 20


def test_a_latest_append_leader_keeps_one_batch() -> None:
    c = two_nodes()
    c.config.alter_dynamic(2, {"producer.state.mode": "latest-append"})
    topic = c.create_topic("t", 1, 2, {"producer.state.batches.to.retain": "20"})
    assert topic is not None
    c.replication.move_leader("t", 0, 2)
    assert c.reported_batches_to_retain(topic, 0) == 1


def test_produce_reports_five_for_an_unknown_topic_and_the_topics_window_for_an_unknown_partition() -> None:
    c = two_nodes()
    c.config.alter_dynamic(None, {"producer.state.mode": "latest-append"})
    topic = c.create_topic("t", 1, 1, {"producer.state.batches.to.retain": "20"})
    assert topic is not None
    assert c.reported_batches_to_retain(None, 0) == 5
    # no leader to ask: the topic's own window, even on nodes in latest-append mode
    assert c.reported_batches_to_retain(topic, 1) == c.reported_batches_to_retain(topic, -1) == 20
    assert c.reported_batches_to_retain(topic, 0) == 1
