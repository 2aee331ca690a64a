"""RecordBatch v2 views: header, CRC32C, offset patch, compression."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minibroker.protocol import records
from minibroker.protocol.errors import KafkaError


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
def test_batch_round_trips_through_every_codec(codec):
    pairs = [(b"k%d" % i, b"value-%d" % i * 20) for i in range(50)]
    batch = records.build_batch(pairs, timestamp=1000, compression=codec)
    header = records.read_header(batch)
    assert header.compression == codec
    assert header.record_count == 50
    assert records.crc_is_valid(batch, header)
    assert [(r.key, r.value) for r in records.iter_records(batch)] == pairs


def test_xerial_framed_snappy_is_decoded():
    import cramjam

    body = b"hello world " * 100
    block = bytes(cramjam.snappy.compress_raw(body))
    framed = b"\x82SNAPPY\x00" + b"\x00\x00\x00\x01" * 2 + len(block).to_bytes(4, "big") + block
    assert records.decompress(records.COMPRESSION_SNAPPY, framed) == body


def test_patch_base_offset_keeps_crc_valid():
    batch = bytearray(records.build_batch([(None, b"x")], timestamp=5))
    records.patch_base_offset(batch, 12345, 7)
    header = records.read_header(batch)
    assert (header.base_offset, header.partition_leader_epoch) == (12345, 7)
    assert records.crc_is_valid(batch, header)


def test_flipped_byte_fails_crc():
    batch = bytearray(records.build_batch([(None, b"payload")], timestamp=5))
    batch[-1] ^= 1
    assert not records.crc_is_valid(batch, records.read_header(batch))


def test_log_append_time_rewrites_max_timestamp_and_crc():
    batch = bytearray(records.build_batch([(None, b"x")], timestamp=5))
    records.set_log_append_time(batch, 999)
    header = records.read_header(batch)
    assert header.timestamp_type == 1 and header.max_timestamp == 999
    assert records.crc_is_valid(batch, header)


def test_recompress_changes_codec_and_keeps_records():
    batch = records.build_batch([(b"a", b"b" * 500)], timestamp=5, compression=records.COMPRESSION_GZIP)
    out = records.recompress(batch, records.COMPRESSION_ZSTD)
    header = records.read_header(out)
    assert header.compression == records.COMPRESSION_ZSTD
    assert records.crc_is_valid(out, header)
    assert [(r.key, r.value) for r in records.iter_records(out)] == [(b"a", b"b" * 500)]


def test_truncated_record_set_is_refused():
    batch = records.build_batch([(None, b"x")], timestamp=5)
    with pytest.raises(KafkaError):
        records.split_batches(batch[:-3])


@given(st.integers(min_value=0, max_value=2**31 - 1), st.integers(min_value=0, max_value=1000))
def test_sequence_wraps_from_int_max_to_zero(sequence, increment):
    result = records.increment_sequence(sequence, increment)
    assert 0 <= result <= 2**31 - 1
    assert result == (sequence + increment) % 2**31
