"""One partition's log: record batches kept as bytes, in offset order.

A stored batch is a buffer of its own or a view into the request frame it came in (never the
socket's read buffer), patched in place with its offsets; either goes back out as it is.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

from ..protocol import records
from ..protocol.errors import ErrorCode, KafkaError


class PartitionLog:
    """An in-memory log of v2 record batches with Kafka's offset bookkeeping.

    With one replica the high watermark equals the log end offset as soon as
    an append returns, as on a single-replica Kafka partition.
    """

    def __init__(self, topic: str, partition: int, leader_epoch: int = 0) -> None:
        self.topic = topic
        self.partition = partition
        self.leader_epoch = leader_epoch
        # (epoch, start offset) for OffsetForLeaderEpoch, oldest first
        self.epoch_starts: list[tuple[int, int]] = [(leader_epoch, 0)]
        self.batches: list[bytes | bytearray | memoryview] = []
        self.base_offsets: list[int] = []
        self.last_offsets: list[int] = []
        self.max_timestamps: list[int] = []  # each batch's maxTimestamp, as validated (recomputed from its records)
        # what retention.ms compares: maxTimestamp, or the append time when no record has a timestamp
        # (Kafka falls back to the segment's last-modified time)
        self.retention_timestamps: list[int] = []
        # where each batch starts in the bytes ever appended, so the bytes between two offsets are
        # a subtraction (a parked Fetch asks on every append)
        self.byte_starts: list[int] = []
        self.bytes_appended = 0
        self.log_start_offset = 0
        self.log_end_offset = 0
        self.size_bytes = 0
        self._watchers: list[Callable[[int], None]] = []

    def __repr__(self) -> str:
        return f"PartitionLog({self.topic}-{self.partition}, {self.log_start_offset}..{self.log_end_offset})"

    @property
    def high_watermark(self) -> int:
        return self.log_end_offset

    def watch(self, callback: Callable[[int], None]) -> Callable[[], None]:
        """Call `callback(appended_bytes)` after every announced append; returns the unwatch function."""
        self._watchers.append(callback)

        def unwatch() -> None:
            if callback in self._watchers:
                self._watchers.remove(callback)

        return unwatch

    def append(self, batch: bytearray | memoryview, header: records.BatchHeader, max_timestamp: int | None = None,
               append_time_ms: int = -1) -> int:
        """Assign offsets to a validated batch, store it, and return its base offset.

        `max_timestamp` is the batch's validated maxTimestamp (default: the header's).
        Watchers are not woken here: the caller finishes the append's producer-state and
        transaction bookkeeping first, then calls `announce_append`.
        """
        if max_timestamp is None:
            max_timestamp = header.max_timestamp
        base_offset = self.log_end_offset
        records.patch_base_offset(batch, base_offset, self.leader_epoch)
        self.batches.append(batch)
        self.base_offsets.append(base_offset)
        self.last_offsets.append(base_offset + header.last_offset_delta)
        self.max_timestamps.append(max_timestamp)
        self.retention_timestamps.append(max_timestamp if max_timestamp >= 0 else append_time_ms)
        self.byte_starts.append(self.bytes_appended)
        self.bytes_appended += len(batch)
        self.log_end_offset = base_offset + header.last_offset_delta + 1
        self.size_bytes += len(batch)
        return base_offset

    def announce_append(self, appended_bytes: int) -> None:
        """Wake the watchers (parked fetches) once an append and all its state changes are done."""
        for watcher in list(self._watchers):
            watcher(appended_bytes)

    def _first_index_at_or_after(self, offset: int) -> int:
        """Index of the batch that holds `offset`, or of the first batch after it."""
        return bisect.bisect_left(self.last_offsets, offset)

    def read(self, offset: int, max_bytes: int, min_one: bool, upper_bound: int | None = None
             ) -> list[bytes | bytearray | memoryview]:
        """Whole batches from the one holding `offset`, up to `max_bytes`, below `upper_bound` (e.g. the LSO).

        The first batch is returned even if larger than `max_bytes` when
        `min_one` is set, so a consumer can always make progress (KIP-74).
        """
        if offset < self.log_start_offset or offset > self.log_end_offset:
            raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE)
        out: list[bytes | bytearray | memoryview] = []
        total = 0
        for index in range(self._first_index_at_or_after(offset), len(self.batches)):
            if upper_bound is not None and self.base_offsets[index] >= upper_bound:
                break
            batch = self.batches[index]
            if total + len(batch) > max_bytes and (out or not min_one):
                break
            out.append(batch)
            total += len(batch)
        return out

    def bytes_after(self, offset: int, upper_bound: int | None = None) -> int:
        """How many stored bytes lie at or after `offset`, below `upper_bound` (for Fetch min_bytes)."""
        start = self._first_index_at_or_after(offset)
        end = len(self.batches) if upper_bound is None else bisect.bisect_left(self.base_offsets, upper_bound)
        if start >= end:
            return 0
        end_position = self.byte_starts[end] if end < len(self.byte_starts) else self.bytes_appended
        return end_position - self.byte_starts[start]

    def delete_records_before(self, offset: int) -> None:
        """Advance the log start offset to `offset` (DeleteRecords, retention)."""
        if offset > self.log_end_offset:
            raise KafkaError(ErrorCode.OFFSET_OUT_OF_RANGE)
        if offset <= self.log_start_offset:
            return
        self.log_start_offset = offset
        # drop batches that lie wholly below the new start
        keep_from = bisect.bisect_left(self.last_offsets, offset)
        if keep_from:
            kept_start = self.byte_starts[keep_from] if keep_from < len(self.byte_starts) else self.bytes_appended
            self.size_bytes -= kept_start - self.byte_starts[0]
            del self.batches[:keep_from]
            del self.byte_starts[:keep_from]
            del self.base_offsets[:keep_from]
            del self.last_offsets[:keep_from]
            del self.max_timestamps[:keep_from]
            del self.retention_timestamps[:keep_from]

    def truncate_fully(self) -> None:
        """Empty the log, keeping offsets monotonic."""
        self.delete_records_before(self.log_end_offset)

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record with timestamp >= `timestamp`, or None.

        Batches whose validated maxTimestamp is below the target are skipped unread, as
        Kafka's timestamp search does.
        """
        for index, max_ts in enumerate(self.max_timestamps):
            if max_ts < timestamp:
                continue
            for offset, record_time in self._record_times(index):
                if offset >= self.log_start_offset and record_time >= timestamp:
                    return offset, record_time
        return None

    def _record_times(self, index: int) -> list[tuple[int, int]]:
        """(offset, timestamp) of each record of a stored batch; none if it cannot be read.

        Every stored batch was validated, so reading does not fail; if it did, a lookup
        answers without that batch rather than failing the request.
        """
        batch = self.batches[index]
        header = records.read_header(batch)
        try:
            found = [(record.offset, record.timestamp) for record in records.iter_records(batch)]
        except Exception:  # a lookup must not fail the request (and close the client's connection)
            return []
        if header.timestamp_type == 1:  # LogAppendTime batches carry the append time for every record
            return [(offset, header.max_timestamp) for offset, _ in found]
        return found

    def max_timestamp_offset(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the record with the largest timestamp (first one on ties)."""
        if not self.batches:
            return None
        best = max(range(len(self.batches)), key=lambda i: (self.max_timestamps[i], -i))
        best_ts = self.max_timestamps[best]
        for offset, record_time in self._record_times(best):
            if record_time == best_ts and offset >= self.log_start_offset:
                return offset, best_ts
        return self.last_offsets[best], best_ts

    def apply_retention(self, now_ms: int, retention_ms: int, retention_bytes: int) -> None:
        """Drop the oldest batches past `retention.ms` or beyond `retention.bytes`."""
        drop = 0
        if retention_ms >= 0:
            while drop < len(self.batches) and self.retention_timestamps[drop] < now_ms - retention_ms:
                drop += 1
        if retention_bytes >= 0:
            size = self.size_bytes - (self.byte_starts[drop] - self.byte_starts[0] if drop < len(self.batches)
                                      else self.size_bytes)
            while drop < len(self.batches) and size - len(self.batches[drop]) >= retention_bytes:
                size -= len(self.batches[drop])
                drop += 1
        if drop:
            self.delete_records_before(self.last_offsets[drop - 1] + 1)

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(epoch, end offset) as OffsetForLeaderEpoch answers; (-1, -1) if unknown."""
        if epoch > self.leader_epoch or epoch < 0:
            return -1, -1
        for index, (start_epoch, _start) in enumerate(self.epoch_starts):
            if start_epoch > epoch:
                if index == 0:
                    return -1, -1
                return self.epoch_starts[index - 1][0], self.epoch_starts[index][1]
        return self.leader_epoch, self.log_end_offset

    def bump_leader_epoch(self) -> None:
        """A new leader epoch starts at the log end offset."""
        self.leader_epoch += 1
        self.epoch_starts.append((self.leader_epoch, self.log_end_offset))
