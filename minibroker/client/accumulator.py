"""The producer's batches of one partition and when the next may be sent (Kafka's RecordAccumulator and
ProducerBatch, with KIP-1269's window and KIP-758's throttle).

A batch is unacknowledged from its first send until it is answered with
success or fails for good; a batch waiting to be retried is still
unacknowledged. A batch is sent only when its distance from the oldest
unacknowledged batch of its partition (counted in batches, in sequence order)
is below the partition's limit, and its connection has fewer requests in
flight than `max_in_flight_requests_per_connection`. The broker appends at
most limit - 1 batches after the oldest unacknowledged one, so it still
retains every batch this producer may retry, and answers a retried duplicate
with its original offset instead of OUT_OF_ORDER_SEQUENCE_NUMBER.

Retries keep each partition's order as Kafka's producer does: a batch keeps
its sequence numbers for life, and a batch being retried is sent again only
when no batch before it is in flight, and before any later batch
(RecordAccumulator.shouldStopDrainBatchesForPartition).

KIP-758's producer throttle (`max_in_flight_sequence_numbers`) replaces the
window: a batch is sent only while the sequence numbers from the oldest
unacknowledged batch of its partition to the new batch's last one number at
most that bound (a batch goes alone when nothing is unacknowledged, however
large), and the connection limit still holds; the discovered window is not
applied.

No sockets and no clock here: the producer (producer.py) builds requests from what this allows.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field

from ..protocol import records

DEFAULT_BATCHES_TO_RETAIN = 5
SEQUENCE_SPAN = 2**31  # sequences wrap from Int.MaxValue to 0


@dataclass(frozen=True)
class RecordMetadata:
    """Where a record landed."""

    topic: str
    partition: int
    offset: int


@dataclass(eq=False)
class ProducerBatch:
    """Records for one partition, sent together and retried together with the same sequences."""

    topic: str
    partition: int
    created_ms: float
    records: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]], int]] = field(default_factory=list)
    futures: list[asyncio.Future[RecordMetadata]] = field(default_factory=list)
    size: int = 0
    base_sequence: int = -1  # assigned at first send, kept for every retry
    ordinal: int = -1  # the batch's place among its partition's batches (0, 1, 2, ...), assigned with base_sequence
    attempts: int = 0
    encoded: bytes | None = None
    transactional: bool = False

    def encode(self, producer_id: int, epoch: int, codec: int) -> bytes:
        if self.encoded is None:
            self.encoded = records.build_batch(
                [(key, value) for key, value, _headers, _ts in self.records],
                timestamps=[ts for _k, _v, _h, ts in self.records], producer_id=producer_id,
                producer_epoch=epoch, base_sequence=self.base_sequence, compression=codec,
                headers=[headers for _k, _v, headers, _ts in self.records], transactional=self.transactional)
        return self.encoded

    def fail(self, error: BaseException) -> None:
        for future in self.futures:
            if not future.done():
                future.set_exception(error)


@dataclass
class PartitionState:
    """Per-partition sending state: queue, in-flight batches, next sequence and the discovered window."""

    queue: deque[ProducerBatch] = field(default_factory=deque)  # sealed batches, in sequence order
    open_batch: ProducerBatch | None = None
    in_flight: list[ProducerBatch] = field(default_factory=list)  # sorted by ordinal
    next_sequence: int = 0
    next_ordinal: int = 0
    limit: int = DEFAULT_BATCHES_TO_RETAIN
    leader: int = -1
    max_in_flight_seen: int = 0
    max_sequences_seen: int = 0  # the most unacknowledged sequence numbers at once (KIP-758's throttle)

    def seal(self) -> None:
        """Close the open batch: it joins the queue (when it holds records) and takes no more."""
        if self.open_batch is not None and self.open_batch.records:
            self.queue.append(self.open_batch)
        self.open_batch = None

    def sendable_head(self, max_in_flight_requests: int, max_in_flight_sequence_numbers: int | None
                      ) -> ProducerBatch | None:
        """The next batch if the in-flight rule lets it go now, else None."""
        if not self.queue:
            return None
        if max_in_flight_sequence_numbers is not None:
            return self._sendable_head_by_sequences(max_in_flight_requests, max_in_flight_sequence_numbers)
        limit = min(self.limit, max_in_flight_requests)
        if len(self.in_flight) >= limit:
            return None
        head = self.queue[0]
        if head.ordinal == -1:
            # a new batch: the broker must still retain the oldest unacknowledged batch once this one is
            # appended, or that batch's retry would be answered OUT_OF_ORDER_SEQUENCE_NUMBER (KIP-1269)
            oldest = self.oldest_unacknowledged_batch()
            if oldest is not None and self.next_ordinal - oldest.ordinal >= limit:
                return None
        elif self.in_flight and self.in_flight[0].ordinal < head.ordinal:
            # a retried batch goes out only when nothing before it is in flight (Kafka's ordering rule);
            # it was sent once within the limit, and the oldest unacknowledged batch only moves forward
            return None
        return head

    def _sendable_head_by_sequences(self, max_in_flight_requests: int, bound: int) -> ProducerBatch | None:
        """KIP-758's throttle: the next batch if the unacknowledged sequences stay within `bound`, else None."""
        # a request carries one batch per partition, so this is implied by the connection check; kept for clarity
        if len(self.in_flight) >= max_in_flight_requests:
            return None
        head = self.queue[0]
        if head.ordinal == -1:
            # a new batch: once it is appended, the broker's latest sequence may be its last one, and a retry of
            # the oldest unacknowledged batch must still lie in the broker's duplicate range below that
            oldest = self.oldest_unacknowledged_batch()
            if oldest is not None and self.sequences_since(oldest) + len(head.records) > bound:
                return None
        elif self.in_flight and self.in_flight[0].ordinal < head.ordinal:
            return None  # Kafka's ordering rule, as in window mode
        return head

    def sequences_since(self, batch: ProducerBatch) -> int:
        """Sequence numbers assigned from `batch`'s first one up to the partition's next one, counting wrap."""
        return (self.next_sequence - batch.base_sequence) % SEQUENCE_SPAN

    def oldest_unacknowledged_batch(self) -> ProducerBatch | None:
        """The partition's oldest batch sent and not yet acknowledged (in flight or queued to retry)."""
        oldest = self.in_flight[0] if self.in_flight else None
        if self.queue and self.queue[0].ordinal != -1:  # the queue is in ordinal order, retries first
            head = self.queue[0]
            if oldest is None or head.ordinal < oldest.ordinal:
                oldest = head
        return oldest

    def in_flight_sequences(self) -> int:
        """Sequence numbers sent and not yet acknowledged, from the oldest such batch on."""
        oldest = self.oldest_unacknowledged_batch()
        return 0 if oldest is None else self.sequences_since(oldest)

    def send_head(self) -> ProducerBatch:
        """Take the queue's head into flight; a first send gives it its sequences and ordinal for life."""
        batch = self.queue.popleft()
        if batch.base_sequence == -1:
            batch.base_sequence = self.next_sequence
            self.next_sequence = records.increment_sequence(self.next_sequence, len(batch.records))
            batch.ordinal = self.next_ordinal
            self.next_ordinal += 1
        batch.attempts += 1
        self.in_flight.append(batch)
        self.in_flight.sort(key=lambda b: b.ordinal)
        self.max_in_flight_seen = max(self.max_in_flight_seen, len(self.in_flight))
        self.max_sequences_seen = max(self.max_sequences_seen, self.in_flight_sequences())
        return batch

    def requeue(self, batch: ProducerBatch) -> None:
        """Queue a batch again for its retry, in sequence order: retries before batches never sent."""
        self.queue.append(batch)
        ordered = sorted(self.queue, key=lambda b: (b.ordinal == -1, b.ordinal))
        self.queue.clear()
        self.queue.extend(ordered)

    def earlier_batch_pending(self, batch: ProducerBatch) -> bool:
        """An out-of-order answer caused by an earlier batch that failed and is being sent again."""
        return any(-1 < b.ordinal < batch.ordinal for b in [*self.queue, *self.in_flight])
