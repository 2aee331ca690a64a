"""Idempotent producer state through Cluster.append, with a manual clock."""

from __future__ import annotations

import pytest

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.config import BrokerConfig
from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode, KafkaError

NOW = 1_700_000_000_000


def batch(seq: int, count: int = 1, epoch: int = 0, pid: int = 7) -> bytes:
    return records.build_batch([(None, b"x")] * count, timestamp=NOW, producer_id=pid, producer_epoch=epoch,
                                base_sequence=seq)


@pytest.fixture
def cluster() -> Cluster:
    return Cluster(BrokerConfig(), ManualClock(NOW))


def partition(cluster: Cluster, window: int = 5):
    topic = cluster.create_topic("t", 1, 1, {"producer.state.batches.to.retain": str(window)})
    assert topic is not None
    return topic.partitions[0]


def test_duplicate_within_window_returns_original_offset(cluster):
    p = partition(cluster)
    first = cluster.append(p, batch(0, 3))
    cluster.append(p, batch(3, 2))
    again = cluster.append(p, batch(0, 3))
    assert again.base_offset == first.base_offset == 0
    assert again.log_append_time == NOW  # the retained timestamp, even on CreateTime
    assert p.log.log_end_offset == 5


@pytest.mark.parametrize("window", [5, 20])
def test_retry_older_than_window_is_out_of_order(cluster, window):
    p = partition(cluster, window)
    for seq in range(window + 1):
        cluster.append(p, batch(seq))
    assert cluster.append(p, batch(1)).base_offset == 1  # still inside the window
    with pytest.raises(KafkaError) as info:
        cluster.append(p, batch(0))  # evicted
    assert info.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


def test_gap_and_overlap_are_out_of_order_and_append_nothing(cluster):
    p = partition(cluster)
    cluster.append(p, batch(0, 2))
    for bad in (batch(3), batch(1, 2)):
        with pytest.raises(KafkaError) as info:
            cluster.append(p, bad)
        assert info.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert p.log.log_end_offset == 2
    cluster.append(p, batch(2))


def test_new_epoch_must_start_at_zero_and_lower_epoch_is_fenced(cluster):
    p = partition(cluster)
    cluster.append(p, batch(0, epoch=1))
    with pytest.raises(KafkaError) as info:
        cluster.append(p, batch(5, epoch=2))
    assert info.value.code == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER
    cluster.append(p, batch(0, epoch=2))
    with pytest.raises(KafkaError) as info:
        cluster.append(p, batch(1, epoch=1))
    assert info.value.code == ErrorCode.INVALID_PRODUCER_EPOCH


def test_unknown_producer_may_start_at_any_sequence(cluster):
    p = partition(cluster)
    assert cluster.append(p, batch(4242)).base_offset == 0
    cluster.append(p, batch(4243))


def test_sequence_wraps_from_int_max_to_zero(cluster):
    p = partition(cluster)
    cluster.append(p, batch(2**31 - 2, 2))
    cluster.append(p, batch(0))
    with pytest.raises(KafkaError):
        cluster.append(p, batch(2**31 - 1))


def test_lowered_window_trims_on_next_append(cluster):
    p = partition(cluster, 20)
    for seq in range(10):
        cluster.append(p, batch(seq))
    cluster.set_topic_configs(p.topic, {**p.topic.configs, "producer.state.batches.to.retain": 5})
    assert cluster.append(p, batch(0)).base_offset == 0  # kept until the next append
    cluster.append(p, batch(10))
    assert p.producer_state.producers[7].batch_count == 5
    with pytest.raises(KafkaError):
        cluster.append(p, batch(0))


def test_idle_producer_expires_on_check_tick(cluster):
    cluster.config.set_dynamic("producer.id.expiration.ms", "1000", node_level=False)
    p = partition(cluster)
    cluster.append(p, batch(0))
    cluster.clock.advance(999)
    cluster.expire_producers()
    assert 7 in p.producer_state.producers
    cluster.clock.advance(1)
    cluster.expire_producers()
    assert 7 not in p.producer_state.producers
    cluster.append(p, batch(999))  # unknown again: any sequence


def test_retained_batch_costs_24_bytes():
    from minibroker.core.producer_state import BatchMetadata, ProducerStateEntry

    entry = ProducerStateEntry()
    for seq in range(20):
        entry.add_batch(0, BatchMetadata(seq, seq, 0, NOW), window=20)
    assert len(entry._batches) == 20 * 24
