"""Committed offsets of every group, as Kafka's OffsetMetadataManager keeps them.

Offsets are kept per group id, apart from the groups themselves, so a group that converts between the classic
and the consumer protocol keeps them as it is. Who may commit (generation, member, epoch) is the group
coordinator's to decide; this store checks only what every commit checks (the partition exists, the metadata
fits `offset.metadata.max.bytes`). Transactional commits are held per producer id until the transaction ends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..protocol.errors import ErrorCode
from .clock import Clock
from .config import BrokerConfig

TopicPartition = tuple[str, int]
# (topic, partition, offset, leader epoch, metadata) as OffsetCommit and TxnOffsetCommit carry them
OffsetCommitEntry = tuple[str, int, int, int, str | None]


@dataclass
class CommittedOffset:
    """A committed offset with its metadata and commit time."""

    offset: int
    leader_epoch: int
    metadata: str
    commit_timestamp: int


class OffsetMetadataManager:
    """Committed and pending transactional offsets of every group. Sans-IO: time comes from `clock`."""

    def __init__(self, config: BrokerConfig, clock: Clock, partition_exists: Callable[[str, int], bool]) -> None:
        self.config = config
        self.clock = clock
        self.partition_exists = partition_exists
        self._offsets: dict[str, dict[TopicPartition, CommittedOffset]] = {}
        # transactional commits waiting for their transaction's end: group id -> producer id -> offsets
        self._pending: dict[str, dict[int, dict[TopicPartition, CommittedOffset]]] = {}

    def commit_offsets(self, group_id: str, offsets: list[OffsetCommitEntry]) -> list[ErrorCode]:
        """OffsetCommit of a commit the coordinator allowed: one error per partition."""
        return self._store(self._offsets.setdefault(group_id, {}), offsets)

    def commit_transactional_offsets(self, group_id: str, producer_id: int,
                                     offsets: list[OffsetCommitEntry]) -> list[ErrorCode]:
        """TxnOffsetCommit: offsets held back until the producer's transaction ends.

        The producer's transaction counts as open in this group even if every partition was refused.
        """
        held = self._pending.setdefault(group_id, {}).setdefault(producer_id, {})
        return self._store(held, offsets)

    def _store(self, store: dict[TopicPartition, CommittedOffset], offsets: list[OffsetCommitEntry]) -> list[ErrorCode]:
        now = self.clock.now_ms()
        max_metadata = self.config["offset.metadata.max.bytes"]
        errors = []
        for topic, partition, offset, leader_epoch, metadata in offsets:
            if not self.partition_exists(topic, partition):
                errors.append(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
            elif metadata is not None and len(metadata.encode()) > max_metadata:
                errors.append(ErrorCode.OFFSET_METADATA_TOO_LARGE)
            else:
                store[(topic, partition)] = CommittedOffset(offset, leader_epoch, metadata or "", now)
                errors.append(ErrorCode.NONE)
        return errors

    def complete_transaction(self, group_id: str, producer_id: int, committed: bool) -> None:
        """replayEndTransactionMarker: the producer's held-back offsets become visible, or are dropped."""
        pending = self._pending.get(group_id, {})
        held = pending.pop(producer_id, {})
        if not pending:
            self._pending.pop(group_id, None)
        if committed and held:
            self._offsets.setdefault(group_id, {}).update(held)

    def has_pending_transactional_offsets(self, group_id: str) -> bool:
        """Whether a producer's transaction is open in this group (it keeps the group from being deleted)."""
        return bool(self._pending.get(group_id))

    def has_pending_transactional_offset(self, group_id: str, topic: str, partition: int) -> bool:
        """Whether an open transaction holds a commit for this partition (OffsetFetch require_stable)."""
        return any((topic, partition) in held for held in self._pending.get(group_id, {}).values())

    def pending_transactional_partitions(self, group_id: str) -> set[TopicPartition]:
        """The partitions any open transaction holds a commit for in this group."""
        return {key for held in self._pending.get(group_id, {}).values() for key in held}

    def has_offsets(self, group_id: str) -> bool:
        return bool(self._offsets.get(group_id))

    def fetch_offsets(self, group_id: str, partitions: list[TopicPartition] | None
                      ) -> list[tuple[str, int, CommittedOffset | None]]:
        """OffsetFetch: the committed offset of each partition (None if none); all of them if `partitions` is None."""
        offsets = self._offsets.get(group_id, {})
        if partitions is None:
            return [(topic, partition, committed) for (topic, partition), committed in sorted(offsets.items())]
        return [(topic, partition, offsets.get((topic, partition))) for topic, partition in partitions]

    def delete_offsets(self, group_id: str, partitions: list[TopicPartition], subscribed: set[str]) -> list[ErrorCode]:
        """OffsetDelete's per-partition outcome: a topic the group subscribes to keeps its offset
        (GROUP_SUBSCRIBED_TO_TOPIC); any other offset is dropped."""
        offsets = self._offsets.get(group_id, {})
        codes = []
        for topic, partition in partitions:
            if topic in subscribed:
                codes.append(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC)
            else:
                offsets.pop((topic, partition), None)
                codes.append(ErrorCode.NONE)
        return codes

    def delete_all_offsets(self, group_id: str) -> None:
        """A deleted group's committed offsets go with it."""
        self._offsets.pop(group_id, None)
        self._pending.pop(group_id, None)

    def cleanup_expired_offsets(self, group_id: str, base_timestamp_ms: int) -> bool:
        """Drop offsets older than `offsets.retention.minutes`, counted from their commit or from
        `base_timestamp_ms` (when the group became empty), whichever is later. True when the group
        has neither committed nor pending offsets left, so it may go."""
        now = self.clock.now_ms()
        retention_ms = self.config["offsets.retention.minutes"] * 60_000
        offsets = self._offsets.get(group_id, {})
        for key, committed in list(offsets.items()):
            if now - max(committed.commit_timestamp, base_timestamp_ms) >= retention_ms:
                del offsets[key]
        if not offsets:
            self._offsets.pop(group_id, None)
        return not offsets and not self.has_pending_transactional_offsets(group_id)

    def on_partitions_deleted(self, topic: str) -> None:
        """Drop every group's committed offsets of a deleted topic."""
        for offsets in self._offsets.values():
            for key in [key for key in offsets if key[0] == topic]:
                del offsets[key]
