"""RecordBatch v2 (Kafka's DefaultRecordBatch and DefaultRecord): header view, CRC32C check, in-place patches,
record reading and building.

Layout (big-endian, 61-byte header):
baseOffset i64 | batchLength i32 | partitionLeaderEpoch i32 | magic i8 | crc u32 |
attributes i16 | lastOffsetDelta i32 | baseTimestamp i64 | maxTimestamp i64 |
producerId i64 | producerEpoch i16 | baseSequence i32 | recordCount i32 | records

A record (Kafka's DefaultRecord): sizeOfBody varint | attributes i8 | timestampDelta varlong |
offsetDelta varint | keyLength varint | key | valueLength varint | value | headerCount varint |
headers (keyLength varint | key | valueLength varint | value). Varints are zigzag-encoded.

Also what a Produce partition's record bytes must be (ProduceRequest.validateRecords, `produce_records_error`),
read over entries of any magic as ByteBufferLogInputStream reads them. The codecs a batch's attributes name
are compression.py's (their ids are re-exported here); message sets of magic 0 and 1 are legacy_records.py's.

Over 500 lines for a reason: reading, checking, patching and building a v2 batch all work on the one layout
above (Kafka's DefaultRecordBatch and DefaultRecord); the codecs and old message sets are already apart.
"""
from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass

from fastcrc.crc32 import iscsi as crc32c  # CRC-32/ISCSI is Castagnoli's CRC-32C

from .compression import (  # the codec ids a batch's attributes carry: callers name them as records' too
    COMPRESSION_GZIP,  # noqa: F401
    COMPRESSION_LZ4,  # noqa: F401
    COMPRESSION_NAMES,  # noqa: F401
    COMPRESSION_NONE,
    COMPRESSION_SNAPPY,  # noqa: F401
    COMPRESSION_ZSTD,
    compress,
    decompress,
)
from .errors import ErrorCode, KafkaError

HEADER_SIZE = 61
LOG_OVERHEAD = 12  # baseOffset + batchLength
CRC_START = 21  # attributes onwards is covered by the CRC
MAGIC_OFFSET = 16  # every entry's magic: after offset, size and a legacy crc, or a v2 batch's leader epoch
LEGACY_RECORD_OVERHEAD_V0 = 14  # LegacyRecord.RECORD_OVERHEAD_V0: the smallest entry a reader accepts

_HEADER = struct.Struct(">qiibIhiqqqhii")
_BASE_OFFSET = struct.Struct(">q")
_LEADER_EPOCH = struct.Struct(">i")
_MAX_TIMESTAMP = struct.Struct(">q")
_ATTRIBUTES = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_CRC = struct.Struct(">I")
_MAGIC = struct.Struct(">b")  # signed, as Kafka reads it
_SIZE_OFFSET = 8  # every entry's size (a v2 batch's batchLength), after its offset
_ATTRIBUTES_LOW_BYTE = CRC_START + 1  # a v2 batch's attributes (int16 at 21): codec and flags

ATTR_COMPRESSION_MASK = 0x07
ATTR_TIMESTAMP_TYPE = 0x08
ATTR_TRANSACTIONAL = 0x10
ATTR_CONTROL = 0x20

NO_SEQUENCE = -1
INT32_MAX = 2**31 - 1


def increment_sequence(sequence: int, increment: int) -> int:
    """Sequence + increment, wrapping from 2147483647 to 0 as Kafka does."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


@dataclass(slots=True)
class BatchHeader:
    """The decoded 61-byte header of one v2 record batch."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @property
    def size_in_bytes(self) -> int:
        return LOG_OVERHEAD + self.batch_length

    @property
    def compression(self) -> int:
        return self.attributes & ATTR_COMPRESSION_MASK

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & ATTR_TRANSACTIONAL)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & ATTR_CONTROL)

    @property
    def timestamp_type(self) -> int:
        return 1 if self.attributes & ATTR_TIMESTAMP_TYPE else 0

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > -1

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return increment_sequence(self.base_sequence, self.last_offset_delta)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta


def read_header(data: bytes | bytearray | memoryview, pos: int = 0) -> BatchHeader:
    """Decode the batch header at `pos`; the magic byte is not checked here."""
    if len(data) - pos < HEADER_SIZE:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "Record batch is shorter than its 61-byte header")
    return BatchHeader(*_HEADER.unpack_from(data, pos))


