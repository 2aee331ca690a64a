"""RecordBatch v2 views: header, CRC32C, offset patch, compression."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minibroker.protocol import compression, legacy_records, records
from minibroker.protocol.errors import DecompressionLimitError, ErrorCode, KafkaError


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
    assert compression.decompress(records.COMPRESSION_SNAPPY, framed) == body


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


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_iter_decompressed_gives_the_records_section_in_bounded_pieces(codec):
    body = b"".join(b"record %d " % i * 50 for i in range(2000))
    payload = compression.compress(codec, body)
    pieces = list(compression.iter_decompressed(codec, payload, limit=len(body), chunk=4096))
    assert b"".join(pieces) == body
    if codec != 2:  # raw snappy comes a block at a time, its declared size checked before decompressing
        assert max(len(piece) for piece in pieces) <= 4096


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_iter_decompressed_stops_at_the_limit(codec):
    body = bytes(1 << 20)
    with pytest.raises(DecompressionLimitError) as caught:
        list(compression.iter_decompressed(codec, compression.compress(codec, body), limit=100_000, chunk=4096))
    assert caught.value.code == ErrorCode.MESSAGE_TOO_LARGE
    assert caught.value.limit == 100_000


def test_gzip_members_are_read_one_after_another():
    import gzip

    payload = gzip.compress(b"first ") + gzip.compress(b"second")
    assert b"".join(compression.iter_decompressed(1, payload, limit=100)) == b"first second"


def test_xerial_snappy_blocks_are_read_one_after_another():
    import cramjam

    blocks = [bytes(cramjam.snappy.compress_raw(part)) for part in (b"a" * 100, b"b" * 100)]
    framed = b"\x82SNAPPY\x00" + b"\x00\x00\x00\x01" * 2 + b"".join(len(b).to_bytes(4, "big") + b for b in blocks)
    assert list(compression.iter_decompressed(2, framed, limit=1000)) == [b"a" * 100, b"b" * 100]


def test_undecodable_stream_is_unknown_server_error():
    with pytest.raises(KafkaError) as caught:
        list(compression.iter_decompressed(4, b"\x28\xb5\x2f\xfd garbage", limit=1000))
    assert (caught.value.code, caught.value.message) == (ErrorCode.UNKNOWN_SERVER_ERROR,
                                                         "Failed to decompress record stream")


def test_record_body_is_read_as_kafkas_default_record_reads_it():
    body = b"\x00" + b"\x06" + b"\x02" + b"\x02k" + b"\x04vv" + b"\x02" + b"\x02h" + b"\x01"
    assert records.read_record_size(bytes([len(body) * 2]) + body, 0, 1 + len(body)) == (len(body), 1)
    assert records.read_record_body(body, 0, len(body), len(body)) == (len(body), 0, 3, 1, 1, 2)
    with pytest.raises(KafkaError, match="^Found invalid record structure$"):
        records.read_record_body(body, 0, len(body), 4)  # the key runs past the end
    assert records.read_record_size(b"\x80", 0, 1) is None  # the varint goes on past the end


@pytest.mark.parametrize("transactional", [False, True])
def test_a_v2_batch_is_transactional_by_its_attributes(transactional):
    batch = records.build_batch([(None, b"v")], timestamp=0, producer_id=1, producer_epoch=0, base_sequence=0,
                                transactional=transactional)
    assert records.has_transactional_batch(batch) is transactional
    # the flag of a later batch counts too, as RequestUtils.flag walks every batch
    plain = records.build_batch([(None, b"w")], timestamp=0)
    assert records.has_transactional_batch(plain + batch) is transactional


@pytest.mark.parametrize("byte_22", [0x00, 0x10, 0xFF])
@pytest.mark.parametrize("magic", [0, 1])
def test_a_legacy_message_set_is_never_transactional(magic, byte_22):
    """Byte 22 of a magic 0/1 entry is part of its key or timestamp, whatever bit 0x10 holds."""
    timestamp = byte_22 << 24
    key = bytes([byte_22]) * 60
    entry = legacy_records.legacy_entry(0, magic, 0, timestamp, key, b"v")
    assert entry[22] == byte_22 and len(entry) >= records.HEADER_SIZE
    assert records.has_transactional_batch(entry + entry) is False
    # a transactional v2 batch after a legacy entry is still seen
    txn = records.build_batch([(None, b"v")], timestamp=0, producer_id=1, producer_epoch=0, base_sequence=0,
                              transactional=True)
    assert records.has_transactional_batch(entry + txn) is True


def test_a_short_or_partial_entry_ends_the_transactional_scan():
    txn = records.build_batch([(None, b"v")], timestamp=0, producer_id=1, producer_epoch=0, base_sequence=0,
                              transactional=True)
    assert records.has_transactional_batch(txn[:-1]) is False  # a partial batch is no batch
    assert records.has_transactional_batch(b"") is False and records.has_transactional_batch(None) is False
    corrupt = bytes(8) + (3).to_bytes(4, "big") + bytes(60)
    assert records.has_transactional_batch(corrupt + txn) is False
