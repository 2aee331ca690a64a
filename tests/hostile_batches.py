"""Record batches built byte by byte, valid or hostile, with a CRC that passes (for validation tests)."""

from __future__ import annotations

import struct

import zstandard

from minibroker.protocol import compression, records

NOW = 1_700_000_000_000


def varint(value: int) -> bytes:
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def record(offset_delta: int = 0, key: bytes | None = b"k", value: bytes | None = b"v", timestamp_delta: int = 0,
           headers: bytes = varint(0)) -> bytes:
    """One record, its size prefix included."""
    body = b"\x00" + varint(timestamp_delta) + varint(offset_delta)
    for field in (key, value):
        body += varint(-1) if field is None else varint(len(field)) + field
    body += headers
    return varint(len(body)) + body


def raw_batch(body: bytes, count: int, codec: int = records.COMPRESSION_NONE, base_timestamp: int = NOW,
              max_timestamp: int = NOW, attributes: int = 0, producer_id: int = -1, base_sequence: int = -1,
              compress: bool = True) -> bytes:
    """A batch around `body` (compressed with `codec` unless told not to) with a valid CRC."""
    payload = compression.compress(codec, body) if compress and codec else body
    batch = bytearray(records.HEADER_SIZE) + payload
    struct.pack_into(">qiibIhiqqqhii", batch, 0, 0, len(batch) - 12, -1, 2, 0, attributes | codec, count - 1,
                     base_timestamp, max_timestamp, producer_id, 0 if producer_id >= 0 else -1, base_sequence, count)
    struct.pack_into(">I", batch, 17, records.compute_crc(batch))
    return bytes(batch)


def zstd_of_zeros(size: int) -> bytes:
    """A zstd frame of `size` zero bytes, built a MiB at a time."""
    compressor = zstandard.ZstdCompressor().compressobj()
    zeros = bytes(1 << 20)
    return b"".join([compressor.compress(zeros) for _ in range(size >> 20)] + [compressor.flush()])
