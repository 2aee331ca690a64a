"""The record-by-record validation of produced batches (core/log_validator.py), and the append around it."""

from __future__ import annotations

import gzip
import time
import tracemalloc

import cramjam
import lz4.frame
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.log_validator import TopicPolicy, decompression_bound, validate_batch
from minibroker.protocol import compression, records
from minibroker.protocol.errors import ErrorCode, KafkaError, RecordError, RecordValidationError
from tests.hostile_batches import NOW, raw_batch, record, varint, zstd_of_zeros

LONG_MAX = 2**63 - 1
TP = "t-0"
CODECS = [records.COMPRESSION_GZIP, records.COMPRESSION_SNAPPY, records.COMPRESSION_LZ4, records.COMPRESSION_ZSTD]


def policy(**overrides: object) -> TopicPolicy:
    values: dict[str, object] = dict(log_append_time=False, before_max_ms=LONG_MAX, after_max_ms=3_600_000,
                                     compacted=False, max_message_bytes=1_048_588, recompressing=False)
    values.update(overrides)
    return TopicPolicy(**values)  # type: ignore[arg-type]


def validate(batch: bytes, **overrides: object):
    return validate_batch(batch, records.read_header(batch), TP, policy(**overrides), NOW)


def refusal(batch: bytes, **overrides: object) -> KafkaError:
    with pytest.raises(KafkaError) as caught:
        validate(batch, **overrides)
    return caught.value


# -- malformed records: Kafka's InvalidRecordException messages, no record errors ---------------

