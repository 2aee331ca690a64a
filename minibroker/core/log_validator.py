"""Validate a produced record batch, record by record, as Kafka's leader does before appending.

Over 500 lines for a reason: the pure-Python fast lane is the specification of the C one and stays
beside the exact reader it must agree with; the magic 0/1 conversion at the end is LogValidator's too.

Mirrors Kafka's `LogValidator` (validateMessagesAndAssignOffsets, validateBatch, validateRecord,
validateKey, validateTimestamp, processRecordErrors), the record reading of `DefaultRecordBatch`
(its record iterator and compressed streaming iterator) and `DefaultRecord.readFrom`, and the
batch checks of `UnifiedLog.analyzeAndValidateRecords` that come after the CRC. How refusals reach
the client follows `ReplicaManager.appendToLocalLog`:

- a malformed batch or record (`InvalidRecordException` from the record iterator) is
  INVALID_RECORD with no record errors and no error message;
- refused records (`RecordValidationException`: a key missing on a compacted topic, a timestamp
  out of range) are INVALID_RECORD or INVALID_TIMESTAMP with one record error per refused record
  and a summary as the error message (Produce v8+ carries them);
- a compressed stream the codec cannot decode is UNKNOWN_SERVER_ERROR (Kafka's decompressing
  streams throw a plain KafkaException).

Every record of every batch is walked before anything is stored. One check is ours, not Kafka's:
record offset deltas must run 0..n-1 (Kafka stores an uncompressed batch with other deltas as
sent, which consumers then misread, and rewrites a compressed one); the refusal uses the message
Kafka 2.x gave for the same fault in compressed batches. Record lengths are checked as
`DefaultRecord.readFrom` checks them for every batch (Kafka's in-place compressed path reads with
`readPartiallyFrom`, which does not compare a record's declared length with its fields).

Decompression is incremental and bounded: records are walked as the codec produces them, and a
batch whose records would expand beyond DECOMPRESSION_BOUND_FACTOR x the topic's
`max.message.bytes` (at least MIN_DECOMPRESSION_BOUND) is refused with MESSAGE_TOO_LARGE without
ever holding more than that. Kafka streams a compressed batch without a bound of its own; the
factor is generous for real producers (librdkafka, sarama and franz-go bound the uncompressed
batch by about `message.max.bytes`; Java's `batch.size` counts estimated compressed bytes, so with
batch.size = max.message.bytes a 16x compression ratio still fits) and MESSAGE_TOO_LARGE makes the
Java producer split the batch and retry.

The walk has a fast lane for the encodings real clients write (short varints, non-negative
lengths) and falls back to the exact reader, one record at a time, for anything else; the exact
reader decides every refusal, so both lanes accept exactly the same batches.

Produce v0-2 (release profiles before 4.0) may carry a message set of magic 0 or 1: it is converted to
one v2 batch as Kafka 3.9's LogValidator converts one (`convert_legacy_message_set`, reached through
`old_produce_batch`), its inner records checked as Kafka checks them.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

from ..protocol import compression, legacy_records, records
from ..protocol.errors import DecompressionLimitError, ErrorCode, KafkaError, RecordError, RecordValidationError

_speedups: ModuleType | None
try:  # the fast lane in C (_validator_speedups.c, built by setup.py); `_fast_lane` below is its specification
    from . import _validator_speedups as _speedups
except ImportError:  # no compiler at install time: the pure-Python lane, same results, slower
    _speedups = None

DECOMPRESSION_BOUND_FACTOR = 16
MIN_DECOMPRESSION_BOUND = 1 << 20
CREATE_TIME, LOG_APPEND_TIME = 0, 1
NO_TIMESTAMP = -1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_TIMESTAMP_SUMMARY = "One or more records have been rejected due to invalid timestamp"


@dataclass(slots=True)
class TopicPolicy:
    """The topic settings that validation reads."""

    log_append_time: bool  # message.timestamp.type=LogAppendTime
    before_max_ms: int  # message.timestamp.before.max.ms
    after_max_ms: int  # message.timestamp.after.max.ms
    compacted: bool  # cleanup.policy contains compact
    max_message_bytes: int  # max.message.bytes
    recompressing: bool  # compression.type names another codec than the batch's


@dataclass(slots=True)
class ValidationResult:
    """What the stored batch's header must say once the batch is accepted."""

    timestamp_type: int
    max_timestamp: int
    log_append_time: int  # the append time for a LogAppendTime topic, else -1