def split_batches(data: bytes | bytearray | memoryview, partial_tail: bool = False) -> list[tuple[int, int]]:
    """(start, end) of each batch in a record set; refuses a truncated tail.

    With `partial_tail` a truncated last batch is left out instead (a Fetch answer
    may end with part of a batch that did not fit its size limit).
    """
    spans = []
    pos = 0
    size = len(data)
    while pos < size:
        if size - pos < LOG_OVERHEAD + 5:
            if partial_tail:
                break
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "Truncated record batch")
        (batch_length,) = _INT32.unpack_from(data, pos + 8)
        magic = data[pos + 16]
        if magic != 2:
            raise KafkaError(ErrorCode.INVALID_RECORD, f"Unsupported record batch magic {magic}; only v2 is accepted")
        end = pos + LOG_OVERHEAD + batch_length
        if batch_length < HEADER_SIZE - LOG_OVERHEAD or end > size:
            if partial_tail:
                break
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, f"Record batch length {batch_length} is invalid")
        spans.append((pos, end))
        pos = end
    return spans


def has_transactional_batch(data: bytes | bytearray | memoryview | None) -> bool:
    """Whether any whole batch of a record set is marked transactional (Kafka's RequestUtils.flag).

    A set may be an old message set (Produce v0-2): only an entry of magic 2 has batch attributes, so a
    legacy entry, whose byte 22 is part of its timestamp or key, is never transactional. What cannot be read
    as entries is left for validation to refuse."""
    if data is None:
        return False
    pos, size = 0, len(data)
    while size - pos >= LOG_OVERHEAD:
        (entry_length,) = _INT32.unpack_from(data, pos + _SIZE_OFFSET)
        end = pos + LOG_OVERHEAD + entry_length
        if entry_length < LEGACY_RECORD_OVERHEAD_V0 or end > size:
            break  # a corrupt size or a partial entry: ByteBufferLogInputStream reads no further
        if data[pos + MAGIC_OFFSET] >= 2 and end - pos >= HEADER_SIZE and \
                data[pos + _ATTRIBUTES_LOW_BYTE] & ATTR_TRANSACTIONAL:
            return True  # only a v2 batch has these attributes
        pos = end
    return False


def produce_records_error(data: bytes | bytearray | memoryview | None, zstd_allowed: bool) -> KafkaError | None:
    """What ProduceRequest.validateRecords refuses in a Produce v3+ partition's records (KafkaApis applies it
    before ReplicaManager appends, so its answer carries no offsets and wins over acks and leadership): they hold
    exactly one whole batch, of magic 2, not ZStandard unless `zstd_allowed` (Produce v7+).

    Entries are read as ByteBufferLogInputStream.nextBatch reads them: a size field below the smallest entry is
    CORRUPT_MESSAGE, a magic outside 0..2 (a signed byte) CORRUPT_MESSAGE with Kafka's message, and a partial
    batch counts as none. Null records are refused as no batch (Kafka's reader passes them on and fails later).
    The refusal carries a message only where Kafka's answer has one."""
    if not data or len(data) < LOG_OVERHEAD:
        return KafkaError(ErrorCode.INVALID_RECORD)
    first_end = LOG_OVERHEAD + _INT32.unpack_from(data, _SIZE_OFFSET)[0]
    if first_end - LOG_OVERHEAD < LEGACY_RECORD_OVERHEAD_V0:
        return KafkaError(ErrorCode.CORRUPT_MESSAGE)
    if len(data) <= MAGIC_OFFSET or first_end > len(data):
        return KafkaError(ErrorCode.INVALID_RECORD)
    (magic,) = _MAGIC.unpack_from(data, MAGIC_OFFSET)
    if not 0 <= magic <= 2:
        return KafkaError(ErrorCode.CORRUPT_MESSAGE, f"Invalid magic found in record: {magic}")
    if magic != 2:
        return KafkaError(ErrorCode.INVALID_RECORD)
    if not zstd_allowed and len(data) >= HEADER_SIZE and \
            data[_ATTRIBUTES_LOW_BYTE] & ATTR_COMPRESSION_MASK == COMPRESSION_ZSTD:
        return KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE)
    rest = len(data) - first_end
    if rest >= LOG_OVERHEAD and _INT32.unpack_from(data, first_end + _SIZE_OFFSET)[0] + LOG_OVERHEAD <= rest:
        return KafkaError(ErrorCode.INVALID_RECORD)  # a second whole batch
    return None