GOOD = record(0) + record(1)
MALFORMED = {
    "bytes-after-last-record": (GOOD + b"\x00", 2, "Incorrect declared batch size, records still remaining in file"),
    "fewer-records-than-count": (record(0), 2, "Incorrect declared batch size, premature EOF reached"),
    "record-longer-than-batch": (varint(50) + b"\x00" * 10, 1,
                                 "Invalid record size: expected 50 bytes in record payload, but instead the buffer "
                                 "has only 10 remaining bytes."),
    "negative-header-count": (record(0, headers=varint(-1)), 1, "Found invalid number of record headers -1"),
    "header-count-beyond-buffer": (record(0, headers=varint(40)), 1,
                                   "Found invalid number of record headers. 40 is larger than the remaining size of "
                                   "the buffer"),
    "negative-header-key-size": (record(0, headers=varint(1) + varint(-2)), 1,
                                 "Invalid negative header key size -2"),
    "key-longer-than-record": (varint(5) + b"\x00\x00\x00" + varint(3) + b"abc" + varint(-1) + varint(0) + GOOD, 3,
                               "Invalid record size: expected to read 5 bytes in record payload, but instead read 9"),
    "key-past-end-of-batch": (varint(5) + b"\x00\x00\x00" + varint(60) + b"a", 1, "Found invalid record structure"),
    "garbage": (b"\x10" + b"\xfe" * 40, 1, "Found invalid record structure"),
    "offset-deltas-not-incremental": (record(0) + record(0), 2,
                                      "Record DefaultRecord(offset=0, timestamp=1700000000000, key=1 bytes, value=1 "
                                      "bytes) in the record batch does not have incremental offsets, expected offset "
                                      "is 1 in topic partition t-0."),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_uncompressed_records_are_invalid_record_with_kafkas_message(name):
    body, count, message = MALFORMED[name]
    error = refusal(raw_batch(body, count))
    assert not isinstance(error, RecordValidationError)
    assert (error.code, error.message) == (ErrorCode.INVALID_RECORD, message)


def test_record_size_varint_longer_than_five_bytes_is_unknown_server_error():
    # ByteUtils.readVarint's IllegalArgumentException escapes Kafka's record iterator
    assert refusal(raw_batch(b"\xfe" * 40, 1)).code == ErrorCode.UNKNOWN_SERVER_ERROR


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("name", ["bytes-after-last-record", "fewer-records-than-count", "garbage",
                                  "negative-header-count", "offset-deltas-not-incremental"])
def test_valid_compressed_frame_wrapping_malformed_records_is_invalid_record(codec, name):
    body, count, message = MALFORMED[name]
    error = refusal(raw_batch(body, count, codec))
    assert error.code == ErrorCode.INVALID_RECORD
    if name != "garbage":
        assert error.message == message


@pytest.mark.parametrize("codec", CODECS)
def test_compressed_record_cut_short_reports_the_payload_reaching_eof(codec):
    error = refusal(raw_batch(varint(50) + b"\x00" * 10, 1, codec))
    assert (error.code, error.message) == (
        ErrorCode.INVALID_RECORD, "Invalid record size: expected 50 bytes in record payload, but the record payload "
                                  "reached EOF.")


@pytest.mark.parametrize("codec", CODECS)
def test_undecodable_codec_stream_is_unknown_server_error(codec):
    garbage = b"\x00\x01\x02 not a compressed stream at all \xff\xfe" * 4
    error = refusal(raw_batch(garbage, 1, codec, compress=False))
    assert (error.code, error.message) == (ErrorCode.UNKNOWN_SERVER_ERROR, "Failed to decompress record stream")


@pytest.mark.parametrize("codec", [records.COMPRESSION_NONE, *CODECS])
def test_valid_batches_of_every_codec_are_accepted(codec):
    pairs = [(b"key-%d" % i if i % 3 else None, b"value-%d" % i * (i + 1)) for i in range(300)]
    headers = [[("h", b"x"), ("n", None)] if i % 7 == 0 else [] for i in range(300)]
    batch = records.build_batch(pairs, timestamps=[NOW - 500 + 3 * i for i in range(300)], compression=codec,
                                headers=headers)
    result = validate(batch)
    assert (result.timestamp_type, result.max_timestamp, result.log_append_time) == (0, NOW - 500 + 3 * 299, -1)


# -- record errors: RecordValidationException ----------------------------------------------------

def test_record_timestamp_out_of_range_is_invalid_timestamp_even_when_the_header_looks_fine():
    day = 86_400_000
    body = record(0) + record(1, timestamp_delta=day) + record(2, timestamp_delta=-1 - NOW) + record(3)
    batch = raw_batch(body, 4, max_timestamp=NOW)  # the header claims nothing newer than now
    with pytest.raises(RecordValidationError) as caught:
        validate(batch)
    error = caught.value
    assert error.code == ErrorCode.INVALID_TIMESTAMP
    assert error.summary == "One or more records have been rejected due to invalid timestamp"
    # record 2 has timestamp -1 (no timestamp), which Kafka never range-checks
    message = (f"Timestamp {NOW + day} of message with offset 1 is out of range. "
               f"The timestamp should be within [{NOW - LONG_MAX}, {NOW + 3_600_000}]")
    assert error.record_errors == [RecordError(1, message)]


def test_record_older_than_before_max_is_invalid_timestamp():
    batch = raw_batch(record(0, timestamp_delta=-120_000) + record(1), 2, max_timestamp=NOW)
    with pytest.raises(RecordValidationError) as caught:
        validate(batch, before_max_ms=60_000)
    assert [e.batch_index for e in caught.value.record_errors] == [0]


def test_compacted_topic_refuses_records_without_key_as_kafka_does():
    body = record(0, key=None) + record(1) + record(2, key=None) + record(3, key=None) + record(4, key=None)
    with pytest.raises(RecordValidationError) as caught:
        validate(raw_batch(body, 5), compacted=True)
    error = caught.value
    message = "Compacted topic cannot accept message without key in topic partition t-0."
    assert error.code == ErrorCode.INVALID_RECORD
    assert error.record_errors == [RecordError(i, message) for i in (0, 2, 3, 4)]
    shown = ", ".join(repr(RecordError(i, message)) for i in (0, 2, 3))
    assert error.summary == ("One or more records have been rejected due to 4 record errors in total, and only "
                             f"showing the first three errors at most: [{shown}]")


def test_record_error_prints_as_javas_default_object_text():
    # Objects.hash(0, "abc") = 31 * 31 + "abc".hashCode() = 961 + 96354
    assert repr(RecordError(0, "abc")) == "org.apache.kafka.common.requests.ProduceResponse$RecordError@17c23"


def test_keyless_records_are_fine_on_a_topic_that_is_not_compacted():
    assert validate(raw_batch(record(0, key=None), 1)).max_timestamp == NOW


def test_log_append_time_batch_without_timestamp_is_refused_on_create_time_topic():
    batch = raw_batch(record(0, value=b"abc"), 1, max_timestamp=-1, attributes=records.ATTR_TIMESTAMP_TYPE)
    with pytest.raises(RecordValidationError) as caught:
        validate(batch)
    assert caught.value.code == ErrorCode.INVALID_TIMESTAMP
    assert caught.value.record_errors == [RecordError(0, "Invalid timestamp type in message DefaultRecord(offset=0, "
                                                         "timestamp=-1, key=1 bytes, value=3 bytes). Producer should "
                                                         "not set timestamp type to LogAppendTime.")]


def test_log_append_time_batch_is_refused_on_log_append_time_topic():
    batch = raw_batch(record(0) + record(1), 2, attributes=records.ATTR_TIMESTAMP_TYPE)
    with pytest.raises(RecordValidationError) as caught:
        validate(batch, log_append_time=True)
    assert [e.batch_index for e in caught.value.record_errors] == [0, 1]


def test_log_append_time_topic_stamps_the_append_time():
    result = validate(raw_batch(record(0, timestamp_delta=-10**9), 1), log_append_time=True)
    assert (result.timestamp_type, result.max_timestamp, result.log_append_time) == (1, NOW, NOW)


# -- max timestamp -------------------------------------------------------------------------------

@pytest.mark.parametrize("codec", [records.COMPRESSION_NONE, records.COMPRESSION_LZ4])
def test_max_timestamp_is_recomputed_from_the_records_when_the_header_says_minus_one(codec):
    body = record(0, timestamp_delta=5) + record(1, timestamp_delta=40) + record(2, timestamp_delta=7)
    result = validate(raw_batch(body, 3, codec, max_timestamp=-1))
    assert result.max_timestamp == NOW + 40


def test_set_max_timestamp_rewrites_header_and_crc_only_when_it_differs():
    batch = bytearray(raw_batch(record(0), 1, max_timestamp=-1))
    assert records.set_max_timestamp(batch, 0, NOW)
    header = records.read_header(batch)
    assert header.max_timestamp == NOW and records.crc_is_valid(batch, header)
    assert not records.set_max_timestamp(batch, 0, NOW)


# -- bounded decompression -----------------------------------------------------------------------

def test_zstd_bomb_of_zeros_is_refused_at_once_with_little_memory():
    frame = zstd_of_zeros(1 << 30)  # 1 GiB of zeros in about 32 KB
    batch = raw_batch(frame, 1000, records.COMPRESSION_ZSTD, compress=False, max_timestamp=NOW + 10**12)
    tracemalloc.start()
    started = time.monotonic()
    try:
        error = refusal(batch)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert error.code == ErrorCode.INVALID_RECORD
    assert peak < 2 << 20
    assert time.monotonic() - started < 1


@pytest.mark.parametrize("shape", ["one-huge-record", "many-records"])
@pytest.mark.parametrize("codec", CODECS)
def test_records_expanding_beyond_the_bound_are_message_too_large_without_holding_more(codec, shape):
    bound = decompression_bound(100_000)
    if shape == "one-huge-record":
        body = record(0, value=bytes(bound + 1000))
    else:
        body = b"".join(record(i, value=bytes(4000)) for i in range(bound // 4000 + 10))
    payload = gzip.compress(body) if codec == records.COMPRESSION_GZIP else compression.compress(codec, body)
    batch = raw_batch(payload, 1 if shape == "one-huge-record" else bound // 4000 + 10, codec, compress=False)
    tracemalloc.start()
    try:
        error = refusal(batch, max_message_bytes=100_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert error.code == ErrorCode.MESSAGE_TOO_LARGE
    assert peak < bound + (1 << 20)


def test_snappy_block_declaring_a_huge_size_is_refused_before_allocating():
    block = bytes(cramjam.snappy.compress_raw(record(0)))  # its preamble is one byte: the length, 11
    huge = bytes([0x80, 0x80, 0x80, 0x80, 0x04]) + block[1:]  # the preamble now says 1 GiB
    error = refusal(raw_batch(huge, 1, records.COMPRESSION_SNAPPY, compress=False))
    assert error.code == ErrorCode.MESSAGE_TOO_LARGE


def test_lz4_frame_from_the_lz4_library_is_read():
    body = record(0) + record(1)
    assert validate(raw_batch(lz4.frame.compress(body), 2, records.COMPRESSION_LZ4, compress=False))


# -- the fast lane and the exact reader agree ------------------------------------------------------

BASE = records.build_batch([(b"k" * i if i % 4 else None, b"v" * (i * 37 % 200)) for i in range(80)],
                           timestamps=[NOW + i * 3 for i in range(80)],
                           headers=[[("h", b"x" * i)] if i % 5 == 0 else [] for i in range(80)])


def _outcome(batch: bytes, details: bool) -> object:
    from minibroker.core import log_validator

    header = records.read_header(batch)
    walk = log_validator._Walk(header, TP, [] if details else None)
    try:
        log_validator._scan(batch, header, walk, 1 << 20)
    except KafkaError as exc:
        return exc.code, exc.message
    return walk.min_delta, walk.max_delta, walk.keyless


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(records.HEADER_SIZE, len(BASE) - 1), st.integers(0, 255)), max_size=3))
def test_fast_lane_accepts_and_refuses_exactly_what_the_exact_reader_does(mutations):
    batch = bytearray(BASE)
    for position, value in mutations:
        batch[position] = value
    assert _outcome(bytes(batch), details=False) == _outcome(bytes(batch), details=True)


def test_the_compiled_fast_lane_is_built():
    from minibroker.core import log_validator

    assert log_validator._speedups is not None, "setup.py did not build minibroker/core/_validator_speedups.c"


def _lane(lane: object, buf: bytes, end: int, index: int) -> tuple[object, ...]:
    from minibroker.core import log_validator

    walk = log_validator._Walk(records.read_header(BASE), TP)
    walk.min_delta, walk.max_delta = 1 << 62, -(1 << 62)
    if lane == "python":
        pos, reached = log_validator._fast_lane(buf, records.HEADER_SIZE, end, index, 80, walk)
    else:
        pos, reached, walk.min_delta, walk.max_delta, walk.keyless = log_validator._speedups.fast_lane(
            buf, records.HEADER_SIZE, end, index, 80, walk.min_delta, walk.max_delta, walk.keyless)
    return pos, reached, walk.min_delta, walk.max_delta, walk.keyless


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.integers(records.HEADER_SIZE, len(BASE) - 1), st.integers(0, 255)), max_size=3),
       st.integers(records.HEADER_SIZE, len(BASE)), st.integers(records.HEADER_SIZE, len(BASE)), st.integers(0, 3))
