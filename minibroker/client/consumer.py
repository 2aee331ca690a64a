"""Reading partitions: list offsets, fetch an offset range, decode records into columns.

`fetch_range` is the consumer side of the project's client: it reads one
partition from a start offset up to an end offset as Kafka's consumer does
(whole batches from the leader, records before the start dropped, control
batches skipped, aborted transactions dropped under read_committed) and
yields the records as columns, ready to become an Arrow batch or a list.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any

from ..protocol import compression, records
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.messages import FetchRequest, ListOffsetsRequest
from .client import KafkaClient

READ_UNCOMMITTED = 0
READ_COMMITTED = 1
ISOLATION_LEVELS = {"read_uncommitted": READ_UNCOMMITTED, "read_committed": READ_COMMITTED}
EARLIEST = -2  # ListOffsets timestamps, also used in Spark's offset JSON
LATEST = -1

FETCH_VERSION = 12  # the last version that names topics (13+ use topic ids)
LIST_OFFSETS_VERSION = 7
RETRIABLE_FETCH = frozenset({
    ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.LEADER_NOT_AVAILABLE,
    ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH, ErrorCode.REQUEST_TIMED_OUT,
    ErrorCode.KAFKA_STORAGE_ERROR, ErrorCode.NOT_ENOUGH_REPLICAS,
})

Header = tuple[str, bytes | None]


@dataclass
class RecordColumns:
    """Decoded records of one partition, column by column (timestamps in ms)."""

    offsets: list[int] = field(default_factory=list)
    timestamps: list[int] = field(default_factory=list)
    timestamp_types: list[int] = field(default_factory=list)
    keys: list[bytes | None] = field(default_factory=list)
    values: list[bytes | None] = field(default_factory=list)
    headers: list[list[Header]] | None = None

    def __len__(self) -> int:
        return len(self.offsets)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """A zigzag varint at `pos`: (value, position after it).

    The common one- and two-byte varints (lengths and deltas below 8 KiB) are read without a loop.
    """
    b = data[pos]
    if b < 0x80:
        return (b >> 1) ^ -(b & 1), pos + 1
    b2 = data[pos + 1]
    if b2 < 0x80:
        raw = (b & 0x7F) | (b2 << 7)
        return (raw >> 1) ^ -(raw & 1), pos + 2
    return records.read_varint(data, pos, ErrorCode.CORRUPT_MESSAGE)


def _nullable_bytes(data: bytes, pos: int) -> tuple[bytes | None, int]:
    """A varint length and that many bytes (None for a negative length): a record's key, value or header value."""
    length, pos = _varint(data, pos)
    if length < 0:
        return None, pos
    return data[pos:pos + length], pos + length


def decode_batch_into(batch: bytes | memoryview, header: records.BatchHeader, columns: RecordColumns,
                      start: int, end: int) -> None:
    """Append the records of one data batch with `start <= offset < end` to `columns`; checks the CRC."""
    if not records.crc_is_valid(batch, header):  # as Kafka's consumer does with check.crcs=true
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, f"Record batch at offset {header.base_offset} fails its CRC")
    body = compression.decompress(header.compression, memoryview(batch)[records.HEADER_SIZE:header.size_in_bytes])
    base_offset = header.base_offset
    base_timestamp = header.base_timestamp
    log_append = header.timestamp_type == 1
    offsets, timestamps, keys, values = columns.offsets, columns.timestamps, columns.keys, columns.values
    headers_out = columns.headers
    before = len(offsets)
    pos = 0
    varint, nullable_bytes = _varint, _nullable_bytes  # locals: this loop is the read path's hot spot
    for _ in range(header.record_count):
        _, pos = varint(body, pos)  # the record's length
        pos += 1  # record attributes, unused
        ts_delta, pos = varint(body, pos)
        offset_delta, pos = varint(body, pos)
        key, pos = nullable_bytes(body, pos)
        value, pos = nullable_bytes(body, pos)
        header_count, pos = varint(body, pos)
        record_headers: list[Header] = []
        for _h in range(header_count):
            length, pos = varint(body, pos)
            hkey = body[pos:pos + length].decode("utf-8", "replace")
            pos += length
            hvalue, pos = nullable_bytes(body, pos)
            record_headers.append((hkey, hvalue))
        offset = base_offset + offset_delta
        if start <= offset < end:
            offsets.append(offset)
            timestamps.append(base_timestamp + ts_delta)
            keys.append(key)
            values.append(value)
            if headers_out is not None:
                headers_out.append(record_headers)
    if pos != len(body):
        raise KafkaError(ErrorCode.CORRUPT_MESSAGE, "Record batch size does not match its records")
    added = len(offsets) - before
    if log_append and added:
        timestamps[before:] = [header.max_timestamp] * added
    columns.timestamp_types.extend([1 if log_append else 0] * added)