def crc_is_valid(batch: bytes | bytearray | memoryview, header: BatchHeader) -> bool:
    """True when the stored CRC32C matches the bytes from attributes to the end."""
    return crc32c(memoryview(batch)[CRC_START : header.size_in_bytes]) == header.crc


def compute_crc(batch: bytes | bytearray | memoryview) -> int:
    """The CRC32C of a batch (attributes to the end)."""
    return crc32c(memoryview(batch)[CRC_START:])


def patch_base_offset(batch: bytearray | memoryview, base_offset: int, leader_epoch: int) -> None:
    """Set baseOffset and partitionLeaderEpoch in place (both lie outside the CRC)."""
    _BASE_OFFSET.pack_into(batch, 0, base_offset)
    _LEADER_EPOCH.pack_into(batch, 12, leader_epoch)


def set_log_append_time(batch: bytearray | memoryview, timestamp: int) -> None:
    """Mark the batch LogAppendTime with `timestamp` as maxTimestamp and recompute the CRC."""
    set_max_timestamp(batch, 1, timestamp)


def set_max_timestamp(batch: bytearray | memoryview, timestamp_type: int, max_timestamp: int) -> bool:
    """Set the timestamp type (0 CreateTime, 1 LogAppendTime) and maxTimestamp; True if the batch changed.

    As Kafka's DefaultRecordBatch.setMaxTimestamp: the CRC is recomputed only when a field changes.
    """
    (attributes,) = _ATTRIBUTES.unpack_from(batch, 21)
    (current,) = _MAX_TIMESTAMP.unpack_from(batch, 35)
    wanted = attributes | ATTR_TIMESTAMP_TYPE if timestamp_type == 1 else attributes & ~ATTR_TIMESTAMP_TYPE
    if wanted == attributes and current == max_timestamp:
        return False
    _ATTRIBUTES.pack_into(batch, 21, wanted)
    _MAX_TIMESTAMP.pack_into(batch, 35, max_timestamp)
    _CRC.pack_into(batch, 17, compute_crc(batch))
    return True