def test_compiled_fast_lane_stops_where_the_python_lane_does(mutations, cut, end, index):
    batch = bytearray(BASE)
    for position, value in mutations:
        batch[position] = value
    buf = bytes(batch[:cut])  # a decompressed stream may end anywhere
    assert _lane("c", buf, end, index) == _lane("python", buf, end, index)


# -- the append around the validator -----------------------------------------------------------------

def _cluster() -> tuple[Cluster, ManualClock]:
    clock = ManualClock(NOW)
    cluster = Cluster(clock=clock)
    cluster.create_topic("t", 1, 1, {"retention.ms": "3600000"})
    return cluster, clock


def test_batch_with_max_timestamp_minus_one_is_stored_with_the_records_newest_timestamp():
    cluster, clock = _cluster()
    partition = cluster.partition("t", 0)
    body = record(0, timestamp_delta=0) + record(1, timestamp_delta=25)
    cluster.append(partition, raw_batch(body, 2, max_timestamp=-1))  # as sarama before 2025 sends it
    stored = partition.log.batches[0]
    header = records.read_header(stored)
    assert header.max_timestamp == NOW + 25
    assert records.crc_is_valid(stored, header)
    assert partition.log.offset_for_timestamp(NOW + 10) == (1, NOW + 25)
    clock.advance(60_000)
    cluster.apply_retention()
    assert partition.log.log_start_offset == 0  # not taken for older than retention.ms


