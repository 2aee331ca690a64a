"""Idempotent producer state per partition, as Kafka's ProducerStateManager keeps it.

Per producer id: the epoch, a FIFO window of the last N batches (N is the
topic's `producer.state.batches.to.retain`, KIP-1269), the coordinator epoch,
the last timestamp and the first offset of an open transaction. The rules are
those of Kafka's ProducerAppendInfo (see reference/broker-semantics.md §4).

A lowered window does not drop anything at once: a producer's window is
trimmed to the new size at its next append on the partition.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.records import INT32_MAX, BatchHeader, increment_sequence

# One retained batch: last sequence, last offset, offset delta, max timestamp.
# Packed into the entry's bytearray so a retained batch costs 24 bytes.
_BATCH = struct.Struct(">iqiq")
_BATCH_SIZE = _BATCH.size


@dataclass(slots=True, frozen=True)
class BatchMetadata:
    """A retained batch, unpacked."""

    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_sequence(self) -> int:
        return _decrement_sequence(self.last_sequence, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


def _decrement_sequence(sequence: int, decrement: int) -> int:
    if sequence < decrement:
        return INT32_MAX - (decrement - sequence) + 1
    return sequence - decrement


class ProducerStateEntry:
    """What a partition remembers about one producer id."""

    __slots__ = ("producer_epoch", "coordinator_epoch", "last_timestamp", "current_txn_first_offset", "_batches")

    def __init__(self, producer_epoch: int = -1) -> None:
        self.producer_epoch = producer_epoch
        self.coordinator_epoch = -1
        self.last_timestamp = -1
        self.current_txn_first_offset: int | None = None
        self._batches = bytearray()

    @property
    def batch_count(self) -> int:
        return len(self._batches) // _BATCH_SIZE

    def batches(self) -> list[BatchMetadata]:
        """The retained batches, oldest first."""
        return [BatchMetadata(*fields) for fields in _BATCH.iter_unpack(self._batches)]

    def last_sequence(self) -> int:
        if not self._batches:
            return -1
        return int(_BATCH.unpack_from(self._batches, len(self._batches) - _BATCH_SIZE)[0])

    def find_duplicate(self, epoch: int, first_sequence: int, last_sequence: int) -> BatchMetadata | None:
        """The retained batch with exactly these sequences at this epoch, if any."""
        if epoch != self.producer_epoch:
            return None
        for fields in _BATCH.iter_unpack(self._batches):
            batch = BatchMetadata(*fields)
            if batch.last_sequence == last_sequence and batch.first_sequence == first_sequence:
                return batch
        return None

    def find_latest_duplicate(self, epoch: int, first_sequence: int, last_sequence: int) -> BatchMetadata | None:
        """The latest batch, if it has exactly these sequences at this epoch (KIP-758 keeps no other)."""
        if epoch != self.producer_epoch or not self._batches:
            return None
        latest = BatchMetadata(*_BATCH.unpack_from(self._batches, len(self._batches) - _BATCH_SIZE))
        if latest.last_sequence == last_sequence and latest.first_sequence == first_sequence:
            return latest
        return None

    def precedes_latest(self, epoch: int, first_sequence: int, last_sequence: int, window: int) -> bool:
        """Whether the sequences lie within `window` at or below the latest appended one, counting wrap
        (KIP-758's duplicate range: already appended, though no longer remembered)."""
        latest = self.last_sequence()
        if epoch != self.producer_epoch or latest < 0:
            return False
        span = INT32_MAX + 1
        return (latest - last_sequence) % span < window and (latest - first_sequence) % span < window

    def add_batch(self, epoch: int, batch: BatchMetadata, window: int) -> None:
        """Record an appended batch; a new epoch clears the window; the oldest go past `window`."""
        if epoch != self.producer_epoch:
            self._batches = bytearray()
            self.producer_epoch = epoch
        self._batches += _BATCH.pack(batch.last_sequence, batch.last_offset, batch.offset_delta, batch.timestamp)
        excess = len(self._batches) - window * _BATCH_SIZE
        if excess > 0:
            del self._batches[:excess]
        self.last_timestamp = batch.timestamp


@dataclass(slots=True, frozen=True)
class AppendCheck:
    """Outcome of checking a batch against producer state before it is appended."""

    duplicate: BatchMetadata | None = None


_NOTHING_RETAINED = AppendCheck()  # the outcome of almost every check, shared


@dataclass(slots=True, frozen=True)
class AbortedTxn:
    """An aborted transaction on a partition: its producer, first data offset and marker offset."""

    producer_id: int
    first_offset: int
    last_offset: int


class ProducerStateManager:
    """All producer entries of one partition, its open transactions and its aborted-transaction index."""

    def __init__(self) -> None:
        self.producers: dict[int, ProducerStateEntry] = {}
        self.open_txns: dict[int, int] = {}  # producer id -> first offset of its open transaction
        self.aborted_txns: list[AbortedTxn] = []

    def last_stable_offset(self, high_watermark: int) -> int:
        """The first offset of the earliest open transaction, or the high watermark."""
        return min(min(self.open_txns.values(), default=high_watermark), high_watermark)

    def has_open_txn(self, producer_id: int, epoch: int) -> bool:
        """Whether `producer_id` at `epoch` has a transaction open on this partition."""
        entry = self.producers.get(producer_id)
        return producer_id in self.open_txns and entry is not None and entry.producer_epoch == epoch

    def complete_txn(self, producer_id: int, epoch: int, coordinator_epoch: int, marker_offset: int,
                     timestamp: int, committed: bool) -> None:
        """Apply a COMMIT or ABORT marker written at `marker_offset` (Kafka's ProducerAppendInfo rules)."""
        entry = self.producers.get(producer_id)
        if entry is None:
            entry = self.producers[producer_id] = ProducerStateEntry()
        if epoch != entry.producer_epoch:
            entry._batches = bytearray()
            entry.producer_epoch = epoch
        entry.coordinator_epoch = coordinator_epoch
        entry.last_timestamp = timestamp
        entry.current_txn_first_offset = None
        first_offset = self.open_txns.pop(producer_id, None)
        if first_offset is not None and not committed:
            self.aborted_txns.append(AbortedTxn(producer_id, first_offset, marker_offset))

    def aborted_between(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """Aborted transactions a READ_COMMITTED fetch of [fetch_offset, upper_bound) must be told of."""
        return [txn for txn in self.aborted_txns
                if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound]

    def forget_aborted_before(self, log_start_offset: int) -> None:
        """Drop index entries whose marker lies below the log start (retention, DeleteRecords)."""
        self.aborted_txns = [txn for txn in self.aborted_txns if txn.last_offset >= log_start_offset]

    def check_append(self, header: BatchHeader, topic_partition: str, next_offset: int,
                     duplicate_range: int | None = None) -> AppendCheck:
        """Validate a client batch; KafkaError on a stale epoch, bad sequence or txn misuse.

        `duplicate_range` None is Kafka's design (a retry of a retained batch gets its offset); a number
        is KIP-758's latest-append mode (`max.in.flight.sequence.number.per.connection`): only a retry of
        the latest batch gets its offset, and one that lies within that many sequences below the latest
        is DUPLICATE_SEQUENCE_NUMBER. Nothing changes here: state moves only in `commit_append`, after
        the whole append has succeeded.
        """
        if not header.has_producer_id:
            return _NOTHING_RETAINED
        pid, epoch, seq = header.producer_id, header.producer_epoch, header.base_sequence
        entry = self.producers.get(pid)
        last_seq = entry.last_sequence() if entry is not None else -1
        # The next in-order batch cannot be a retained one, so the common case skips the search.
        if entry is not None and not (epoch == entry.producer_epoch and seq == last_seq + 1):
            if duplicate_range is None:
                duplicate = entry.find_duplicate(epoch, seq, header.last_sequence)
            else:
                duplicate = entry.find_latest_duplicate(epoch, seq, header.last_sequence)
                if duplicate is None and entry.precedes_latest(epoch, seq, header.last_sequence, duplicate_range):
                    raise KafkaError(
                        ErrorCode.DUPLICATE_SEQUENCE_NUMBER,
                        f"Sequences {seq} to {header.last_sequence} of producer {pid} in partition {topic_partition} "
                        f"were appended before its latest batch (ending at {entry.last_sequence()}); only that "
                        f"batch's offset is kept",
                    )
            if duplicate is not None:
                return AppendCheck(duplicate=duplicate)
        current_epoch = entry.producer_epoch if entry is not None else -1
        if epoch < current_epoch:
            raise KafkaError(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"Epoch of producer {pid} at offset {next_offset} in {topic_partition} is {epoch}, "
                f"which is smaller than the last seen epoch {current_epoch}",
            )
        if entry is not None and current_epoch != -1:
            if epoch != current_epoch:
                if seq != 0:
                    raise KafkaError(
                        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                        f"Invalid sequence number for new epoch of producer {pid} at offset {next_offset} in "
                        f"partition {topic_partition}: {epoch} (request epoch), {seq} (seq. number), "
                        f"{current_epoch} (current producer epoch)",
                    )
            else:
                if not (seq == last_seq + 1 or (seq == 0 and last_seq == INT32_MAX)):
                    raise KafkaError(
                        ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                        f"Out of order sequence number for producer {pid} at offset {next_offset} in partition "
                        f"{topic_partition}: {seq} (incoming seq. number), {last_seq} (current end sequence number)",
                    )
        if entry is not None and entry.current_txn_first_offset is not None and not header.is_transactional:
            raise KafkaError(
                ErrorCode.INVALID_TXN_STATE,
                f"Expected transactional write from producer {pid} at offset {next_offset} in partition "
                f"{topic_partition}",
            )
        return _NOTHING_RETAINED

    def commit_append(self, header: BatchHeader, first_offset: int, timestamp: int, window: int) -> None:
        """Record a successfully appended batch of an idempotent producer."""
        if not header.has_producer_id:
            return
        entry = self.producers.get(header.producer_id)
        if entry is None:
            entry = self.producers[header.producer_id] = ProducerStateEntry()
        delta = header.last_offset_delta
        entry.add_batch(
            header.producer_epoch,
            BatchMetadata(header.last_sequence, first_offset + delta, delta, timestamp),
            window,
        )
        if header.is_transactional and entry.current_txn_first_offset is None:
            entry.current_txn_first_offset = first_offset
            self.open_txns[header.producer_id] = first_offset

    def remove_expired(self, now_ms: int, expiration_ms: int) -> list[int]:
        """Drop producers with no open transaction idle for longer than `expiration_ms` (KIP-854)."""
        expired = [
            pid for pid, entry in self.producers.items()
            if entry.current_txn_first_offset is None and now_ms - entry.last_timestamp >= expiration_ms
        ]
        for pid in expired:
            del self.producers[pid]
        return expired

    def sequence_after(self, header: BatchHeader) -> int:
        """The sequence a producer's next batch must carry after `header` (for tests and tools)."""
        return increment_sequence(header.last_sequence, 1)
