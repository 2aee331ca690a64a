"""Records inside produced batches are validated as Kafka's LogValidator does: real bytes over real TCP."""

from __future__ import annotations

import struct
import time
from pathlib import Path

import psutil
import pytest

from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode, RecordError
from minibroker.protocol.messages import ApiVersionsRequest, InitProducerIdRequest, ListOffsetsRequest
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic
from tests.hostile_batches import raw_batch, record, zstd_of_zeros
from tests.integration.test_wire_protocol import create_topic, fetch_all, partition_response, produce_request

NOW = int(time.time() * 1000)
VERSIONS = [3, 7, 8, 13]  # before and after record_errors / error_message (v8), topic ids (v13)
CODECS = [records.COMPRESSION_GZIP, records.COMPRESSION_SNAPPY, records.COMPRESSION_LZ4, records.COMPRESSION_ZSTD]


def produce(wire: WireClient, topic: str, topic_id, batch: bytes, version: int):
    request = produce_request(topic, batch, version=version, topic_id=topic_id)
    return partition_response(wire.request(request, version))


def list_offset(wire: WireClient, topic: str, timestamp: int) -> tuple[int, int, int]:
    """(error code, offset, timestamp) ListOffsets answers for `timestamp` (-1 latest)."""
    request = ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=[ListOffsetsRequest.ListOffsetsTopic(
        name=topic, partitions=[ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(
            partition_index=0, timestamp=timestamp)])])
    answer = wire.request(request, 7).topics[0].partitions[0]
    return answer.error_code, answer.offset, answer.timestamp


def assert_nothing_stored(wire: WireClient, topic: str) -> None:
    assert list_offset(wire, topic, -1) == (0, 0, -1)
    assert fetch_all(wire, topic) == b""
    assert list_offset(wire, topic, NOW - 60_000)[0] == 0  # a timestamp lookup still answers


def log_start(version: int, offset: int) -> int:
    """The log_start_offset a v`version` answer decodes to (the field exists from v5)."""
    return offset if version >= 5 else -1


def assert_no_record_errors(part, version: int) -> None:
    if version >= 8:
        assert part.record_errors == []
        assert part.error_message is None


HOSTILE = {
    "bytes-after-last-record": (record(0) + b"\x00", 1),
    "fewer-records-than-count": (record(0), 2),
    "record-longer-than-batch": (struct.pack("B", 100) + b"\x00" * 10, 1),
    "negative-header-count": (record(0, headers=b"\x01"), 1),
    "offset-deltas-not-incremental": (record(0) + record(0), 2),
    "garbage": (b"\x10" + b"\xfe" * 40, 1),
}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_malformed_records_are_invalid_record_and_nothing_is_stored(wire, name, version):
    topic = unique_topic("hostile")
    topic_id = create_topic(wire, topic)
    body, count = HOSTILE[name]
    part = produce(wire, topic, topic_id, raw_batch(body, count), version)
    assert (part.error_code, part.base_offset, part.log_start_offset) == (ErrorCode.INVALID_RECORD, -1,
                                                                          log_start(version, 0))
    assert_no_record_errors(part, version)
    assert_nothing_stored(wire, topic)
    ok = produce(wire, topic, topic_id, raw_batch(record(0), 1), version)  # the connection goes on
    assert (ok.error_code, ok.base_offset) == (0, 0)


@pytest.mark.parametrize("version", [7, 8, 13])  # zstd needs v7
@pytest.mark.parametrize("codec", CODECS)
def test_compressed_batches_with_bad_records_or_streams_get_error_codes(wire, codec, version):
    topic = unique_topic("hostile-codec")
    topic_id = create_topic(wire, topic)
    wrapped = produce(wire, topic, topic_id, raw_batch(record(0) + record(0), 2, codec), version)
    assert wrapped.error_code == ErrorCode.INVALID_RECORD
    assert_no_record_errors(wrapped, version)
    # an undecodable stream, with header timestamps that look suspicious and ones that do not
    for max_timestamp in (NOW, NOW + 10**10, -1):
        garbage = raw_batch(b"\x00\x01garbage, not a codec stream\xff" * 3, 1, codec, compress=False,
                            max_timestamp=max_timestamp)
        part = produce(wire, topic, topic_id, garbage, version)
        assert part.error_code == ErrorCode.UNKNOWN_SERVER_ERROR  # Kafka's KafkaException from the codec stream
        assert part.log_start_offset == 0
    assert_nothing_stored(wire, topic)
    ok = produce(wire, topic, topic_id, raw_batch(record(0), 1, codec), version)
    assert (ok.error_code, ok.base_offset) == (0, 0)


@pytest.mark.parametrize("version", VERSIONS)
def test_record_timestamp_out_of_range_is_invalid_timestamp_with_its_index(wire, version):
    topic = unique_topic("ts")
    topic_id = create_topic(wire, topic, configs={"message.timestamp.after.max.ms": "60000"})
    future = NOW + 86_400_000
    body = record(0) + record(1, timestamp_delta=future - NOW) + record(2)
    part = produce(wire, topic, topic_id, raw_batch(body, 3, base_timestamp=NOW, max_timestamp=NOW), version)
    assert (part.error_code, part.base_offset, part.log_start_offset) == (ErrorCode.INVALID_TIMESTAMP, -1,
                                                                          log_start(version, 0))
    if version >= 8:
        [error] = part.record_errors
        assert error.batch_index == 1
        assert error.batch_index_error_message.startswith(f"Timestamp {future} of message with offset 1 is out of "
                                                          "range. The timestamp should be within [")
        assert part.error_message == "One or more records have been rejected due to invalid timestamp"
    assert_nothing_stored(wire, topic)