def test_refused_batch_consumes_no_sequence_and_changes_no_state():
    cluster, _ = _cluster()
    partition = cluster.partition("t", 0)
    producer_id = cluster.new_producer_id()
    garbage = raw_batch(record(0) + b"\x00\x01", 1, producer_id=producer_id, base_sequence=0)
    with pytest.raises(KafkaError):
        cluster.append(partition, garbage)
    assert partition.log.log_end_offset == 0
    assert producer_id not in partition.producer_state.producers
    retry = raw_batch(record(0), 1, producer_id=producer_id, base_sequence=0)
    assert cluster.append(partition, retry).base_offset == 0
    assert partition.log.log_end_offset == 1


def test_offset_lookups_never_raise_on_an_unreadable_stored_batch():
    cluster, _ = _cluster()
    partition = cluster.partition("t", 0)
    cluster.append(partition, raw_batch(record(0), 1))
    partition.log.batches[0] = bytearray(raw_batch(b"\xfe" * 30, 1))  # what an unvalidated append once stored
    assert partition.log.offset_for_timestamp(NOW) is None
    assert partition.log.max_timestamp_offset() == (0, NOW)


COMPRESSED = {codec: records.build_batch([(b"k%d" % i, b"v" * (i * 13 % 300)) for i in range(60)],
                                         timestamps=[NOW + i for i in range(60)], compression=codec)
              for codec in CODECS}


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(CODECS), st.integers(0, 10_000), st.lists(st.tuples(st.integers(0, 10_000),
                                                                            st.integers(0, 255)), max_size=4))
def test_any_damage_under_a_codec_gets_an_error_code_never_another_exception(codec, cut, mutations):
    original = COMPRESSED[codec]
    payload = bytearray(original[records.HEADER_SIZE:])
    for position, value in mutations:
        payload[position % len(payload)] = value
    del payload[max(1, len(payload) - cut % len(payload)):]
    batch = raw_batch(bytes(payload), 60, codec, compress=False)
    try:
        validate(batch)
    except KafkaError as exc:
        assert exc.code in (ErrorCode.INVALID_RECORD, ErrorCode.UNKNOWN_SERVER_ERROR, ErrorCode.MESSAGE_TOO_LARGE)


@pytest.mark.parametrize("codec", [records.COMPRESSION_NONE, records.COMPRESSION_ZSTD])
def test_batch_of_many_records_with_long_offset_deltas_is_accepted(codec):
    count = 20_000  # offset deltas of one, two and three varint bytes
    body = b"".join(record(i, key=None, value=b"", timestamp_delta=i % 100) for i in range(count))
    assert validate(raw_batch(body, count, codec)).max_timestamp == NOW + 99
