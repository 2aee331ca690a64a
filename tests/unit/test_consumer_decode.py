"""The client's record decoding (client/consumer.py `decode_batch_into`) against the protocol's record reader.

Varints of one, two and more bytes (lengths, offset and timestamp deltas), null keys, values and header
values, compressed batches, the offset range, LogAppendTime, and the refusals of a bad batch.
"""

from __future__ import annotations

import struct

import pytest

from minibroker.client.consumer import RecordColumns, decode_batch_into
from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode, KafkaError

BASE_TIMESTAMP = 1_700_000_000_000


def batch_of(count: int, *, compression: int = records.COMPRESSION_NONE, base_offset: int = 1000) -> bytes:
    """`count` records whose fields need varints of every size, some of them null."""
    sizes = [0, 1, 63, 64, 100, 8191, 8192, 20_000]
    rows = []
    headers = []
    timestamps = []
    for i in range(count):
        key = None if i % 5 == 0 else b"k" * sizes[i % len(sizes)]
        value = None if i % 7 == 3 else bytes([i % 251]) * sizes[(i * 3) % len(sizes)]
        rows.append((key, value))
        headers.append([(f"h{j}" * (1 + j * 40), None if j == 1 else b"v" * sizes[(i + j) % len(sizes)])
                        for j in range(i % 4)])
        timestamps.append(BASE_TIMESTAMP + (i * 7919) % 20_000 - 10_000)  # deltas of both signs
    return records.build_batch(rows, headers=headers, timestamps=timestamps, compression=compression,
                               base_offset=base_offset)


def decoded(batch: bytes, start: int = 0, end: int = 2**62, headers: bool = True) -> RecordColumns:
    columns = RecordColumns(headers=[] if headers else None)
    decode_batch_into(batch, records.read_header(batch), columns, start, end)
    return columns


@pytest.mark.parametrize("compression", [records.COMPRESSION_NONE, records.COMPRESSION_GZIP,
                                         records.COMPRESSION_ZSTD])
def test_records_decode_as_the_protocol_reader_reads_them(compression: int) -> None:
    batch = batch_of(200, compression=compression)
    expected = list(records.iter_records(batch))
    columns = decoded(batch)
    assert columns.offsets == [r.offset for r in expected] == list(range(1000, 1200))
    assert columns.timestamps == [r.timestamp for r in expected]
    assert columns.keys == [r.key for r in expected]
    assert columns.values == [r.value for r in expected]
    assert columns.headers == [r.headers for r in expected]
    assert columns.timestamp_types == [0] * 200


def test_only_offsets_in_the_range_are_kept_and_headers_only_when_asked() -> None:
    batch = batch_of(50)
    expected = [r for r in records.iter_records(batch) if 1010 <= r.offset < 1020]
    columns = decoded(batch, 1010, 1020, headers=False)
    assert columns.offsets == list(range(1010, 1020))
    assert columns.values == [r.value for r in expected]
    assert columns.headers is None


def test_log_append_time_gives_every_record_the_batch_timestamp() -> None:
    batch = bytearray(batch_of(20))
    records.set_log_append_time(batch, BASE_TIMESTAMP + 99)
    columns = decoded(bytes(batch), 1005, 1010)
    assert columns.timestamps == [BASE_TIMESTAMP + 99] * 5
    assert columns.timestamp_types == [1] * 5


def test_a_batch_whose_crc_fails_is_corrupt() -> None:
    batch = bytearray(batch_of(3))
    batch[-1] ^= 0xFF
    with pytest.raises(KafkaError) as refused:
        decoded(bytes(batch))
    assert refused.value.code is ErrorCode.CORRUPT_MESSAGE


def test_records_beyond_the_record_count_are_corrupt() -> None:
    batch = bytearray(batch_of(3))
    struct.pack_into(">i", batch, records.HEADER_SIZE - 4, 2)  # recordCount, the header's last field
    struct.pack_into(">I", batch, 17, records.compute_crc(batch))
    with pytest.raises(KafkaError, match="size does not match its records") as refused:
        decoded(bytes(batch))
    assert refused.value.code is ErrorCode.CORRUPT_MESSAGE
