"""Message sets of magic 0 and 1: Kafka's LegacyRecord and AbstractLegacyRecordBatch.

A log entry of an old message set: offset i64 | size i32 | crc u32 (CRC32 of the rest) | magic i8 |
attributes i8 | timestamp i64 (magic 1 only) | keyLength i32 | key | valueLength i32 | value. A compressed
entry is a wrapper message whose value is the compressed inner message set (relative inner offsets for
magic 1, absolute for magic 0).

Read as Produce v0-2 sends them (`read_legacy_entries`; log_validator.py converts them to one v2 batch) and
written as Fetch v0-3 down-converts stored v2 batches to them (`down_convert`, Kafka 3.9's RecordsUtil and
LazyDownConversionRecords). Record batches of magic 2 are records.py's.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

from .compression import COMPRESSION_LZ4, COMPRESSION_NONE, COMPRESSION_ZSTD, compress, kafka_lz4_frame
from .errors import ErrorCode, KafkaError
from .records import (
    HEADER_SIZE,
    LEGACY_RECORD_OVERHEAD_V0,
    LOG_OVERHEAD,
    MAGIC_OFFSET,
    Record,
    iter_records,
    read_header,
)

MAGIC_V0, MAGIC_V1 = 0, 1
LEGACY_ATTR_LOG_APPEND_TIME = 0x08  # a magic 1 message's timestamp type bit
_LEGACY_LOG_ENTRY = struct.Struct(">qi")  # offset, message size
_LEGACY_BYTES_LENGTH = struct.Struct(">i")
_LEGACY_HEAD = struct.Struct(">bb")  # magic, attributes
_LEGACY_TIMESTAMP = struct.Struct(">q")
_LEGACY_CRC = struct.Struct(">I")
# LazyDownConversionRecordsSend: converted chunks are read this much at a time, and an overflow message that pads
# the answer to its announced size is at most this long and at least a log entry header
MAX_CONVERSION_READ_SIZE = 128 * 1024
RECORD_BATCH_OVERHEAD = HEADER_SIZE


# -- down-conversion to message format v0 and v1, for Fetch v0-3 (Kafka 3.9's RecordsUtil.downConvert) --------

def _legacy_bytes(value: bytes | None) -> bytes:
    if value is None:
        return _LEGACY_BYTES_LENGTH.pack(-1)
    return _LEGACY_BYTES_LENGTH.pack(len(value)) + value


def legacy_entry(offset: int, magic: int, attributes: int, timestamp: int, key: bytes | None,
                 value: bytes | None) -> bytes:
    """One log entry of a magic 0 or 1 message set: offset, size, then the message with its CRC32
    (LegacyRecord.write); a magic 0 message has no timestamp."""
    body = (_LEGACY_HEAD.pack(magic, attributes) + (_LEGACY_TIMESTAMP.pack(timestamp) if magic else b"")
            + _legacy_bytes(key) + _legacy_bytes(value))
    message = _LEGACY_CRC.pack(zlib.crc32(body)) + body
    return _LEGACY_LOG_ENTRY.pack(offset, len(message)) + message


def down_convert_batch(batch: bytes | bytearray | memoryview, magic: int, fetch_offset: int) -> bytes:
    """One stored v2 batch as a magic 0 or 1 message set, as RecordsUtil.convertRecordBatch writes it.

    Control batches have no legacy form and give b"". Headers are dropped; offsets are kept; magic 1 keeps
    each record's timestamp (the batch's log append time for LOG_APPEND_TIME batches, flagged in the
    attributes), magic 0 has none. An uncompressed batch loses the records below `fetch_offset`; a
    compressed one becomes one wrapper message compressed with the batch's codec, holding every record
    (relative inner offsets for magic 1, absolute for magic 0), at the offset of its last record.
    KafkaError(UNSUPPORTED_COMPRESSION_TYPE) for a zstd batch, which message formats 0 and 1 cannot hold.
    """
    header = read_header(batch)
    if header.is_control:
        return b""
    codec = header.compression
    if codec == COMPRESSION_ZSTD:
        raise KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
                         "Down-conversion of zstandard-compressed batches is not supported")
    kept = [r for r in iter_records(batch) if codec != COMPRESSION_NONE or r.offset >= fetch_offset]
    if not kept:
        return b""
    log_append_time = header.timestamp_type == 1
    flag = LEGACY_ATTR_LOG_APPEND_TIME if magic and log_append_time else 0

    def stamp(record: Record) -> int:
        return header.max_timestamp if log_append_time else record.timestamp

    if codec == COMPRESSION_NONE:
        return b"".join(legacy_entry(r.offset, magic, flag, stamp(r), r.key, r.value) for r in kept)
    base = kept[0].offset if magic else 0
    inner = b"".join(legacy_entry(r.offset - base, magic, flag, stamp(r), r.key, r.value) for r in kept)
    wrapper_timestamp = max(stamp(r) for r in kept)
    if codec == COMPRESSION_LZ4:
        payload = kafka_lz4_frame(inner, broken_header_checksum=magic == MAGIC_V0)
    else:
        payload = compress(codec, inner)
    return legacy_entry(kept[-1].offset, magic, codec | flag, wrapper_timestamp, None, payload)


def _overflow(remaining: int) -> bytes:
    """LazyDownConversionRecordsSend.buildOverflowBatch: a log entry header at offset -1 whose length runs past
    the answer, so that a client drops it as a partial message."""
    size = max(LOG_OVERHEAD, min(remaining + 1, MAX_CONVERSION_READ_SIZE))
    head = _LEGACY_LOG_ENTRY.pack(-1, max(remaining + 1, RECORD_BATCH_OVERHEAD))
    return head + bytes(size - len(head))


def down_convert(batches: Sequence[bytes | bytearray | memoryview], magic: int, fetch_offset: int) -> bytes:
    """A partition's fetched batches as the magic 0 or 1 message set Kafka 3.9 sends for Fetch v0-3.

    As LazyDownConversionRecords: the answer announces max(the stored size, the first batch that converts to
    something), or one log entry header when none does, and is exactly that long. The first such batch comes
    first; then the batches from the second one on (LazyDownConversionRecordsSend skips only one batch of
    those it converted already, so batches after leading control batches come twice; clients skip offsets
    they have) in chunks of up to 128 KB, a chunk converting to nothing left out. The bytes are cut at the
    announced size (a partial last message, which clients skip) or padded with overflow entries when
    conversion made them shorter (dropped control batches and headers) or met a zstd batch after the first.
    KafkaError(UNSUPPORTED_COMPRESSION_TYPE) when a zstd batch comes before anything converted.
    """
    first = b""
    index = 0
    while index < len(batches) and not first:
        first = down_convert_batch(batches[index], magic, fetch_offset)
        index += 1
    if not first:
        return _overflow(LOG_OVERHEAD)[:LOG_OVERHEAD]
    size = max(sum(len(batch) for batch in batches), len(first))
    pieces = [first]
    written = len(first)
    index = 1  # the send's own iterator skips one batch for the first converted one, whatever it took
    while index < len(batches) and written < size:
        chunk = [batches[index]]
        chunk_size = len(batches[index])
        index += 1
        while index < len(batches) and chunk_size + len(batches[index]) <= MAX_CONVERSION_READ_SIZE:
            chunk.append(batches[index])
            chunk_size += len(batches[index])
            index += 1
        try:
            converted = b"".join(down_convert_batch(batch, magic, fetch_offset) for batch in chunk)
        except KafkaError as exc:
            if exc.code != ErrorCode.UNSUPPORTED_COMPRESSION_TYPE:
                raise
            break  # committed to the size already: the rest is overflow, the next fetch gets the error
        pieces.append(converted)
        written += len(converted)
    while written < size:
        piece = _overflow(size - written)[:size - written]
        pieces.append(piece)
        written += len(piece)
    return b"".join(pieces)[:size]


# -- message sets of magic 0 and 1 as Produce v0-2 carries them (LegacyRecord, AbstractLegacyRecordBatch) ------

_LEGACY_ENTRY_HEAD = struct.Struct(">qiIbb")  # offset, message size, crc, magic, attributes
_LEGACY_CRC_START = 16  # a message's CRC32 covers its magic onwards

LegacyEntry = tuple[int, int, int, int, bytes | None, bytes | None]


def is_legacy_message_set(data: bytes | bytearray | memoryview) -> bool:
    """Whether a record set starts with an entry of magic 0 or 1 (a message set, as Produce v0-2 may carry)."""
    return len(data) > MAGIC_OFFSET and data[MAGIC_OFFSET] < 2


def _read_legacy_bytes(data: bytes, pos: int, end: int) -> tuple[bytes | None, int]:
    if pos + 4 > end:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "Record is corrupt: field length past the message")
    size = _LEGACY_BYTES_LENGTH.unpack_from(data, pos)[0]
    pos += 4
    if size < 0:
        return None, pos
    if pos + size > end:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "Record is corrupt: field length past the message")
    return data[pos:pos + size], pos + size


def read_legacy_entries(data: bytes) -> list[LegacyEntry]:
    """(offset, magic, attributes, timestamp, key, value) of each whole entry of a magic 0/1 message set; a
    partial tail is dropped, as Kafka's ByteBufferLogInputStream stops at it. An entry of another magic is
    INVALID_RECORD; a CRC mismatch is CORRUPT_MESSAGE (LegacyRecord.ensureValid)."""
    entries = []
    pos = 0
    while len(data) - pos >= LOG_OVERHEAD:
        size = _LEGACY_LOG_ENTRY.unpack_from(data, pos)[1]
        if size < LEGACY_RECORD_OVERHEAD_V0:
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, f"Record size {size} is less than the minimum record "
                                                        f"overhead ({LEGACY_RECORD_OVERHEAD_V0})")
        end = pos + LOG_OVERHEAD + size
        if end > len(data):
            break
        offset, _, crc, magic, attributes = _LEGACY_ENTRY_HEAD.unpack_from(data, pos)
        if magic > MAGIC_V1:
            raise KafkaError(ErrorCode.INVALID_RECORD, f"Log record magic {magic} does not match the message set's")
        computed = zlib.crc32(data[pos + _LEGACY_CRC_START:end])
        if computed != crc:
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, f"Record is corrupt (stored crc = {crc}, computed crc = "
                                                        f"{computed})")
        field = pos + _LEGACY_ENTRY_HEAD.size
        timestamp = -1  # RecordBatch.NO_TIMESTAMP: magic 0 has none
        if magic == MAGIC_V1:
            if field + 8 > end:
                raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "Record is corrupt: no room for the timestamp")
            timestamp = _LEGACY_TIMESTAMP.unpack_from(data, field)[0]
            field += 8
        key, field = _read_legacy_bytes(data, field, end)
        value, field = _read_legacy_bytes(data, field, end)
        entries.append((offset, magic, attributes, timestamp, key, value))
        pos = end
    return entries