def decompression_bound(max_message_bytes: int) -> int:
    """How many bytes a batch's records may expand to when decompressed."""
    return max(DECOMPRESSION_BOUND_FACTOR * max_message_bytes, MIN_DECOMPRESSION_BOUND)


def validate_batch(batch: bytes | bytearray | memoryview, header: records.BatchHeader, tp: str,
                   policy: TopicPolicy, now: int) -> ValidationResult:
    """Check one client batch whose CRC is valid; KafkaError (or RecordValidationError) as Kafka refuses it.

    Nothing is changed: the caller stores the batch with the returned header fields.
    """
    validate_batch_header(header, tp)
    walk = _Walk(header, tp)
    bound = decompression_bound(policy.max_message_bytes)
    _scan(batch, header, walk, bound)

    log_append_time = policy.log_append_time
    batch_lat = header.timestamp_type == LOG_APPEND_TIME
    details_needed = (policy.compacted and walk.keyless) or batch_lat
    if not details_needed and not log_append_time:
        low, high = header.base_timestamp + walk.min_delta, header.base_timestamp + walk.max_delta
        details_needed = (low < now - policy.before_max_ms or high > now + policy.after_max_ms
                          or low < _LONG_MIN or high > _LONG_MAX)
    if details_needed:
        max_timestamp = _check_records(batch, header, tp, policy, now, bound)
    else:
        max_timestamp = max(NO_TIMESTAMP, header.base_timestamp + walk.max_delta)
    if log_append_time:
        return ValidationResult(LOG_APPEND_TIME, now, now)
    return ValidationResult(CREATE_TIME, max_timestamp, NO_TIMESTAMP)


def validate_batch_header(header: records.BatchHeader, tp: str) -> None:
    """LogValidator.validateBatch for a client append, and the codec id check."""
    if header.last_offset_delta < 0:
        raise KafkaError(ErrorCode.INVALID_RECORD, f"Batch has an invalid offset range: [{header.base_offset}, "
                         f"{header.last_offset}] in topic partition {tp}.")
    if header.record_count <= 0:
        raise KafkaError(ErrorCode.INVALID_RECORD, f"Invalid reported count for record batch: "
                         f"{header.record_count} in topic partition {tp}.")
    if header.last_offset_delta + 1 != header.record_count:
        raise KafkaError(
            ErrorCode.INVALID_RECORD,
            f"Inconsistent batch offset range [{header.base_offset}, {header.last_offset}] and count of records "
            f"{header.record_count} in topic partition {tp}.",
        )
    if header.is_control:
        raise KafkaError(ErrorCode.INVALID_RECORD,
                         f"Clients are not allowed to write control records in topic partition {tp}.")
    if header.has_producer_id and header.base_sequence < 0:
        raise KafkaError(ErrorCode.INVALID_RECORD, f"Invalid sequence number {header.base_sequence} in "
                         f"record batch with producerId {header.producer_id} in topic partition {tp}")
    if header.compression > records.COMPRESSION_ZSTD:
        # CompressionType.forId's IllegalArgumentException reaches the client as UNKNOWN_SERVER_ERROR
        raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"Unknown compression type id: {header.compression}")


# -- walking the records ----------------------------------------------------------------------


class _Walk:
    """What one pass over the records found; `details` collects every record when set."""

    __slots__ = ("header", "tp", "min_delta", "max_delta", "keyless", "details")

    def __init__(self, header: records.BatchHeader, tp: str,
                 details: list[tuple[int, int, int, int]] | None = None) -> None:
        self.header = header
        self.tp = tp
        self.min_delta = 0
        self.max_delta = 0
        self.keyless = False
        self.details = details  # (timestampDelta, offsetDelta, keySize, valueSize) per record