class AbortedFilter:
    """Kafka's read_committed rule: drop transactional batches of transactions that were aborted.

    The fetch response lists (producer id, first offset) of aborted transactions
    overlapping the fetched range; a producer's batches are dropped from its
    first offset until its ABORT marker.
    """

    def __init__(self) -> None:
        self._pending: list[tuple[int, int]] = []  # heap of (first offset, producer id)
        self._aborting: set[int] = set()

    def add(self, aborted_transactions: Any) -> None:
        for txn in aborted_transactions or ():
            heapq.heappush(self._pending, (txn.first_offset, txn.producer_id))

    def keep(self, header: records.BatchHeader, batch: bytes | memoryview) -> bool:
        """Whether a transactional data batch is visible; also consumes ABORT markers."""
        while self._pending and self._pending[0][0] <= header.last_offset:
            self._aborting.add(heapq.heappop(self._pending)[1])
        if header.is_control:
            if records.control_record_type(batch) == records.CONTROL_ABORT:
                self._aborting.discard(header.producer_id)
            return False
        return not (header.is_transactional and header.producer_id in self._aborting)


async def list_offsets(client: KafkaClient, partitions: list[tuple[str, int]], timestamp: int,
                       isolation_level: int = READ_UNCOMMITTED) -> dict[tuple[str, int], int]:
    """The offset at `timestamp` (EARLIEST, LATEST or ms) of each partition, asking each leader once."""
    by_leader: dict[int, dict[str, list[int]]] = {}
    for topic, partition in partitions:
        by_leader.setdefault(client.leader(topic, partition), {}).setdefault(topic, []).append(partition)
    out: dict[tuple[str, int], int] = {}
    for node_id, topics in by_leader.items():
        request = ListOffsetsRequest(replica_id=-1, isolation_level=isolation_level, topics=[
            ListOffsetsRequest.ListOffsetsTopic(name=topic, partitions=[
                ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(
                    partition_index=p, current_leader_epoch=-1, timestamp=timestamp) for p in parts])
            for topic, parts in topics.items()])
        connection = await client.connection(node_id)  # learns the node's versions
        response = await connection.request(request, client.max_version(node_id, 2, LIST_OFFSETS_VERSION))
        for topic_response in response.topics:
            for part in topic_response.partitions:
                if part.error_code:
                    raise KafkaError(ErrorCode(part.error_code),
                                     f"ListOffsets {topic_response.name}-{part.partition_index} failed")
                out[(topic_response.name, part.partition_index)] = part.offset
    return out


