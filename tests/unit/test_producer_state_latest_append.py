"""KIP-758's latest-append producer state (`producer.state.mode=latest-append`) through Cluster.append."""

from __future__ import annotations

from typing import Any

import pytest

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.config import BrokerConfig
from minibroker.protocol.errors import ErrorCode, KafkaError
from minibroker.protocol.records import INT32_MAX
from tests.unit.test_producer_state import batch

NOW = 1_700_000_000_000


def setup(duplicate_range: int = 10_000_000, window: int = 5, **configs: Any) -> tuple[Cluster, Any]:
    c = Cluster(BrokerConfig({"node.id": 1, "producer.state.mode": "latest-append",
                              "max.in.flight.sequence.number.per.connection": duplicate_range, **configs}),
                ManualClock(NOW))
    topic = c.create_topic("t", 1, 1, {"producer.state.batches.to.retain": str(window)})
    assert topic is not None
    return c, topic.partitions[0]


def refused(c: Cluster, p: Any, data: bytes) -> int:
    with pytest.raises(KafkaError) as info:
        c.append(p, data)
    return int(info.value.code)


def test_only_the_latest_batch_is_kept_and_its_retry_gets_the_original_offset() -> None:
    c, p = setup()
    for seq in range(0, 9, 3):
        c.append(p, batch(seq, 3))
    assert p.producer_state.producers[7].batch_count == 1
    assert c.append(p, batch(6, 3)).base_offset == 6
    assert p.log.log_end_offset == 9


def test_a_retry_below_the_latest_batch_is_duplicate_sequence_number_without_storing() -> None:
    c, p = setup()
    for seq in range(0, 9, 3):
        c.append(p, batch(seq, 3))
    assert refused(c, p, batch(0, 3)) == ErrorCode.DUPLICATE_SEQUENCE_NUMBER
    assert refused(c, p, batch(3, 3)) == ErrorCode.DUPLICATE_SEQUENCE_NUMBER
    assert p.log.log_end_offset == 9


def test_sequences_further_below_than_the_range_or_above_the_next_are_out_of_order() -> None:
    c, p = setup(duplicate_range=4)
    for seq in range(0, 9, 3):
        c.append(p, batch(seq, 3))  # latest: 6..8
    assert refused(c, p, batch(5, 1)) == ErrorCode.DUPLICATE_SEQUENCE_NUMBER  # 8 - 5 < 4
    assert refused(c, p, batch(4, 2)) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER  # 4 is 4 below 8
    assert refused(c, p, batch(10, 1)) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER  # a gap
    assert refused(c, p, batch(7, 3)) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER  # overlaps the latest
    assert c.append(p, batch(9, 1)).base_offset == 9


def test_sequences_wrap_after_int_max_in_both_directions() -> None:
    c, p = setup()
    c.append(p, batch(INT32_MAX - 4, 5))  # ends at Int.MaxValue
    c.append(p, batch(0, 2))  # wraps
    c.append(p, batch(2, 2))  # latest: 2..3
    assert refused(c, p, batch(INT32_MAX - 4, 5)) == ErrorCode.DUPLICATE_SEQUENCE_NUMBER
    assert refused(c, p, batch(0, 2)) == ErrorCode.DUPLICATE_SEQUENCE_NUMBER
    assert c.append(p, batch(2, 2)).base_offset == 7


def test_epoch_rules_are_kafkas() -> None:
    c, p = setup()
    c.append(p, batch(0, 2))
    assert refused(c, p, batch(5, 1, epoch=1)) == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    c.append(p, batch(0, 1, epoch=1))
    assert refused(c, p, batch(2, 1, epoch=0)) == ErrorCode.INVALID_PRODUCER_EPOCH
    # an old epoch's batch is never a duplicate of the new epoch's latest
    assert refused(c, p, batch(0, 2, epoch=0)) == ErrorCode.INVALID_PRODUCER_EPOCH


def test_window_mode_is_unchanged_and_the_mode_follows_the_leaders_node_config() -> None:
    c, p = setup(window=5)
    c.config.alter_dynamic(None, {"producer.state.mode": "window"})
    for seq in range(3):
        c.append(p, batch(seq))
    assert c.append(p, batch(0)).base_offset == 0  # retained by the window
    assert c.batches_to_retain(p) == 5
    c.config.alter_dynamic(None, {"producer.state.mode": "latest-append"})
    assert c.batches_to_retain(p) == 1
    assert refused(c, p, batch(1)) == ErrorCode.DUPLICATE_SEQUENCE_NUMBER


def test_the_metadata_log_is_never_auto_created() -> None:
    c = Cluster(BrokerConfig({"node.id": 1}), ManualClock(NOW))
    assert c.replication.auto_create_topics(["__cluster_metadata", "fine"]).keys() == {"fine"}
    assert "__cluster_metadata" not in c.topics


def test_a_window_node_in_the_replicas_keeps_its_window_while_a_latest_append_node_leads() -> None:
    from minibroker.core.cluster_model import Node

    c = Cluster(BrokerConfig({"node.id": 1}), ManualClock(NOW),
                nodes=[Node(1, "127.0.0.1", 9092), Node(2, "127.0.0.1", 9093)])
    c.config.alter_dynamic(2, {"producer.state.mode": "latest-append"})
    topic = c.create_topic("t", 1, 2)
    assert topic is not None
    p = topic.partitions[0]
    c.replication.move_leader("t", 0, 2)
    for seq in range(3):
        c.append(p, batch(seq))
    assert refused(c, p, batch(0)) == ErrorCode.DUPLICATE_SEQUENCE_NUMBER  # node 2's rule
    c.replication.move_leader("t", 0, 1)
    assert c.append(p, batch(0)).base_offset == 0  # node 1 kept its window, as its own replica state would