@dataclass(slots=True)
class Record:
    """One record decoded from a batch."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]


def read_varint(data: bytes | memoryview, pos: int,
                error: ErrorCode = ErrorCode.INVALID_RECORD) -> tuple[int, int]:
    """A zigzag varint at `pos`: (value, position after it); KafkaError(`error`) when too long.

    IndexError when the data ends inside it, as indexing past the end does.
    """
    try:
        return _zigzag(data, pos, len(data), 64)
    except _VarintTooLong:
        raise KafkaError(error, "Varint is too long") from None
    except _Underflow:
        raise IndexError("varint runs past the end of the data") from None


def _bytes_field(data: bytes, pos: int) -> tuple[bytes | None, int]:
    length, pos = read_varint(data, pos)
    if length < 0:
        return None, pos
    end = pos + length
    if end > len(data):
        raise KafkaError(ErrorCode.INVALID_RECORD, "Incorrect declared batch size, premature EOF reached")
    return data[pos:end], end


def iter_records(batch: bytes | bytearray | memoryview) -> Iterator[Record]:
    """Decode the records of one batch (decompressing if needed)."""
    header = read_header(batch)
    body = decompress(header.compression, memoryview(batch)[HEADER_SIZE : header.size_in_bytes])
    pos = 0
    for _ in range(header.record_count):
        if pos >= len(body):
            raise KafkaError(ErrorCode.INVALID_RECORD, "Incorrect declared batch size, premature EOF reached")
        length, pos = read_varint(body, pos)
        end = pos + length
        if length < 0 or end > len(body):
            raise KafkaError(ErrorCode.INVALID_RECORD, "Incorrect declared batch size, premature EOF reached")
        pos += 1  # record attributes, unused
        timestamp_delta, pos = read_varint(body, pos)
        offset_delta, pos = read_varint(body, pos)
        key, pos = _bytes_field(body, pos)
        value, pos = _bytes_field(body, pos)
        header_count, pos = read_varint(body, pos)
        headers: list[tuple[str, bytes | None]] = []
        for _h in range(max(header_count, 0)):
            hkey, pos = _bytes_field(body, pos)
            hval, pos = _bytes_field(body, pos)
            headers.append(((hkey or b"").decode("utf-8", "replace"), hval))
        if pos != end:
            raise KafkaError(ErrorCode.INVALID_RECORD, "Record size does not match its declared length")
        yield Record(header.base_offset + offset_delta, header.base_timestamp + timestamp_delta, key, value, headers)
    if pos != len(body):
        raise KafkaError(ErrorCode.INVALID_RECORD, "Incorrect declared batch size, records still remaining in file")


# -- reading records as Kafka's DefaultRecord.readFrom does ----------------------------------

INVALID_RECORD_STRUCTURE = "Found invalid record structure"
PREMATURE_EOF = "Incorrect declared batch size, premature EOF reached"
RECORDS_REMAINING = "Incorrect declared batch size, records still remaining in file"


class _Underflow(Exception):
    """Reading past the end (Java's BufferUnderflowException)."""


class _VarintTooLong(Exception):
    """A varint longer than its type allows (ByteUtils' IllegalArgumentException)."""


def _zigzag(buf: bytes | bytearray | memoryview, pos: int, end: int, bits: int) -> tuple[int, int]:
    """ByteUtils.readVarint (bits 32) / readVarlong (bits 64): a zigzag value in at most ceil(bits/7) bytes.

    (value, position after it); _Underflow at `end`, _VarintTooLong past the byte limit.
    """
    raw = 0
    shift = 0
    while True:
        if pos >= end:
            raise _Underflow
        byte = buf[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            break
        shift += 7
        if shift >= bits:
            raise _VarintTooLong
    raw &= (1 << bits) - 1
    return (raw >> 1) ^ -(raw & 1), pos


def _varint32(buf: bytes | bytearray | memoryview, pos: int, end: int) -> tuple[int, int]:
    return _zigzag(buf, pos, end, 32)


def _varlong(buf: bytes | bytearray | memoryview, pos: int, end: int) -> tuple[int, int]:
    return _zigzag(buf, pos, end, 64)


def read_record_size(buf: bytes | bytearray | memoryview, pos: int, end: int) -> tuple[int, int] | None:
    """(sizeOfBody, position of the body) of the record at `pos`; None if its varint runs past `end`.

    A varint longer than 5 bytes is KafkaError(UNKNOWN_SERVER_ERROR): Kafka's record iterator
    lets that IllegalArgumentException escape to the request handler.
    """
    try:
        return _varint32(buf, pos, end)
    except _Underflow:
        return None
    except _VarintTooLong:
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, "Varint is too long") from None


def read_record_body(buf: bytes | bytearray | memoryview, pos: int, size: int, limit: int
                     ) -> tuple[int, int, int, int, int, int]:
    """Kafka's DefaultRecord.readFrom after the size: the body at `pos`, reading nothing at or past `limit`.

    Returns (position after the record, attributes, timestampDelta, offsetDelta, keySize,
    valueSize); sizes are -1 for null. KafkaError(INVALID_RECORD) with Kafka's message
    when the body is malformed or its length is not `size`.
    """
    start = pos
    try:
        if pos >= limit:
            raise _Underflow
        attributes = buf[pos]
        timestamp_delta, pos = _varlong(buf, pos + 1, limit)
        offset_delta, pos = _varint32(buf, pos, limit)
        key_size, pos = _varint32(buf, pos, limit)
        if key_size >= 0:
            pos = _skip(pos, key_size, limit)
        value_size, pos = _varint32(buf, pos, limit)
        if value_size >= 0:
            pos = _skip(pos, value_size, limit)
        header_count, pos = _varint32(buf, pos, limit)
        if header_count < 0:
            raise KafkaError(ErrorCode.INVALID_RECORD, f"Found invalid number of record headers {header_count}")
        if header_count > limit - pos:
            raise KafkaError(ErrorCode.INVALID_RECORD, f"Found invalid number of record headers. {header_count} "
                             "is larger than the remaining size of the buffer")
        for _ in range(header_count):
            header_key_size, pos = _varint32(buf, pos, limit)
            if header_key_size < 0:
                raise KafkaError(ErrorCode.INVALID_RECORD, f"Invalid negative header key size {header_key_size}")
            pos = _skip(pos, header_key_size, limit)
            header_value_size, pos = _varint32(buf, pos, limit)
            if header_value_size >= 0:
                pos = _skip(pos, header_value_size, limit)
    except (_Underflow, _VarintTooLong):
        raise KafkaError(ErrorCode.INVALID_RECORD, INVALID_RECORD_STRUCTURE) from None
    if pos - start != size:
        raise KafkaError(ErrorCode.INVALID_RECORD, f"Invalid record size: expected to read {size} bytes in "
                         f"record payload, but instead read {pos - start}")
    return pos, attributes, timestamp_delta, offset_delta, key_size, value_size


def _skip(pos: int, size: int, limit: int) -> int:
    if size > limit - pos:
        raise _Underflow  # Java: a slice limit past the buffer's end (IllegalArgumentException)
    return pos + size


def _encode_varint(value: int) -> bytes:
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _encode_bytes(value: bytes | None) -> bytes:
    if value is None:
        return _encode_varint(-1)
    return _encode_varint(len(value)) + value


def build_batch(
    records: list[tuple[bytes | None, bytes | None]],
    *,
    base_offset: int = 0,
    timestamp: int = 0,
    timestamps: list[int] | None = None,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    compression: int = COMPRESSION_NONE,
    transactional: bool = False,
    control: bool = False,
    headers: list[list[tuple[str, bytes | None]]] | None = None,
    partition_leader_epoch: int = -1,
) -> bytes:
    """Encode a v2 record batch; used by the project's client and by tests."""
    body = bytearray()
    times = timestamps or [timestamp] * len(records)
    base_ts = times[0] if times else timestamp
    for delta, (key, value) in enumerate(records):
        rec = bytearray(b"\x00")
        rec += _encode_varint(times[delta] - base_ts)
        rec += _encode_varint(delta)
        rec += _encode_bytes(key)
        rec += _encode_bytes(value)
        rec_headers = headers[delta] if headers else []
        rec += _encode_varint(len(rec_headers))
        for hkey, hval in rec_headers:
            rec += _encode_bytes(hkey.encode())
            rec += _encode_bytes(hval)
        body += _encode_varint(len(rec)) + rec
    payload = compress(compression, bytes(body))
    attributes = compression | (ATTR_TRANSACTIONAL if transactional else 0) | (ATTR_CONTROL if control else 0)
    batch = bytearray(HEADER_SIZE) + payload
    _HEADER.pack_into(
        batch, 0, base_offset, len(batch) - LOG_OVERHEAD, partition_leader_epoch, 2, 0, attributes,
        max(len(records) - 1, 0), base_ts, max(times) if times else timestamp,
        producer_id, producer_epoch, base_sequence, len(records),
    )
    _CRC.pack_into(batch, 17, compute_crc(batch))
    return bytes(batch)


def recompress(batch: bytes | bytearray | memoryview, codec: int, header: BatchHeader | None = None) -> bytearray:
    """The same batch with its records section re-encoded with `codec` (topic compression.type).

    `header` is the batch's header when the caller has read it already.
    """
    if header is None:
        header = read_header(batch)
    body = decompress(header.compression, memoryview(batch)[HEADER_SIZE : header.size_in_bytes])
    out = bytearray(batch[:HEADER_SIZE]) + compress(codec, body)
    struct.pack_into(">i", out, 8, len(out) - LOG_OVERHEAD)
    _ATTRIBUTES.pack_into(out, 21, (header.attributes & ~ATTR_COMPRESSION_MASK) | codec)
    _CRC.pack_into(out, 17, compute_crc(out))
    return out


CONTROL_ABORT = 0
CONTROL_COMMIT = 1
_CONTROL_KEY = struct.Struct(">hh")
_END_TXN_MARKER = struct.Struct(">hi")


def build_end_txn_marker(producer_id: int, producer_epoch: int, committed: bool, coordinator_epoch: int,
                         timestamp: int) -> bytes:
    """A COMMIT or ABORT control batch: transactional + control, base sequence -1, one record."""
    key = _CONTROL_KEY.pack(0, CONTROL_COMMIT if committed else CONTROL_ABORT)
    value = _END_TXN_MARKER.pack(0, coordinator_epoch)
    return build_batch([(key, value)], timestamp=timestamp, producer_id=producer_id, producer_epoch=producer_epoch,
                       base_sequence=NO_SEQUENCE, transactional=True, control=True)


def control_record_type(batch: bytes | bytearray | memoryview) -> int:
    """CONTROL_COMMIT or CONTROL_ABORT for a marker batch."""
    record = next(iter_records(batch))
    return int(_CONTROL_KEY.unpack_from(record.key or b"\x00\x00\xff\xff")[1])
