"""Fetch answered as Apache Kafka 4.3.1 answers it (found by tests/differential): a partition whose read
failed carries no offsets (ReplicaManager.readFromLocalLog's error result: -1 everywhere, no aborted list),
and a partition Kafka never read (unknown topic, partition or topic id) has the generated default, an empty
aborted transaction list."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.config import BrokerConfig
from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import FetchRequest
from tests.apis.authz import NOW, call


def open_cluster() -> Cluster:
    c = Cluster(BrokerConfig({"node.id": 1}), clock=ManualClock(NOW))
    topic = c.create_topic("t", 1, 1)
    c.append(topic.partitions[0], records.build_batch([(b"k", b"v"), (b"k", b"w")], timestamp=NOW))
    return c


def fetch(offset: int, partition: int = 0, isolation_level: int = 0, topic_id: uuid.UUID | None = None) -> Any:
    return FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20, isolation_level=isolation_level,
                        session_id=0, session_epoch=-1, forgotten_topics_data=[], rack_id="", topics=[
                            FetchRequest.FetchTopic(topic="t", topic_id=topic_id, partitions=[
                                FetchRequest.FetchTopic.FetchPartition(
                                    partition=partition, current_leader_epoch=-1, fetch_offset=offset,
                                    last_fetched_epoch=-1, log_start_offset=-1, partition_max_bytes=1 << 20)])])


@pytest.mark.parametrize(("version", "isolation_level"), [(4, 0), (12, 0), (12, 1)])
@pytest.mark.parametrize("offset", [3, -1])
def test_fetch_out_of_range_carries_no_offsets(version: int, isolation_level: int, offset: int) -> None:
    [partition] = call(open_cluster(), fetch(offset, isolation_level=isolation_level), version).responses[0].partitions
    assert partition.error_code == ErrorCode.OFFSET_OUT_OF_RANGE
    assert (partition.high_watermark, partition.last_stable_offset) == (-1, -1)
    if version >= 5:
        assert partition.log_start_offset == -1
    assert partition.aborted_transactions is None


@pytest.mark.parametrize("version", [4, 12])
def test_fetch_of_an_unknown_partition_has_an_empty_aborted_list(version: int) -> None:
    [partition] = call(open_cluster(), fetch(0, partition=5), version).responses[0].partitions
    assert partition.error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert partition.aborted_transactions == []


def test_fetch_of_an_unknown_topic_id_has_an_empty_aborted_list() -> None:
    [partition] = call(open_cluster(), fetch(0, topic_id=uuid.uuid4()), 13).responses[0].partitions
    assert partition.error_code == ErrorCode.UNKNOWN_TOPIC_ID
    assert partition.aborted_transactions == []