def _scan(batch: bytes | bytearray | memoryview, header: records.BatchHeader, walk: _Walk, bound: int) -> None:
    """Walk every record of the batch (decompressing under `bound`); KafkaError on the first malformed one."""
    count = header.record_count
    walk.min_delta = 1 << 62
    walk.max_delta = -(1 << 62)
    if header.compression == records.COMPRESSION_NONE:
        end = header.size_in_bytes
        pos, index = records.HEADER_SIZE, 0
        if walk.details is None:  # the usual batch: the fast lane walks it all, with no exact reader set up
            pos, index = _run_fast_lane(batch, pos, end, 0, count, walk)
        if index < count:
            pos, _ = _walk_records(batch, pos, end, index, count, walk, final=True, cap=-1)
        if pos != end:
            raise KafkaError(ErrorCode.INVALID_RECORD, records.RECORDS_REMAINING)
        return
    try:
        _scan_stream(batch, header, walk, bound)
    except DecompressionLimitError:
        raise KafkaError(
            ErrorCode.MESSAGE_TOO_LARGE,
            f"The records of the compressed record batch in the append to {walk.tp} expand beyond {bound} bytes, "
            f"{DECOMPRESSION_BOUND_FACTOR} times the maximum configured batch size.",
        ) from None


def _scan_stream(batch: bytes | bytearray | memoryview, header: records.BatchHeader, walk: _Walk,
                 bound: int) -> None:
    count = header.record_count
    payload = memoryview(batch)[records.HEADER_SIZE : header.size_in_bytes]
    buf: bytes | bytearray = b""
    pos = index = 0
    for piece in compression.iter_decompressed(header.compression, payload, bound):
        if index == count:
            raise KafkaError(ErrorCode.INVALID_RECORD, records.RECORDS_REMAINING)
        if pos >= len(buf):
            buf, pos = piece, 0  # nothing pending: walk the new piece as it is
        elif pos == 0 and isinstance(buf, bytearray):
            buf += piece  # still waiting for the rest of one record
        else:
            pending = bytearray(memoryview(buf)[pos:])
            pending += piece
            buf, pos = pending, 0
        pos, index = _walk_records(buf, pos, len(buf), index, count, walk, final=False, cap=bound)
        if index == count and pos < len(buf):
            raise KafkaError(ErrorCode.INVALID_RECORD, records.RECORDS_REMAINING)
    if index < count:
        _walk_records(buf, pos, len(buf), index, count, walk, final=True, cap=bound)


def _walk_records(buf: bytes | bytearray | memoryview, pos: int, end: int, index: int, count: int, walk: _Walk,
                  final: bool, cap: int) -> tuple[int, int]:
    """Walk records `index`.. from `pos`; (position, index) reached.

    `cap` < 0: the records of an uncompressed batch, which ends at `end`. Otherwise a
    decompressed stream holding `buf[:end]` so far: unless `final`, the walk stops before a
    record that is not complete yet; no record may be larger than `cap`.
    """
    stream = cap >= 0
    while index < count:
        if walk.details is None:
            pos, index = _run_fast_lane(buf, pos, end, index, count, walk)
            if index == count:
                break
        found = records.read_record_size(buf, pos, end)
        if found is None:
            if not final:
                return pos, index
            raise KafkaError(ErrorCode.INVALID_RECORD, records.PREMATURE_EOF)
        size, body = found
        available = end - body
        if stream:
            if size < 0:  # ByteBuffer.allocate's IllegalArgumentException escapes the iterator
                raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"Negative record size {size}")
            if size > cap:
                raise DecompressionLimitError(cap)
            if available < size:
                if not final:
                    return pos, index
                raise KafkaError(ErrorCode.INVALID_RECORD, f"Invalid record size: expected {size} bytes in record "
                                 "payload, but the record payload reached EOF.")
            limit = body + size
        else:
            if available < size:
                raise KafkaError(ErrorCode.INVALID_RECORD, f"Invalid record size: expected {size} bytes in record "
                                 f"payload, but instead the buffer has only {available} remaining bytes.")
            limit = end
        pos, _, timestamp_delta, offset_delta, key_size, value_size = records.read_record_body(buf, body, size, limit)
        if offset_delta != index:
            header = walk.header
            timestamp = header.max_timestamp if header.timestamp_type == LOG_APPEND_TIME else \
                _wrap(header.base_timestamp + timestamp_delta)
            record = _record_text(header.base_offset + offset_delta, timestamp, key_size, value_size)
            raise KafkaError(ErrorCode.INVALID_RECORD, f"Record {record} in the record batch does not have "
                             f"incremental offsets, expected offset is {header.base_offset + index} in topic "
                             f"partition {walk.tp}.")
        walk.min_delta = min(walk.min_delta, timestamp_delta)
        walk.max_delta = max(walk.max_delta, timestamp_delta)
        if key_size < 0:
            walk.keyless = True
        if walk.details is not None:
            walk.details.append((timestamp_delta, offset_delta, key_size, value_size))
        index += 1
    return pos, index


