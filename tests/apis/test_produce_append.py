"""The way of a produced batch into the log: its header read once, its bytes copied at most once."""

from __future__ import annotations

import struct
import tracemalloc
from typing import Any

import pytest

from minibroker.apis import produce
from minibroker.apis.context import RequestContext
from minibroker.apis.dispatch import Reply, handle_frame
from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode, KafkaError
from minibroker.protocol.messages import ProduceRequest, decode_request

NOW = 1_700_000_000_000
VERSION = 9


def cluster(**configs: str) -> Cluster:
    c = Cluster(clock=ManualClock(NOW))
    c.create_topic("t", 1, 1, configs or None)
    return c


def batch(count: int = 3, base_sequence: int = -1, producer_id: int = -1, timestamp: int = NOW) -> bytes:
    return records.build_batch([(b"k%d" % i, b"v" * 100) for i in range(count)], timestamp=timestamp,
                               producer_id=producer_id, producer_epoch=0 if producer_id >= 0 else -1,
                               base_sequence=base_sequence)


def produce_request(data: bytes) -> Any:
    """A ProduceRequest as the broker decodes it from a frame."""
    request = ProduceRequest(transactional_id=None, acks=-1, timeout_ms=30000, topic_data=[
        ProduceRequest.TopicProduceData(name="t", partition_data=[
            ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=data)])])
    return decode_request(produce.API_KEY, VERSION, memoryview(bytearray(request.encode(version=VERSION))))


def handle(c: Cluster, request: Any) -> Any:
    ctx = RequestContext(c, c.nodes[0], produce.API_KEY, VERSION, 1, "test")
    return produce.handle(request, ctx).responses[0].partition_responses[0]


def test_produce_reads_the_batch_header_once(monkeypatch: pytest.MonkeyPatch) -> None:
    c = cluster()
    request = produce_request(batch())
    calls = []
    read_header = records.read_header

    def counted(data: Any, pos: int = 0) -> records.BatchHeader:
        calls.append(pos)
        return read_header(data, pos)

    monkeypatch.setattr(records, "read_header", counted)
    answer = handle(c, request)
    assert (answer.error_code, answer.base_offset) == (0, 0)
    assert len(calls) == 1


def test_produced_batch_is_stored_with_its_offset_and_leader_epoch() -> None:
    c = cluster()
    partition = c.partition("t", 0)
    partition.log.bump_leader_epoch()
    handle(c, produce_request(batch()))
    answer = handle(c, produce_request(batch(2)))
    assert answer.base_offset == 3
    stored = partition.log.batches[1]
    header = records.read_header(stored)
    assert (header.base_offset, header.partition_leader_epoch, header.last_offset) == (3, 1, 4)
    assert records.crc_is_valid(stored, header)


def test_append_keeps_a_bytearray_it_is_given_instead_of_copying_it() -> None:
    c = cluster()
    partition = c.partition("t", 0)
    c.append(partition, bytearray(batch()))
    given = bytearray(batch(2))
    assert c.append(partition, given).base_offset == 3
    assert partition.log.batches[1] is given
    assert records.read_header(given).base_offset == 3  # patched in place


def test_append_copies_bytes_into_a_buffer_of_the_log() -> None:
    c = cluster()
    partition = c.partition("t", 0)
    data = batch()
    c.append(partition, memoryview(data))
    stored = partition.log.batches[0]
    assert isinstance(stored, bytearray) and stored[16:] == data[16:]  # the leader epoch before is patched


def test_append_takes_over_a_writable_view_only_when_told_to() -> None:
    c = cluster()
    partition = c.partition("t", 0)
    frame = bytearray(b"header" + batch() + b"trailer")
    view = memoryview(frame)[6:-7]
    c.append(partition, view, take_over=True)
    assert partition.log.batches[0] is view and records.read_header(frame, 6).base_offset == 0
    copied = memoryview(bytearray(batch(2)))
    c.append(partition, copied)
    readonly = memoryview(batch(2))
    c.append(partition, readonly, take_over=True)
    assert [type(b) for b in partition.log.batches] == [memoryview, bytearray, bytearray]
    assert records.read_header(copied).base_offset == 0  # the caller's buffer was left alone
    assert [records.read_header(b).base_offset for b in partition.log.batches] == [0, 3, 5]


def test_refused_or_duplicate_bytearray_is_neither_stored_nor_changed() -> None:
    c = cluster(**{"message.timestamp.after.max.ms": "1000"})
    partition = c.partition("t", 0)
    producer_id = c.new_producer_id()
    first = batch(base_sequence=0, producer_id=producer_id)
    c.append(partition, bytearray(first))
    duplicate = bytearray(first)
    assert c.append(partition, duplicate).base_offset == 0
    assert duplicate == first
    future = bytearray(batch(timestamp=NOW + 60_000))
    sent = bytes(future)
    with pytest.raises(KafkaError):
        c.append(partition, future)
    assert future == sent
    assert len(partition.log.batches) == 1 and partition.log.batches[0] is not duplicate


