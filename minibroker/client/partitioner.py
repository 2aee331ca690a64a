"""Which partition a record goes to when the caller names none, as Kafka's Java producer decides.

A record with a key (an empty key included) goes to
`Utils.toPositive(Utils.murmur2(key)) % partitions`, Kafka's
`BuiltInPartitioner.partitionForKey`: the same partition the Java client,
librdkafka's `murmur2_random` partitioner and Spark's Kafka sink choose.

A record without a key goes to the topic's sticky partition (KIP-480, KIP-794,
the Java client's `BuiltInPartitioner` without adaptive load statistics): the
producer stays on one partition until at least `batch.size` bytes went to it and
the batch there is full (or twice `batch.size` went to it), then moves on. The
Java client moves to a random partition with a leader; this one moves to the
next partition with a leader in turn, so the spread is even and reproducible.
The first sticky partition of a topic is random, so producers do not start in
step.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from kafka.partitioner.default import murmur2 as _unsigned_murmur2


def murmur2(data: bytes) -> int:
    """Kafka's murmur2 hash of `data`, signed 32-bit as Java's `Utils.murmur2` returns it."""
    h = int(_unsigned_murmur2(data))
    return h - (1 << 32) if h & 0x80000000 else h


def key_partition(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner picks for a non-null key (`Utils.toPositive(murmur2) % n`)."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


@dataclass
class _Sticky:
    partition: int
    produced_bytes: int = 0


class StickyPartitioner:
    """The sticky partition of each topic for keyless records (KIP-794's uniform sticky partitioner)."""

    def __init__(self, batch_size: int) -> None:
        self.batch_size = max(batch_size, 1)
        self._sticky: dict[str, _Sticky] = {}

    def partition(self, topic: str, available: list[int], count: int) -> int:
        """The topic's current sticky partition; `available` are the partitions with a leader."""
        sticky = self._sticky.get(topic)
        if sticky is None or sticky.partition >= count:
            sticky = self._sticky[topic] = _Sticky(random.choice(available or range(count)))
        return sticky.partition

    def appended(self, topic: str, size: int, batch_full: bool, available: list[int], count: int) -> None:
        """Count `size` bytes sent to the sticky partition; switch once enough went there.

        Like the Java client, switch only when the batch just filled (so no batch is cut short),
        unless twice `batch.size` went to the partition.
        """
        sticky = self._sticky.get(topic)
        if sticky is None:
            return
        sticky.produced_bytes += size
        if (sticky.produced_bytes >= self.batch_size and batch_full) or sticky.produced_bytes >= 2 * self.batch_size:
            self._sticky[topic] = _Sticky(self._next(sticky.partition, available, count))

    @staticmethod
    def _next(current: int, available: list[int], count: int) -> int:
        candidates = sorted(available) or list(range(count))
        later = [p for p in candidates if p > current]
        return later[0] if later else candidates[0]


__all__ = ["StickyPartitioner", "key_partition", "murmur2"]