async def fetch_range(client: KafkaClient, topic: str, partition: int, start: int, end: int, *,
                      isolation_level: int = READ_UNCOMMITTED, include_headers: bool = True,
                      max_bytes: int = 8 << 20, max_wait_ms: int = 500, max_records: int = 100_000,
                      fail_on_data_loss: bool = True, retries: int = 10,
                      poll_timeout_ms: int = 120_000) -> AsyncGenerator[RecordColumns, None]:
    """Records of `topic`-`partition` with `start <= offset < end`, in chunks of whole batches.

    A chunk is handed out as soon as it holds at least `max_records` records.

    One fetch request is kept in flight ahead of the decoding, so the broker
    prepares the next chunk while this one is decoded. Offsets missing from
    the range (control records, aborted transactions, compaction) are simply
    not there; a range that reaches past what is readable waits for it up to
    `poll_timeout_ms`, as a consumer's poll would. Leader changes and lost
    connections are retried after a metadata refresh.
    """
    position = start
    aborted = AbortedFilter()
    failures = 0
    last_progress = time.monotonic()
    columns = RecordColumns(headers=[] if include_headers else None)
    pending: asyncio.Future[Any] | None = None

    async def send(offset: int) -> asyncio.Future[Any]:
        """Write a fetch request now (so the broker works while we decode); the future of its answer."""
        node_id = client.leader(topic, partition)
        connection = await client.connection(node_id)
        request = FetchRequest(
            replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=max_bytes,
            isolation_level=isolation_level, session_id=0, session_epoch=-1,
            topics=[FetchRequest.FetchTopic(topic=topic, partitions=[FetchRequest.FetchTopic.FetchPartition(
                partition=partition, current_leader_epoch=-1, fetch_offset=offset, log_start_offset=-1,
                partition_max_bytes=max_bytes)])], forgotten_topics_data=[], rack_id="")
        future = connection.send(request, client.max_version(node_id, 1, FETCH_VERSION))
        assert future is not None
        return future

    async def retry(error: BaseException) -> None:
        nonlocal failures
        failures += 1
        if failures > retries:
            raise error
        await asyncio.sleep(min(0.05 * 2**failures, 2.0))
        with contextlib.suppress(OSError, KafkaError):
            await client.refresh_metadata([topic], allow_auto_topic_creation=False)

    while position < end:
        try:
            if pending is None:
                pending = await send(position)
            response = await pending
        except (OSError, ConnectionError) as exc:
            pending = None
            await retry(exc)
            continue
        pending = None
        part = response.responses[0].partitions[0]
        code = ErrorCode(part.error_code)
        if code is ErrorCode.OFFSET_OUT_OF_RANGE and not fail_on_data_loss and position < part.log_start_offset:
            position = part.log_start_offset  # records were deleted: skip them, as Spark does without failOnDataLoss
            continue
        if code in RETRIABLE_FETCH:
            await retry(KafkaError(code, f"fetch {topic}-{partition} failed: {code.name}"))
            continue
        if code is not ErrorCode.NONE:
            raise KafkaError(code, f"fetch {topic}-{partition} at offset {position} failed: {code.name}")
        failures = 0
        if isolation_level == READ_COMMITTED:
            aborted.add(part.aborted_transactions)
        data = part.records or b""
        spans = records.split_batches(data, partial_tail=True)
        if not spans:
            # the long poll ran out with nothing new: the range reaches past what is readable yet
            if (time.monotonic() - last_progress) * 1000 > poll_timeout_ms:
                raise TimeoutError(f"no records from {topic}-{partition} at offset {position} "
                                   f"within {poll_timeout_ms} ms (range ends at {end})")
            continue
        last_progress = time.monotonic()
        next_position = max(position, records.read_header(data, spans[-1][0]).last_offset + 1)
        if next_position < end:
            try:
                pending = await send(next_position)  # in flight while this answer is decoded
            except (OSError, ConnectionError):
                pending = None  # sent again (with retries) at the top of the loop
        view = memoryview(data)
        for begin, finish in spans:
            header = records.read_header(view, begin)
            if header.last_offset < position:
                continue
            batch = view[begin:finish]
            if (header.is_control or (isolation_level == READ_COMMITTED and header.is_transactional)) \
                    and not aborted.keep(header, batch):
                continue
            decode_batch_into(batch, header, columns, position, end)
            if len(columns) >= max_records:
                yield columns
                columns = RecordColumns(headers=[] if include_headers else None)
        position = next_position
    if pending is not None:
        pending.cancel()
    if len(columns):
        yield columns
