"""One share group's view of one topic partition (KIP-932): which records are in flight, for whom, how often.

Mirrors Kafka 4.3.1's SharePartition. The share-partition start offset (SPSO) is the first offset not yet
acknowledged or archived; the end offset (SPEO) is one past the last offset ever acquired. Every offset between
them is in flight, in one of the states AVAILABLE, ACQUIRED, ACKNOWLEDGED or ARCHIVED. A record is acquired by
one member at a time, under a lock of `share.record.lock.duration.ms` on the core's clock; each acquisition
counts one delivery, and a record released or timed out after `group.share.delivery.count.limit` deliveries is
archived instead of offered again. At most `group.share.partition.max.record.locks` offsets are in flight.
Records acquired together stay one in-flight batch until part of it is acknowledged or acquired: a refused
acknowledgement names the batch or the offset in Kafka's words accordingly.

Sans-IO: offsets only. The caller supplies the log's bounds and reads the record batches itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

from ..protocol.errors import ErrorCode


class RecordState(IntEnum):
    """RecordState in Kafka's share-group state records."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AcknowledgeType(IntEnum):
    """The acknowledge types of ShareFetch and ShareAcknowledge (0 marks a gap: offsets with no record)."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


_TERMINAL = (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)

# SharePartition's texts for an acknowledgement it refuses
BATCH_NOT_FOUND = "Batch record not found. The request batch offsets are not found in the cache."
FIRST_PAST = "Batch record not found. The first offset in request is past acquired records."
LAST_PAST = "Batch record not found. The last offset in request is past acquired records."
BATCH_NOT_ACQUIRED = "The batch cannot be acknowledged. The batch is not in the acquired state."
NOT_BATCH_OWNER = "Member is not the owner of batch record"
OFFSET_NOT_ACQUIRED = "The offset cannot be acknowledged. The offset is not acquired."
NOT_OFFSET_OWNER = "Member is not the owner of offset"
RENEW_DISABLED = "Renewing acquisition locks is not enabled for the group."  # share.renew.acknowledge.enable=false


@dataclass(slots=True)
class InFlightRecord:
    """One in-flight offset: its state, how often it was delivered, and who holds it until when."""

    state: RecordState
    delivery_count: int = 0
    member_id: str | None = None
    lock_deadline_ms: int = 0


@dataclass(frozen=True, slots=True)
class AcquiredRange:
    """Offsets `first_offset`..`last_offset` acquired together, all delivered `delivery_count` times."""

    first_offset: int
    last_offset: int
    delivery_count: int


class SharePartition:
    """The in-flight records of one (share group, topic partition)."""

    def __init__(self, start_offset: int, delivery_count_limit: int = 5, max_record_locks: int = 2000) -> None:
        self.start_offset = start_offset
        self.end_offset = start_offset  # next offset never acquired yet
        self.delivery_count_limit = delivery_count_limit
        self.max_record_locks = max_record_locks
        self.in_flight: dict[int, InFlightRecord] = {}
        # in-flight batches acquired whole and not split since (first offset -> last offset): their offsets share one
        # state and owner, and Kafka answers a refused acknowledgement of one with its batch-level texts; an
        # acknowledgement or acquisition of part of one splits it per offset, as Kafka's InFlightBatch does
        self.batches: dict[int, int] = {}
        # what Kafka's share coordinator last stored of this share partition, as DescribeShareGroupOffsets reports
        # it: (start offset, records from it acknowledged or archived); None before the first write
        self.persisted: tuple[int, int] | None = None
        # where the share partition starts, asked at its first acquisition: Kafka's SharePartition applies
        # share.auto.offset.reset when the first share fetch loads it, not when an assignment initializes it
        self.pending_start: Callable[[], int] | None = None
        self._watchers: list[Callable[[], None]] = []

    def __repr__(self) -> str:
        return f"SharePartition({self.start_offset}..{self.end_offset}, {len(self.in_flight)} in flight)"

    def watch(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback()` whenever records may have become acquirable again (released, timed out, settled);
        returns the unwatch function. A waiting ShareFetch watches its share partitions so."""
        self._watchers.append(callback)

        def unwatch() -> None:
            if callback in self._watchers:
                self._watchers.remove(callback)

        return unwatch

    def _wake(self) -> None:
        for watcher in list(self._watchers):
            watcher()

    def acquire(self, member_id: str, log_start_offset: int, fetch_upper_bound: int, max_records: int,
                lock_duration_ms: int, now_ms: int,
                batch_last_offset: Callable[[int], int] | None = None) -> list[AcquiredRange]:
        """Acquire up to `max_records` records below `fetch_upper_bound` for `member_id`, oldest first.

        Records released or timed out are offered again before new ones; new records are bounded by the record
        locks the partition may hold. Offsets below the log start offset (deleted records) are skipped. With
        `batch_last_offset` (the last offset of the stored batch holding an offset: ShareAcquireMode
        batch-optimized, Kafka's default) new records are acquired to the end of the last batch they reach, so
        MaxRecords may be exceeded as Kafka exceeds it.
        """
        if self.pending_start is not None:
            self.start_offset = self.end_offset = self.pending_start()
            self.pending_start = None
        self.expire_locks(now_ms)
        if self.start_offset < log_start_offset:
            self._move_start_to(log_start_offset)
        offsets: list[int] = []
        for offset in sorted(self.in_flight):
            if len(offsets) >= max_records:
                break
            record = self.in_flight[offset]
            if record.state is RecordState.AVAILABLE and offset < fetch_upper_bound:
                offsets.append(offset)
        limit = min(fetch_upper_bound, self.start_offset + self.max_record_locks)
        first_new = self.end_offset
        while len(offsets) < max_records and self.end_offset < limit:
            self.in_flight[self.end_offset] = InFlightRecord(RecordState.AVAILABLE)
            offsets.append(self.end_offset)
            self.end_offset += 1
        if batch_last_offset is not None and self.end_offset > first_new:
            batch_end = min(batch_last_offset(self.end_offset - 1) + 1, fetch_upper_bound)
            while self.end_offset < batch_end:
                self.in_flight[self.end_offset] = InFlightRecord(RecordState.AVAILABLE)
                offsets.append(self.end_offset)
                self.end_offset += 1
        self._split_batches_partly_in(set(offsets))
        if self.end_offset > first_new:
            self.batches[first_new] = self.end_offset - 1
        deadline = now_ms + lock_duration_ms
        ranges: list[AcquiredRange] = []
        for offset in sorted(offsets):
            record = self.in_flight[offset]
            record.state = RecordState.ACQUIRED
            record.delivery_count += 1
            record.member_id = member_id
            record.lock_deadline_ms = deadline
            last = ranges[-1] if ranges else None
            if last is not None and last.last_offset + 1 == offset and last.delivery_count == record.delivery_count:
                ranges[-1] = AcquiredRange(last.first_offset, offset, last.delivery_count)
            else:
                ranges.append(AcquiredRange(offset, offset, record.delivery_count))
        return ranges

    def acknowledge(self, member_id: str, first_offset: int, last_offset: int, types: list[int],
                    lock_duration_ms: int, now_ms: int) -> tuple[ErrorCode, str | None]:
        """Apply one acknowledgement batch of `member_id`: one type for all its offsets, or one per offset.

        Nothing changes unless every offset is acquired by this member (INVALID_RECORD_STATE otherwise, with Kafka's
        text for the whole batch or the offset refused; offsets past those acquired are INVALID_REQUEST). A RENEW
        (KIP-1222) restarts the record's lock at `now_ms` and leaves it acquired, its delivery count as it was; a
        batch of renewals only writes no share-group state and wakes no waiting fetch.
        """
        self.expire_locks(now_ms)
        start_before = self.start_offset
        requested_first = first_offset
        count = last_offset - first_offset + 1
        if count <= 0 or len(types) not in (1, count) or any(t not in AcknowledgeType._value2member_map_
                                                               for t in types):
            return ErrorCode.INVALID_REQUEST, None
        if last_offset < self.start_offset:
            return ErrorCode.NONE, None  # settled already: ignored, as in Kafka
        if not self.in_flight:
            return ErrorCode.INVALID_RECORD_STATE, BATCH_NOT_FOUND
        if first_offset >= self.end_offset:
            return ErrorCode.INVALID_REQUEST, FIRST_PAST
        if last_offset >= self.end_offset:
            return ErrorCode.INVALID_REQUEST, LAST_PAST
        first_offset = max(first_offset, self.start_offset)  # offsets below the start are settled: ignored, as in Kafka
        refusal = self._refusal(member_id, first_offset, last_offset, per_offset=len(types) > 1)
        if refusal is not None:
            return ErrorCode.INVALID_RECORD_STATE, refusal
        settled = False
        for offset in range(first_offset, last_offset + 1):
            record = self.in_flight[offset]
            kind = types[0] if len(types) == 1 else types[offset - requested_first]
            if kind == AcknowledgeType.RENEW:
                record.lock_deadline_ms = now_ms + lock_duration_ms
                continue
            settled = True
            if kind == AcknowledgeType.ACCEPT:
                self._settle(record, RecordState.ACKNOWLEDGED)
            elif kind == AcknowledgeType.RELEASE:
                self._release(record)
            else:  # REJECT, and GAP: offsets with no record are never offered
                self._settle(record, RecordState.ARCHIVED)
        if settled:
            self._advance_start()
            self._write_state(start_before)
            self._wake()
        return ErrorCode.NONE, None

    def _refusal(self, member_id: str, first_offset: int, last_offset: int, per_offset: bool) -> str | None:
        """Why `member_id` may not acknowledge `first_offset`..`last_offset`, in Kafka's words, or None. A whole
        batch is checked as one (its state, then its owner) and split per offset when only part of it is
        acknowledged or its offsets get types of their own; the split stays, as in Kafka, even if a later offset
        is refused. A split batch's offsets are checked one by one."""
        offset = first_offset
        while offset <= last_offset:
            batch_first = self._batch_holding(offset)
            if batch_first is not None:
                batch_last = self.batches[batch_first]
                head = self.in_flight[batch_first]
                if head.state is not RecordState.ACQUIRED:
                    return BATCH_NOT_ACQUIRED
                if head.member_id != member_id:
                    return NOT_BATCH_OWNER
                if per_offset or batch_first < first_offset or batch_last > last_offset:
                    del self.batches[batch_first]
                offset = batch_last + 1
                continue
            record = self.in_flight.get(offset)
            if record is None:
                return BATCH_NOT_FOUND
            if record.state is not RecordState.ACQUIRED:
                return OFFSET_NOT_ACQUIRED
            if record.member_id != member_id:
                return NOT_OFFSET_OWNER
            offset += 1
        return None

    def _batch_holding(self, offset: int) -> int | None:
        """The first offset of the whole batch holding `offset`, if it is in one."""
        if offset in self.batches:
            return offset
        for first, last in self.batches.items():
            if first <= offset <= last:
                return first
        return None

    def _split_batches_partly_in(self, offsets: set[int]) -> None:
        """Split per offset every whole batch of which some offsets but not all are in `offsets`."""
        for first, last in list(self.batches.items()):
            inside = sum(1 for offset in range(first, last + 1) if offset in offsets)
            if 0 < inside <= last - first:
                del self.batches[first]

    def archive_acquired(self, member_id: str, offsets: set[int]) -> None:
        """Archive records just acquired by `member_id` that must never be delivered (read_committed: records of
        aborted transactions), as Kafka's share fetch filters them out of what it hands out."""
        self._split_batches_partly_in(offsets)
        for offset in offsets:
            record = self.in_flight.get(offset)
            if record is not None and record.state is RecordState.ACQUIRED and record.member_id == member_id:
                self._settle(record, RecordState.ARCHIVED)
        self._advance_start()

    def release_member(self, member_id: str) -> int:
        """Release every record `member_id` holds (its share session closed or it left); how many."""
        released = 0
        start_before = self.start_offset
        for record in self.in_flight.values():
            if record.state is RecordState.ACQUIRED and record.member_id == member_id:
                self._release(record)
                released += 1
        self._advance_start()
        if released:
            self._write_state(start_before)
            self._wake()
        return released

    def expire_locks(self, now_ms: int) -> None:
        """Release the records whose acquisition lock ran out by `now_ms`."""
        expired = False
        start_before = self.start_offset
        for record in self.in_flight.values():
            if record.state is RecordState.ACQUIRED and record.lock_deadline_ms <= now_ms:
                self._release(record)
                expired = True
        if expired:
            self._advance_start()
            self._write_state(start_before)
            self._wake()

    def next_lock_deadline(self) -> int | None:
        """When the next acquisition lock runs out, if any record is acquired."""
        deadlines = [r.lock_deadline_ms for r in self.in_flight.values() if r.state is RecordState.ACQUIRED]
        return min(deadlines) if deadlines else None

    def has_available(self, fetch_upper_bound: int) -> bool:
        """Whether an acquire now would find a record to hand out (for waking a waiting ShareFetch)."""
        if any(r.state is RecordState.AVAILABLE for o, r in self.in_flight.items() if o < fetch_upper_bound):
            return True
        return self.end_offset < min(fetch_upper_bound, self.start_offset + self.max_record_locks)

    def _write_state(self, start_before: int) -> None:
        """What Kafka's share partition writes to its share coordinator after an acknowledgement, a release or a
        lock timeout: the start offset as it was before the change moved it (Kafka moves its cached start only
        once the write succeeded), with every record from there that is now acknowledged or archived. Read from
        Kafka 4.3.1: accepting offset 0 of 4 reports start 0 and lag 3, accepting 1 next start 1 and lag 2."""
        settled = self.start_offset - start_before + sum(
            1 for record in self.in_flight.values() if record.state in _TERMINAL)
        self.persisted = (start_before, settled)

    def state_of(self, offset: int) -> RecordState:
        """The state of `offset`: in flight, or ACKNOWLEDGED below the start offset, AVAILABLE past the end."""
        record = self.in_flight.get(offset)
        if record is not None:
            return record.state
        return RecordState.ACKNOWLEDGED if offset < self.start_offset else RecordState.AVAILABLE

    def delivery_count_of(self, offset: int) -> int:
        record = self.in_flight.get(offset)
        return record.delivery_count if record is not None else 0

    def _release(self, record: InFlightRecord) -> None:
        # Kafka archives a record once it has been delivered as often as the limit allows
        if record.delivery_count >= self.delivery_count_limit:
            self._settle(record, RecordState.ARCHIVED)
        else:
            record.state = RecordState.AVAILABLE
            record.member_id = None
            record.lock_deadline_ms = 0

    @staticmethod
    def _settle(record: InFlightRecord, state: RecordState) -> None:
        record.state = state
        record.member_id = None
        record.lock_deadline_ms = 0

    def _advance_start(self) -> None:
        """Move the start offset past the settled records at the front of the in-flight window."""
        while self.start_offset < self.end_offset:
            record = self.in_flight.get(self.start_offset)
            if record is None or record.state not in _TERMINAL:
                break
            del self.in_flight[self.start_offset]
            self.batches.pop(self.start_offset, None)
            self.start_offset += 1

    def _move_start_to(self, offset: int) -> None:
        """The log start moved past the start offset (DeleteRecords, retention): forget what lies below it."""
        for old in [o for o in self.in_flight if o < offset]:
            del self.in_flight[old]
        for first in [f for f in self.batches if f < offset]:
            del self.batches[first]  # gone, or cut by the new start: what is left is per offset
        self.start_offset = offset
        self.end_offset = max(self.end_offset, offset)
        self._advance_start()