@pytest.mark.parametrize("version", VERSIONS)
def test_compacted_topic_refuses_records_without_key(wire, version):
    topic = unique_topic("compacted")
    topic_id = create_topic(wire, topic, configs={"cleanup.policy": "compact"})
    part = produce(wire, topic, topic_id, raw_batch(record(0) + record(1, key=None), 2), version)
    assert (part.error_code, part.log_start_offset) == (ErrorCode.INVALID_RECORD, log_start(version, 0))
    if version >= 8:
        message = f"Compacted topic cannot accept message without key in topic partition {topic}-0."
        assert [(e.batch_index, e.batch_index_error_message) for e in part.record_errors] == [(1, message)]
        assert part.error_message == ("One or more records have been rejected due to 1 record errors in total, and "
                                      f"only showing the first three errors at most: [{RecordError(1, message)!r}]")
    assert_nothing_stored(wire, topic)
    assert produce(wire, topic, topic_id, raw_batch(record(0), 1), version).error_code == 0


@pytest.mark.parametrize("version", VERSIONS)
def test_refused_batch_does_not_use_up_the_producers_sequence(wire, version):
    topic = unique_topic("idem")
    topic_id = create_topic(wire, topic)
    init = wire.request(InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000), 4)
    producer_id = init.producer_id
    garbage = raw_batch(record(0) + b"\x00\x00", 1, producer_id=producer_id, base_sequence=0)
    assert produce(wire, topic, topic_id, garbage, version).error_code == ErrorCode.INVALID_RECORD
    retry = produce(wire, topic, topic_id, raw_batch(record(0), 1, producer_id=producer_id, base_sequence=0), version)
    assert (retry.error_code, retry.base_offset) == (0, 0)  # stored, not answered as a duplicate
    assert list_offset(wire, topic, -1)[1] == 1
    assert records.read_header(fetch_all(wire, topic)).base_sequence == 0


def test_batch_with_header_max_timestamp_minus_one_is_stored_with_the_records_max(wire):
    topic = unique_topic("sarama")
    topic_id = create_topic(wire, topic)
    body = record(0, timestamp_delta=0) + record(1, timestamp_delta=700) + record(2, timestamp_delta=300)
    part = produce(wire, topic, topic_id, raw_batch(body, 3, base_timestamp=NOW, max_timestamp=-1), 9)
    assert (part.error_code, part.base_offset) == (0, 0)
    stored = fetch_all(wire, topic)
    header = records.read_header(stored)
    assert (header.max_timestamp, header.timestamp_type) == (NOW + 700, 0)
    assert records.crc_is_valid(stored, header)
    assert list_offset(wire, topic, NOW + 200) == (0, 1, NOW + 700)
    assert list_offset(wire, topic, -3)[1:] == (1, NOW + 700)  # MAX_TIMESTAMP


def test_compressed_batch_with_header_max_timestamp_minus_one_is_stored_with_the_records_max(wire):
    topic = unique_topic("sarama-lz4")
    topic_id = create_topic(wire, topic)
    body = record(0, timestamp_delta=0) + record(1, timestamp_delta=40)
    batch = raw_batch(body, 2, records.COMPRESSION_LZ4, base_timestamp=NOW, max_timestamp=-1)
    assert produce(wire, topic, topic_id, batch, 9).error_code == 0
    assert records.read_header(fetch_all(wire, topic)).max_timestamp == NOW + 40


def peak_rss(pid: int) -> int:
    """The process's resident-set high-water mark in bytes (Linux VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def test_zstd_bomb_is_refused_with_bounded_memory_while_other_clients_are_served(broker_factory):
    broker = broker_factory()
    bomb = raw_batch(zstd_of_zeros(2 << 30), 1000, records.COMPRESSION_ZSTD, compress=False,
                     max_timestamp=NOW + 10**12)  # 2 GiB of zeros, a header timestamp that asks for a look
    assert len(bomb) < 100_000
    with WireClient(broker.host, broker.port) as wire, WireClient(broker.host, broker.port) as other:
        topic = unique_topic("bomb")
        topic_id = create_topic(wire, topic)
        assert wire.request(ApiVersionsRequest(), 0).error_code == 0
        peak_before = peak_rss(broker.pid)
        wire.send_raw(wire.encode_request(produce_request(topic, bomb, version=9, topic_id=topic_id), 9))
        assert other.request(ApiVersionsRequest(), 0).error_code == 0  # another client is served
        _, response = wire.decode_response(wire.read_frame(), 0, 9)
        assert partition_response(response).error_code == ErrorCode.INVALID_RECORD
        assert peak_rss(broker.pid) - peak_before < 64 << 20  # never near the 2 GiB the records would take
        assert psutil.Process(broker.pid).is_running()
        assert_nothing_stored(wire, topic)


def test_records_expanding_past_the_bound_are_message_too_large(wire):
    topic = unique_topic("expands")
    topic_id = create_topic(wire, topic, configs={"max.message.bytes": "100000"})
    body = b"".join(record(i, value=bytes(100_000)) for i in range(200))  # 20 MB of records, > 16 x 100000
    part = produce(wire, topic, topic_id, raw_batch(body, 200, records.COMPRESSION_ZSTD), 9)
    assert (part.error_code, part.log_start_offset) == (ErrorCode.MESSAGE_TOO_LARGE, -1)
    assert_nothing_stored(wire, topic)
    small = b"".join(record(i, value=bytes(1000)) for i in range(200))  # well compressed, within the bound
    assert produce(wire, topic, topic_id, raw_batch(small, 200, records.COMPRESSION_ZSTD), 9).error_code == 0