def test_recompressed_batch_is_stored_recompressed_and_the_given_one_left_alone() -> None:
    c = cluster(**{"compression.type": "gzip"})
    partition = c.partition("t", 0)
    given = bytearray(batch())
    sent = bytes(given)
    c.append(partition, given)
    stored = partition.log.batches[0]
    assert stored is not given and given == sent
    header = records.read_header(stored)
    assert header.compression == records.COMPRESSION_GZIP and records.crc_is_valid(stored, header)
    assert [r.value for r in records.iter_records(stored)] == [b"v" * 100] * 3


def test_a_produced_batch_is_copied_once_on_its_way_from_the_frame_into_the_log() -> None:
    """The batch is read from the frame as a view; the log's copy is the only one (Kafka: MemoryRecords over
    the request buffer). Measured as the memory allocated while the frame is handled: one batch, not two."""
    c = cluster(**{"max.message.bytes": str(8 << 20)})
    data = records.build_batch([(None, bytes(4 << 20))])
    request = ProduceRequest(transactional_id=None, acks=1, timeout_ms=30000, topic_data=[
        ProduceRequest.TopicProduceData(name="t", partition_data=[
            ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=data)])])
    frame = bytearray(struct.pack(">hhihb", produce.API_KEY, VERSION, 7, -1, 0) + request.encode(version=VERSION))
    tracemalloc.start()
    try:
        outcome = handle_frame(memoryview(frame), c, c.nodes[0])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(outcome, Reply)
    stored = c.partition("t", 0).log.batches
    assert len(stored) == 1 and stored[0][61:] == data[61:]  # the records, behind the patched header
    assert len(data) <= peak < len(data) * 5 // 4


def test_the_append_follows_topic_and_broker_config_changes_at_once() -> None:
    """The configs an append reads are gathered once per change (Cluster._append_settings), never stale."""
    c = cluster()
    partition = c.partition("t", 0)
    c.append(partition, batch())
    c.set_topic_configs(partition.topic, {"compression.type": "gzip"})
    c.append(partition, batch())
    assert records.read_header(partition.log.batches[-1]).compression == records.COMPRESSION_GZIP
    c.set_topic_configs(partition.topic, {"max.message.bytes": 100})
    with pytest.raises(KafkaError) as refused:
        c.append(partition, batch())
    assert refused.value.code.name == "MESSAGE_TOO_LARGE"
    c.set_topic_configs(partition.topic, {})
    c.config.set_dynamic("log.message.timestamp.type", "LogAppendTime", node_level=False)
    assert c.append(partition, batch()).log_append_time == NOW


@pytest.mark.parametrize("version", [3, 8, 9, 13])
def test_null_records_are_read_as_null_in_plain_and_compact_versions_and_refused(version: int) -> None:
    c = cluster()
    topic = c.topics["t"]
    request = ProduceRequest(transactional_id=None, acks=1, timeout_ms=30000, topic_data=[
        ProduceRequest.TopicProduceData(name="t", topic_id=topic.topic_id, partition_data=[
            ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=None)])])
    decoded = decode_request(produce.API_KEY, version, memoryview(bytearray(request.encode(version=version))))
    assert decoded.topic_data[0].partition_data[0].records is None
    ctx = RequestContext(c, c.nodes[0], produce.API_KEY, version, 1, "test")
    answer = produce.handle(decoded, ctx).responses[0].partition_responses[0]
    assert answer.error_code == ErrorCode.INVALID_RECORD and c.partition("t", 0).log.log_end_offset == 0


@pytest.mark.parametrize("tail, code", [(b"", None), (batch(), ErrorCode.INVALID_RECORD),
                                        (batch()[:30], ErrorCode.CORRUPT_MESSAGE)],
                         ids=["alone", "second-batch", "partial-tail"])
def test_an_append_given_the_first_header_still_refuses_what_follows_the_batch(tail: bytes,
                                                                               code: ErrorCode | None) -> None:
    c = cluster()
    first = batch()
    data = first + tail
    partition = c.partition("t", 0)
    if code is None:
        assert c.append(partition, data, records.read_header(data)).base_offset == 0
        assert partition.log.log_end_offset == 3
        return
    with pytest.raises(KafkaError) as refused:
        c.append(partition, data, records.read_header(data))
    assert refused.value.code == code
    assert partition.log.log_end_offset == 0