def _run_fast_lane(buf: bytes | bytearray | memoryview, pos: int, end: int, index: int, count: int,
                   walk: _Walk) -> tuple[int, int]:
    """The fast lane, compiled when available (8-16 ns a record against about 600 in Python)."""
    if _speedups is None:
        return _fast_lane(buf, pos, end, index, count, walk)
    pos, index, walk.min_delta, walk.max_delta, walk.keyless = _speedups.fast_lane(
        buf, pos, end, index, count, walk.min_delta, walk.max_delta, walk.keyless)
    return pos, index


def _fast_lane(buf: bytes | bytearray | memoryview, pos: int, end: int, index: int, count: int,
               walk: _Walk) -> tuple[int, int]:
    """Walk records in the encodings real clients write; stop at the first other one.

    Accepts a record only when the exact reader would read it the same way: a record size
    and value/key lengths of at most two varint bytes and not negative (null key or value
    excepted), a timestamp delta of at most two bytes, the offset delta equal to the record's
    index, and fields that end exactly where the record does. Anything else, including a
    record running past `end`, is left to the exact reader.
    """
    low = walk.min_delta
    high = walk.max_delta
    keyless = walk.keyless
    i = index
    try:
        for i in range(index, count):
            # sizeOfBody
            b = buf[pos]
            if b < 0x80:
                p = pos + 1
            else:
                c = buf[pos + 1]
                if c >= 0x80:
                    break
                b = (b & 0x7F) | (c << 7)
                p = pos + 2
            if b & 1:
                break
            record_end = p + (b >> 1)
            if record_end > end:
                break
            # attributes (one byte, not interpreted), then timestampDelta
            b = buf[p + 1]
            if b < 0x80:
                p += 2
            else:
                c = buf[p + 2]
                if c >= 0x80:
                    break
                b = (b & 0x7F) | (c << 7)
                p += 3
            delta = (b >> 1) ^ -(b & 1)
            # offsetDelta must be the record's index
            if i < 64:
                if buf[p] != i << 1:
                    break
                p += 1
            elif i < 8192:
                if buf[p] != ((i << 1) & 0x7F) | 0x80 or buf[p + 1] != i >> 6:
                    break
                p += 2
            else:
                p = _skip_expected_varint(buf, p, i << 1)
                if p < 0:
                    break
            # key, then value
            if buf[p] == 1:
                keyless = True
            p = _skip_short_bytes(buf, p)
            if p < 0:
                break
            p = _skip_short_bytes(buf, p)
            if p < 0:
                break
            # headers
            b = buf[p]
            p += 1
            if b and not _headers_end_at(buf, p, b, record_end):
                break
            elif not b and p != record_end:
                break
            if delta < low:
                low = delta
            if delta > high:
                high = delta
            pos = record_end
        else:
            i = count
    except IndexError:
        pass  # a field ran past the buffer: the exact reader reports it
    walk.min_delta = low
    walk.max_delta = high
    walk.keyless = keyless
    return pos, i


def _skip_short_bytes(buf: bytes | bytearray | memoryview, p: int) -> int:
    """The position after a null (-1) or a bytes field whose length is a non-negative varint of at most 2 bytes; -1
    for anything else."""
    b = buf[p]
    if b == 1:
        return p + 1
    if b < 0x80:
        return -1 if b & 1 else p + 1 + (b >> 1)
    c = buf[p + 1]
    if c >= 0x80 or b & 1:
        return -1
    return p + 2 + (((b & 0x7F) | (c << 7)) >> 1)


