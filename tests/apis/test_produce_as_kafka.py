"""Produce answered as Apache Kafka 4.3.1 answers it (found by tests/differential)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.config import BrokerConfig
from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import ProduceRequest
from tests.apis.authz import NOW, call

ZERO_UUID = uuid.UUID(int=0)
BATCH = records.build_batch([(b"k", b"v")], timestamp=NOW)


def open_cluster() -> Cluster:
    c = Cluster(BrokerConfig({"node.id": 1}), clock=ManualClock(NOW))
    c.create_topic("t", 1, 1)
    return c


def produce(data: bytes, name: str = "t", topic_id: uuid.UUID | None = None) -> Any:
    return ProduceRequest(transactional_id=None, acks=-1, timeout_ms=1000, topic_data=[
        ProduceRequest.TopicProduceData(name=name, topic_id=topic_id, partition_data=[
            ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=data)])])


def test_produce_v13_to_the_zero_topic_id_is_unknown_topic_id() -> None:
    c = open_cluster()
    [topic] = call(c, produce(BATCH, topic_id=ZERO_UUID), 13).responses
    assert topic.topic_id in (None, ZERO_UUID)
    assert [p.error_code for p in topic.partition_responses] == [ErrorCode.UNKNOWN_TOPIC_ID]
    assert c.topics["t"].partitions[0].log.log_end_offset == 0


# ByteBufferLogInputStream reads the magic as a Java byte: 0xff is -1, refused as magic < 0
@pytest.mark.parametrize(("magic", "shown"), [(3, "3"), (0xFF, "-1")])
def test_produce_of_a_batch_with_a_magic_outside_0_to_2_is_corrupt_with_kafkas_message(magic: int, shown: str) -> None:
    c = open_cluster()
    data = bytearray(BATCH)
    data[records.MAGIC_OFFSET] = magic
    [partition] = call(c, produce(bytes(data)), 9).responses[0].partition_responses
    assert (partition.error_code, partition.error_message) == (ErrorCode.CORRUPT_MESSAGE,
                                                              f"Invalid magic found in record: {shown}")
    assert (partition.base_offset, partition.log_start_offset) == (-1, -1)
    assert c.topics["t"].partitions[0].log.log_end_offset == 0


def test_produce_v13_to_an_unknown_partition_of_a_known_topic_id_is_unknown_topic_or_partition() -> None:
    c = open_cluster()
    request = produce(BATCH, topic_id=c.topics["t"].topic_id)
    request.topic_data[0].partition_data[0].index = 5
    [partition] = call(c, request, 13).responses[0].partition_responses
    assert (partition.index, partition.error_code) == (5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
