"""The group coordinator: every group of the cluster by its id, routed to the coordinator of its type.

A group id names one group, classic (classic_coordinator.py runs its rebalance over classic_group.py's model),
KIP-848 consumer (consumer_groups.py) or KIP-1071 streams (streams_groups.py); this coordinator routes each
request to the one that holds the id, as Kafka's GroupMetadataManager does, converts groups between classic and
consumer (group_conversion.py), checks who may commit offsets and leaves their storage to the
OffsetMetadataManager (offset_metadata.py). A streams group converts to no other type.

An empty group of one type becomes a group of the other when a member of the other protocol joins it, as
Kafka 4 converts it; non-empty groups migrate online under `group.consumer.migration.policy`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..protocol.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    decode_subscription,
    encode_assignment,
    subscription_owned,
)
from ..protocol.errors import ErrorCode
from .classic_coordinator import ClassicGroupCoordinator, JoinRequestDetails, JoinResult, SyncResult
from .classic_group import Group, GroupState
from .clock import Clock
from .config import BrokerConfig
from .consumer_groups import (
    ConsumerGroup,
    ConsumerGroupCoordinator,
    HeartbeatResult,
    member_topics,
    new_member_id,
)
from .group_conversion import (
    classic_group_from_consumer,
    consumer_group_from_classic,
    may_downgrade,
    online_upgrade_refusal,
)
from .modern_groups import HeartbeatError
from .offset_metadata import CommittedOffset, OffsetCommitEntry, OffsetMetadataManager
from .pending import Pending
from .streams_groups import HeartbeatResult as StreamsHeartbeatResult
from .streams_groups import StreamsGroup, StreamsGroupCoordinator


class GroupCoordinator:
    """Every group of the cluster, classic or consumer, by its id. Sans-IO: time comes from `clock`."""

    def __init__(self, config: BrokerConfig, clock: Clock, partition_exists: Callable[[str, int], bool],
                 next_offset_expiry_check: int | None = None) -> None:
        """`next_offset_expiry_check`: when the first sweep of expired offsets is due (the Cluster builds its
        coordinator on first use, with the schedule it kept since start-up); None: one check interval from now."""
        self.config = config
        self.clock = clock
        self.partition_exists = partition_exists
        self.classic = ClassicGroupCoordinator(config, clock)
        self.consumer = ConsumerGroupCoordinator(config, clock)
        self.streams = StreamsGroupCoordinator(config, clock)  # KIP-1071 streams groups (streams_groups.py)
        # committed offsets are kept per group id, whichever type of group holds that id
        self.offset_metadata = OffsetMetadataManager(config, clock, partition_exists)
        # Kafka schedules the first sweep one check interval after the coordinator loads, not at once: a sweep
        # on the first tick deleted a group whose only member was between its KIP-394 joins
        self._next_offset_expiry_check = (clock.now_ms() + config["offsets.retention.check.interval.ms"]
                                          if next_offset_expiry_check is None else next_offset_expiry_check)

    @property
    def groups(self) -> dict[str, Group]:
        """The classic groups by id (the classic coordinator's)."""
        return self.classic.groups

    # -- looking groups up (what the admin APIs read) -------------------------------------------

    def classic_group(self, group_id: str) -> Group | None:
        return self.classic.groups.get(group_id)

    def consumer_group(self, group_id: str) -> ConsumerGroup | None:
        return self.consumer.groups.get(group_id)

    def streams_group(self, group_id: str) -> StreamsGroup | None:
        return self.streams.groups.get(group_id)

    def classic_groups(self) -> list[Group]:
        return list(self.classic.groups.values())

    def consumer_groups(self) -> list[ConsumerGroup]:
        return list(self.consumer.groups.values())

    def streams_groups(self) -> list[StreamsGroup]:
        return list(self.streams.groups.values())

    # -- KIP-848 -------------------------------------------------------------------------

    def consumer_heartbeat(self, group_id: str, member_id: str, member_epoch: int,
                           **details: Any) -> HeartbeatResult:
        """ConsumerGroupHeartbeat; a classic group of that id becomes a consumer group (getOrMaybeCreateConsumerGroup).

        An empty classic group is replaced; a non-empty one is upgraded online when the migration policy and
        the group allow it, and stays classic if the heartbeat is refused.
        """
        if group_id in self.streams.groups:
            return HeartbeatResult(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group.")
        classic = self.groups.get(group_id)
        if classic is None:
            result = self.consumer.heartbeat(group_id, member_id, member_epoch, **details)
            self._downgrade_candidates()
            return result
        if member_epoch != 0:
            return HeartbeatResult(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a consumer group")
        if classic.members or classic.state is not GroupState.EMPTY:
            refusal = online_upgrade_refusal(classic, self.config)
            if refusal is not None:
                return HeartbeatResult(ErrorCode.GROUP_ID_NOT_FOUND, refusal)
        del self.groups[group_id]
        converted = self.consumer.groups[group_id] = consumer_group_from_classic(classic, self.clock.now_ms())
        result = self.consumer.heartbeat(group_id, member_id, member_epoch, **details)
        if result.error is not ErrorCode.NONE and self.consumer.groups.get(group_id) is converted:
            # Kafka writes the conversion with the heartbeat's records: a refused heartbeat converts nothing
            del self.consumer.groups[group_id]
            self.groups[group_id] = classic
            return result
        self.classic.answer_all_waiters(classic, ErrorCode.REBALANCE_IN_PROGRESS)
        self._downgrade_candidates()
        return result

    def _downgrade_candidates(self) -> None:
        """Consumer groups that lost members: convert those left with only classic members (online downgrade)."""
        candidates, self.consumer.downgrade_candidates = self.consumer.downgrade_candidates, {}
        for group_id, epoch in candidates.items():
            modern = self.consumer.groups.get(group_id)
            if modern is not None and may_downgrade(modern, self.config):
                self._to_classic_group(modern, epoch)

    def _to_classic_group(self, modern: ConsumerGroup, generation_id: int, rebalance: bool = True) -> None:
        """convertToClassicGroup, then a rebalance the members rejoin for."""
        group = classic_group_from_consumer(modern, generation_id, self.clock.now_ms())
        del self.consumer.groups[modern.group_id]
        self.groups[modern.group_id] = group
        if rebalance:
            self.classic.prepare_rebalance(group)

    # -- KIP-1071 ------------------------------------------------------------------------

    def group_type(self, group_id: str) -> str | None:
        """Which kind of group holds `group_id`: "classic", "consumer", "streams", or None."""
        if group_id in self.groups:
            return "classic"
        if group_id in self.consumer.groups:
            return "consumer"
        if group_id in self.streams.groups:
            return "streams"
        return None

    def streams_heartbeat(self, group_id: str, member_id: str, member_epoch: int,
                          **details: Any) -> StreamsHeartbeatResult:
        """StreamsGroupHeartbeat; a group id of another type is refused (getOrCreateStreamsGroup), except an
        empty classic group, which a joining streams member replaces."""
        kind = self.group_type(group_id)
        if kind not in (None, "streams"):
            classic = self.groups.get(group_id)
            if member_epoch == 0 and classic is not None and not classic.members \
                    and classic.state is GroupState.EMPTY:
                del self.groups[group_id]
                result = self.streams.heartbeat(group_id, member_id, member_epoch, **details)
                if result.error is not ErrorCode.NONE and group_id not in self.streams.groups:
                    self.groups[group_id] = classic
                return result
            return StreamsHeartbeatResult(ErrorCode.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a streams group.")
        return self.streams.heartbeat(group_id, member_id, member_epoch, **details)

    # -- join ------------------------------------------------------------------------

    def join(
        self,
        group_id: str,
        member_id: str,
        group_instance_id: str | None,
        client_id: str,
        client_host: str,
        session_timeout_ms: int,
        rebalance_timeout_ms: int,
        protocol_type: str,
        protocols: list[tuple[str, bytes]],
        require_known_member_id: bool,
        supports_skip_assignment: bool,
        topics: Mapping[str, int] | None = None,
    ) -> JoinResult | Pending:
        """JoinGroup: a result now, or a Pending completed when the rebalance's join phase ends.

        `topics` (name -> partition count) is what a classic member of a consumer group is assigned from.
        """
        if not group_id:
            return JoinResult(ErrorCode.INVALID_GROUP_ID, member_id)
        if not (self.config["group.min.session.timeout.ms"] <= session_timeout_ms
                <= self.config["group.max.session.timeout.ms"]):
            return JoinResult(ErrorCode.INVALID_SESSION_TIMEOUT, member_id)
        if not protocol_type or not protocols:
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id)
        if sum(len(metadata) for _name, metadata in protocols) > self.config["message.max.bytes"]:
            # Kafka could not write this member to __consumer_offsets (MESSAGE_TOO_LARGE), which its
            # coordinator reports as UNKNOWN_SERVER_ERROR.
            return JoinResult(ErrorCode.UNKNOWN_SERVER_ERROR, member_id)
        if rebalance_timeout_ms < 0:
            rebalance_timeout_ms = session_timeout_ms  # JoinGroup v0 has no rebalance timeout
        details = JoinRequestDetails(client_id, client_host, session_timeout_ms, rebalance_timeout_ms, protocol_type,
                                     protocols)
        if group_id in self.streams.groups:
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id)  # Kafka 4.3.1's answer
        modern = self.consumer.groups.get(group_id)
        if modern is not None:
            if modern.members:
                return self._join_consumer_group(modern, member_id, group_instance_id, details,
                                                 require_known_member_id, topics or {})
            if not member_id:
                del self.consumer.groups[group_id]  # an empty consumer group becomes a classic one
                self.classic.create_group(group_id)
        return self.classic.join(group_id, member_id, group_instance_id, details, require_known_member_id,
                                 supports_skip_assignment)

    def _join_consumer_group(self, group: ConsumerGroup, member_id: str, group_instance_id: str | None,
                             details: JoinRequestDetails, require_known_member_id: bool,
                             topics: Mapping[str, int]) -> JoinResult:
        """classicGroupJoinToConsumerGroup: a classic member of a consumer group, answered at once."""
        protocols = details.protocols
        unknown = not member_id
        requested = member_id  # what these two refusals answer: Kafka draws a member id only after them
        if unknown:
            member_id = new_member_id()
        known = member_id in group.members or (
            group_instance_id is not None and group_instance_id in group.static_members)
        if not known and len(group.members) >= self.config["group.consumer.max.size"]:
            return JoinResult(ErrorCode.GROUP_MAX_SIZE_REACHED, requested)
        if not group.supports_classic_protocols(details.protocol_type, {name for name, _ in protocols}):
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, requested)
        if unknown and group_instance_id is None and require_known_member_id:
            return JoinResult(ErrorCode.MEMBER_ID_REQUIRED, member_id)  # KIP-394, nothing kept until it rejoins
        try:
            subscription = decode_subscription(protocols[0][1])
        except ValueError:
            # Kafka fails such a join with an internal error; a blob we cannot read is the member's inconsistency
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id)
        replaced = group.static_member(group_instance_id) if group_instance_id is not None and unknown else None
        try:
            member = self.consumer.classic_join(
                group, member_id, unknown, group_instance_id, getattr(subscription, "rack_id", None),
                details.rebalance_timeout_ms, details.session_timeout_ms, protocols, list(subscription.topics or []),
                subscription_owned(subscription), details.client_id, details.client_host, topics)
        except HeartbeatError as exc:
            return JoinResult(exc.code, member_id)
        if replaced is not None and may_downgrade(group, self.config):
            # validateOnlineDowngradeWithReplacedMemberId: a classic static member took the place of the last
            # consumer-protocol member; the group becomes classic as it is, without a rebalance
            self._to_classic_group(group, group.group_epoch, rebalance=False)
        return JoinResult(ErrorCode.NONE, member.member_id, member.member_epoch, CONSUMER_PROTOCOL_TYPE,
                          protocols[0][0], "", False, [])

    # -- sync, heartbeat, leave -----------------------------------------------------------

    def sync(self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None,
             protocol_type: str | None, protocol_name: str | None,
             assignments: list[tuple[str, bytes]]) -> SyncResult | Pending:
        """SyncGroup: the member's assignment now, or once the leader has sent them."""
        modern = self.consumer.groups.get(group_id)
        if modern is not None:
            if not modern.members:
                return SyncResult(ErrorCode.UNKNOWN_MEMBER_ID)
            try:
                synced = self.consumer.classic_sync(modern, member_id, group_instance_id, generation_id,
                                                    protocol_type, protocol_name)
            except HeartbeatError as exc:
                return SyncResult(exc.code)
            assert synced.classic is not None
            # classicGroupSyncToConsumerGroup answers with the request's own protocol type and name
            return SyncResult(ErrorCode.NONE, protocol_type, protocol_name,
                              encode_assignment(synced.assigned, synced.classic.protocols))
        return self.classic.sync(group_id, generation_id, member_id, group_instance_id, protocol_type, protocol_name,
                                 assignments)

    def heartbeat(self, group_id: str, generation_id: int, member_id: str,
                  group_instance_id: str | None) -> ErrorCode:
        """Heartbeat: keeps the session alive; tells members of a rebalance."""
        modern = self.consumer.groups.get(group_id)
        if modern is not None:
            try:
                return self.consumer.classic_heartbeat(modern, member_id, group_instance_id, generation_id)
            except HeartbeatError as exc:
                return exc.code
        return self.classic.heartbeat(group_id, generation_id, member_id, group_instance_id)

    def leave(self, group_id: str, members: list[tuple[str, str | None]]) -> tuple[ErrorCode, list[ErrorCode]]:
        """LeaveGroup: (group error, one error per leaving member)."""
        modern = self.consumer.groups.get(group_id)
        if modern is not None:
            codes = [self.consumer.classic_leave(modern, member_id, instance_id) for member_id, instance_id in members]
            self._downgrade_candidates()
            return ErrorCode.NONE, codes
        return self.classic.leave(group_id, members)

    # -- time ------------------------------------------------------------------------------

    def tick(self) -> None:
        """Expire sessions, end overdue rebalances, drop expired offsets."""
        self.consumer.tick()
        self.streams.tick()
        self._downgrade_candidates()
        self.classic.tick()
        now = self.clock.now_ms()
        if now >= self._next_offset_expiry_check:
            self._next_offset_expiry_check = now + self.config["offsets.retention.check.interval.ms"]
            self.expire_offsets()

    def expire_offsets(self) -> None:
        """Drop offsets of groups empty for longer than `offsets.retention.minutes` (Kafka's rule), and the
        empty groups left with none."""
        for group in list(self.groups.values()):
            if group.state is not GroupState.EMPTY:
                continue
            all_expired = self.offset_metadata.cleanup_expired_offsets(group.group_id, group.state_timestamp_ms)
            if all_expired and not group.members:
                group.transition_to(GroupState.DEAD)
                del self.groups[group.group_id]
        for modern in list(self.consumer.groups.values()):
            if modern.members:
                continue
            if self.offset_metadata.cleanup_expired_offsets(modern.group_id, modern.state_timestamp_ms):
                del self.consumer.groups[modern.group_id]
        for streams in list(self.streams.groups.values()):
            if not streams.members and self.offset_metadata.cleanup_expired_offsets(streams.group_id,
                                                                                     streams.state_timestamp_ms):
                del self.streams.groups[streams.group_id]

    # -- offsets -----------------------------------------------------------------------------

    def commit_offsets(self, group_id: str, generation_id: int, member_id: str, group_instance_id: str | None,
                       offsets: list[OffsetCommitEntry],
                       unknown_group_error: ErrorCode = ErrorCode.ILLEGAL_GENERATION,
                       api_version: int | None = None) -> list[ErrorCode]:
        """OffsetCommit: one error per (topic, partition, offset, leader epoch, metadata).

        `unknown_group_error` answers a generation for a group that does not exist (the caller picks it by
        version: OffsetMetadataManager.validateOffsetCommit answers GROUP_ID_NOT_FOUND from OffsetCommit v9).
        """
        # The empty group id is a group like any other: GroupCoordinatorService.commitOffsets refuses only null.
        modern = self.consumer.groups.get(group_id)
        if modern is not None:
            # KIP-848: the generation is the member epoch (ConsumerGroup.validateOffsetCommit)
            code = self.consumer.validate_offset_commit(modern, member_id, generation_id, api_version)
            if code is not ErrorCode.NONE:
                return [code for _ in offsets]
            return self.offset_metadata.commit_offsets(group_id, offsets)
        streams = self.streams.groups.get(group_id)
        if streams is not None:
            # KIP-1071: the generation is the member epoch (StreamsGroup.validateOffsetCommit)
            code = self.streams.validate_offset_commit(streams, member_id, generation_id, api_version=api_version)
            if code is not ErrorCode.NONE:
                return [code for _ in offsets]
            return self.offset_metadata.commit_offsets(group_id, offsets)
        group = self.groups.get(group_id)
        error = ErrorCode.NONE
        if group is None:
            if generation_id < 0:
                # a simple group, created by its first manual commit
                group = self.classic.create_group(group_id)
            else:
                error = unknown_group_error
        if group is not None and error is ErrorCode.NONE:
            error = self.classic.validate_offset_commit(group, generation_id, member_id, group_instance_id)
        if error is not ErrorCode.NONE:
            return [error for _ in offsets]
        assert group is not None
        member = group.members.get(member_id)
        if member is not None:
            self.classic.touch(member)
        return self.offset_metadata.commit_offsets(group_id, offsets)

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        """OffsetFetch v9+: a consumer group's member must fetch at its current epoch (STALE_MEMBER_EPOCH)."""
        streams = self.streams.groups.get(group_id)
        if streams is not None:
            return self.streams.validate_offset_fetch(streams, member_id, member_epoch)
        modern = self.consumer.groups.get(group_id)
        if modern is None:
            return ErrorCode.NONE  # classic groups do not check (ClassicGroup.validateOffsetFetch)
        return self.consumer.validate_offset_fetch(modern, member_id, member_epoch)

    def commit_txn_offsets(self, group_id: str, producer_id: int, generation_id: int, member_id: str,
                           group_instance_id: str | None, offsets: list[OffsetCommitEntry]) -> list[ErrorCode]:
        """TxnOffsetCommit: offsets held back until the producer's transaction commits."""
        modern = self.consumer.groups.get(group_id)
        if modern is not None:
            code = ErrorCode.NONE
            if generation_id >= 0 or member_id:
                code = self.consumer.validate_offset_commit(modern, member_id, generation_id, None)
            if code is not ErrorCode.NONE:
                return [code for _ in offsets]
            return self.offset_metadata.commit_transactional_offsets(group_id, producer_id, offsets)
        streams = self.streams.groups.get(group_id)
        if streams is not None:
            code = ErrorCode.NONE
            if generation_id >= 0 or member_id:
                code = self.streams.validate_offset_commit(streams, member_id, generation_id, transactional=True)
            if code is not ErrorCode.NONE:
                return [code for _ in offsets]
            return self.offset_metadata.commit_transactional_offsets(group_id, producer_id, offsets)
        group = self.groups.get(group_id)
        error = ErrorCode.NONE
        if group is None:
            group = self.classic.create_group(group_id)
        if generation_id >= 0 or member_id:
            error = self.classic.validate_offset_commit(group, generation_id, member_id, group_instance_id)
        elif group.state is GroupState.DEAD:
            error = ErrorCode.COORDINATOR_NOT_AVAILABLE
        if error is not ErrorCode.NONE:
            return [error for _ in offsets]
        return self.offset_metadata.commit_transactional_offsets(group_id, producer_id, offsets)

    def complete_txn_offsets(self, group_id: str, producer_id: int, committed: bool) -> None:
        """The producer's transaction ended: its held-back offsets become visible, or are dropped."""
        if self._group_exists(group_id):
            self.offset_metadata.complete_transaction(group_id, producer_id, committed)

    def has_pending_txn_offset(self, group_id: str, topic: str, partition: int) -> bool:
        """Whether an open transaction holds a commit for this partition (OffsetFetch require_stable)."""
        return self.offset_metadata.has_pending_transactional_offset(group_id, topic, partition)

    def fetch_offsets(self, group_id: str, partitions: list[tuple[str, int]] | None
                      ) -> list[tuple[str, int, CommittedOffset | None]]:
        """OffsetFetch: the committed offset of each partition (None if none); all of them if `partitions` is None."""
        return self.offset_metadata.fetch_offsets(group_id, partitions)

    def delete_offsets(self, group_id: str, partitions: list[tuple[str, int]]) -> tuple[ErrorCode, list[ErrorCode]]:
        """OffsetDelete: (group error, one error per partition)."""
        modern = self.consumer.groups.get(group_id)
        if modern is not None:
            subscribed_now: set[str] = set()
            for member in modern.members.values():
                subscribed_now |= member_topics(member, modern.subscribed_partition_counts)
            return ErrorCode.NONE, self.offset_metadata.delete_offsets(group_id, partitions, subscribed_now)
        streams = self.streams.groups.get(group_id)
        if streams is not None:
            # the topics a streams group reads while it has members (StreamsGroup.isSubscribedToTopic)
            reading: set[str] = set()
            if streams.members and streams.topology is not None:
                for sub in streams.topology.subtopologies:
                    reading.update(sub.all_source_names())
            return ErrorCode.NONE, self.offset_metadata.delete_offsets(group_id, partitions, reading)
        group = self.groups.get(group_id)
        if group is None or group.state is GroupState.DEAD:
            return ErrorCode.GROUP_ID_NOT_FOUND, []
        subscribed: set[str] = set()
        if group.state is not GroupState.EMPTY:
            topics = group.subscribed_topics()
            if topics is None:
                return ErrorCode.NON_EMPTY_GROUP, []
            subscribed = topics
        return ErrorCode.NONE, self.offset_metadata.delete_offsets(group_id, partitions, subscribed)

    # -- admin -------------------------------------------------------------------------------

    def _group_exists(self, group_id: str) -> bool:
        return group_id in self.groups or group_id in self.consumer.groups or group_id in self.streams.groups

    def delete_groups(self, group_ids: list[str]) -> list[ErrorCode]:
        """DeleteGroups: one error per group id."""
        errors = []
        for group_id in group_ids:
            # GroupCoordinatorService.deleteGroups refuses only a null id: "" is looked up like any other
            errors.append(self._delete_group(group_id))
        return errors

    def _delete_group(self, group_id: str) -> ErrorCode:
        """One group of DeleteGroups, with its committed offsets (GroupMetadataManager.deleteGroup)."""
        open_transaction = self.offset_metadata.has_pending_transactional_offsets(group_id)
        for modern_groups in (self.consumer.groups, self.streams.groups):
            # ConsumerGroup and StreamsGroup.validateDeleteGroup: only an empty group goes
            modern = modern_groups.get(group_id)
            if modern is not None:
                if modern.members or open_transaction:
                    return ErrorCode.NON_EMPTY_GROUP
                del modern_groups[group_id]
                self.offset_metadata.delete_all_offsets(group_id)
                return ErrorCode.NONE
        group = self.groups.get(group_id)
        if group is None or group.state is GroupState.DEAD:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if group.state is not GroupState.EMPTY or open_transaction:
            return ErrorCode.NON_EMPTY_GROUP
        group.transition_to(GroupState.DEAD)
        del self.groups[group_id]
        self.offset_metadata.delete_all_offsets(group_id)
        return ErrorCode.NONE

    def forget_topic(self, topic: str) -> None:
        """Drop committed offsets of a deleted topic."""
        self.offset_metadata.on_partitions_deleted(topic)