def _skip_expected_varint(buf: bytes | bytearray | memoryview, p: int, raw: int) -> int:
    """The position after the varint at `p` if it encodes exactly `raw` (zigzag already applied), else -1."""
    while raw >= 0x80:
        if buf[p] != (raw & 0x7F) | 0x80:
            return -1
        raw >>= 7
        p += 1
    return p + 1 if buf[p] == raw else -1


def _headers_end_at(buf: bytes | bytearray | memoryview, p: int, count_byte: int, record_end: int) -> bool:
    """Whether a short header count and headers with short, non-negative lengths end at `record_end`."""
    if count_byte >= 0x80 or count_byte & 1:
        return False
    for _ in range(count_byte >> 1):
        b = buf[p]
        if b >= 0x80 or b & 1:
            return False
        p += 1 + (b >> 1)
        b = buf[p]
        if b == 1:
            p += 1
        elif b < 0x80 and not b & 1:
            p += 1 + (b >> 1)
        else:
            return False
    return p == record_end


# -- record-level checks ----------------------------------------------------------------------


def _check_records(batch: bytes | bytearray | memoryview, header: records.BatchHeader, tp: str,
                   policy: TopicPolicy, now: int, bound: int) -> int:
    """LogValidator.validateRecord for every record; RecordValidationError as processRecordErrors raises it.

    Returns the largest record timestamp (-1 when none), which Kafka writes as maxTimestamp.
    """
    details: list[tuple[int, int, int, int]] = []
    _scan(batch, header, _Walk(header, tp, details), bound)
    batch_lat = header.timestamp_type == LOG_APPEND_TIME
    lower, upper = now - policy.before_max_ms, now + policy.after_max_ms
    # a compressed batch kept as sent is read with readPartiallyFrom, whose records print no key or value
    partial = header.compression != records.COMPRESSION_NONE and not policy.recompressing
    errors: list[RecordError] = []
    any_timestamp_error = False
    max_timestamp = NO_TIMESTAMP
    for index, (timestamp_delta, offset_delta, key_size, value_size) in enumerate(details):
        timestamp = header.max_timestamp if batch_lat else _wrap(header.base_timestamp + timestamp_delta)
        max_timestamp = max(max_timestamp, timestamp)
        if policy.compacted and key_size < 0:
            errors.append(RecordError(index, f"Compacted topic cannot accept message without key in topic "
                                             f"partition {tp}."))
        elif not policy.log_append_time and timestamp != NO_TIMESTAMP:
            difference = _wrap(now - timestamp)
            if difference > policy.before_max_ms or _wrap(-difference) > policy.after_max_ms:
                any_timestamp_error = True
                errors.append(RecordError(index, f"Timestamp {timestamp} of message with offset "
                                                 f"{header.base_offset + offset_delta} is out of range. The timestamp "
                                                 f"should be within [{lower}, {upper}]"))
        elif batch_lat:
            any_timestamp_error = True
            record = _record_text(header.base_offset + offset_delta, timestamp,
                                  0 if partial else key_size, 0 if partial else value_size)
            errors.append(RecordError(index, f"Invalid timestamp type in message {record}. Producer should not set "
                                             "timestamp type to LogAppendTime."))
    if errors:
        if any_timestamp_error:
            raise RecordValidationError(ErrorCode.INVALID_TIMESTAMP, errors, _TIMESTAMP_SUMMARY)
        raise RecordValidationError(
            ErrorCode.INVALID_RECORD, errors,
            f"One or more records have been rejected due to {len(errors)} record errors in total, and only showing "
            f"the first three errors at most: [{', '.join(repr(error) for error in errors[:3])}]",
        )
    return max_timestamp


def _record_text(offset: int, timestamp: int, key_size: int, value_size: int) -> str:
    """DefaultRecord.toString."""
    return (f"DefaultRecord(offset={offset}, timestamp={timestamp}, key={max(key_size, 0)} bytes, "
            f"value={max(value_size, 0)} bytes)")


def _wrap(value: int) -> int:
    """`value` as a Java long (two's complement overflow)."""
    return (value + 2**63) % 2**64 - 2**63


# -- message sets of magic 0 and 1 (Produce v0-2, release profiles before 4.0) -----------------------------------

DEFAULT_DECOMPRESSION_BOUND = decompression_bound(1048588)  # for the default max.message.bytes


def convert_legacy_message_set(data: bytes | bytearray | memoryview, limit: int = DEFAULT_DECOMPRESSION_BOUND
                               ) -> bytes:
    """One magic 2 batch holding the records of a magic 0/1 message set, as Kafka 3.9's LogValidator
    converts them (no producer id, no headers; magic 0 records get no timestamp; a compressed wrapper's
    inner records are validated and taken out; the batch keeps the producer's codec).

    A wrapper whose messages would expand beyond `limit` bytes is MESSAGE_TOO_LARGE, as a v2 batch's are.
    """
    data = bytes(data)
    converted: list[tuple[bytes | None, bytes | None]] = []
    timestamps: list[int] = []
    codec = records.COMPRESSION_NONE
    for wrapper_offset, magic, attributes, timestamp, key, value in legacy_records.read_legacy_entries(data):
        wrapper_codec = attributes & records.ATTR_COMPRESSION_MASK
        if wrapper_codec == records.COMPRESSION_NONE:
            converted.append((key, value))
            timestamps.append(timestamp)
            continue
        codec = wrapper_codec
        payload = value or b""
        if magic == legacy_records.MAGIC_V0 and codec == records.COMPRESSION_LZ4:
            payload = compression.fix_lz4_header_checksum(payload)
        try:
            # an unknown codec id is UNKNOWN_SERVER_ERROR, as Kafka's CompressionType.forId failing
            inner = b"".join(compression.iter_decompressed(wrapper_codec, payload, limit))
        except DecompressionLimitError:
            raise KafkaError(ErrorCode.MESSAGE_TOO_LARGE, f"The compressed message set expands beyond {limit} "
                             "bytes") from None
        entries = legacy_records.read_legacy_entries(inner)
        if magic == legacy_records.MAGIC_V1 and not entries:
            raise KafkaError(ErrorCode.INVALID_RECORD, "Found invalid compressed record set with no inner records")
        # AbstractLegacyRecordBatch's deep iterator: a magic 1 wrapper's offset is its last inner record's,
        # the inner ones are relative to the base that gives (used only when not negative)
        base = wrapper_offset - entries[-1][0] if entries else -1
        for expected, (inner_offset, inner_magic, inner_attributes, inner_timestamp, inner_key,
                       inner_value) in enumerate(entries):
            if inner_magic != magic:
                raise KafkaError(ErrorCode.INVALID_RECORD, "Log record magic does not match outer magic")
            if inner_attributes & records.ATTR_COMPRESSION_MASK:
                raise KafkaError(ErrorCode.INVALID_RECORD, "Compressed outer record should not have an inner record "
                                 "with a compression attribute set")
            absolute = base + inner_offset if base >= 0 else inner_offset
            if magic == legacy_records.MAGIC_V1 and absolute != expected:
                # LogValidator: the inner offsets of a magic 1 wrapper run 0, 1, ...
                raise KafkaError(ErrorCode.INVALID_RECORD, "Inner record inside the compressed record batch does "
                                 f"not have incremental offsets, expected offset is {expected}")
            converted.append((inner_key, inner_value))
            # a wrapper stamped with LogAppendTime gives its time to every inner record
            timestamps.append(timestamp if attributes & legacy_records.LEGACY_ATTR_LOG_APPEND_TIME else inner_timestamp)
    if not converted:
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "Produce request carries no whole message")
    return records.build_batch(converted, timestamps=timestamps, compression=codec)


def old_produce_batch(data: bytes | bytearray | memoryview, limit: int) -> bytes | bytearray | memoryview:
    """The batch a Produce v0-2 partition's records append as: a magic 0/1 message set converted to one magic 2
    batch (`limit` bounds its decompression), a magic 2 batch as it is. Any other magic is INVALID_RECORD, and
    ZStandard needs Produce v7 (UNSUPPORTED_COMPRESSION_TYPE)."""
    if legacy_records.is_legacy_message_set(data):
        data = convert_legacy_message_set(data, limit)
    header = records.read_header(data)
    if header.magic != 2:
        raise KafkaError(ErrorCode.INVALID_RECORD, f"Unsupported record batch magic {header.magic}")
    if header.compression == records.COMPRESSION_ZSTD:
        raise KafkaError(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
                         "Produce requests with ZStandard compression need version 7 or above")
    return data
