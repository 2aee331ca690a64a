"""The group coordinator: every group of the cluster by its id, and the classic rebalance protocol.

A group id names one group, classic (classic_group.py) or KIP-848 consumer (consumer_groups.py); this
coordinator routes each request to the group that holds the id, as Kafka's GroupMetadataManager does, converts
groups between the two types (group_conversion.py), checks who may commit offsets and leaves their storage to
the OffsetMetadataManager (offset_metadata.py).

Classic states: Empty, PreparingRebalance, CompletingRebalance, Stable, Dead. A join
completes as soon as every known member has rejoined (with
`group.initial.rebalance.delay.ms` after it was Empty: Kafka's 3000 by default, 0 in test brokers), or
at the rebalance timeout, when members that did not rejoin are dropped.
Session and rebalance deadlines are read from the clock on `tick`, so tests
move time by hand. JoinGroup and SyncGroup answers that must wait are
`Pending`s the coordinator completes.

An empty group of one type becomes a group of the other when a member of the other protocol joins it, as
Kafka 4 converts it; non-empty groups migrate online under `group.consumer.migration.policy`.

Over 500 lines: beside the routing, it holds the classic rebalance (join, sync, heartbeat, leave and their
deadlines on `tick`), one state machine over a Group and its members' Pendings that Kafka's
GroupMetadataManager also keeps with the routing. Its seam, should it grow, is a classic-group coordinator
beside consumer_groups.py's, with this file left routing, converting and checking commits.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..protocol.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    decode_subscription,
    encode_assignment,
    subscription_owned,
)
from ..protocol.errors import ErrorCode
from .classic_group import Group, GroupState, Member
from .clock import Clock
from .config import BrokerConfig
from .consumer_groups import (
    ConsumerGroup,
    ConsumerGroupCoordinator,
    HeartbeatError,
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
from .offset_metadata import CommittedOffset, OffsetCommitEntry, OffsetMetadataManager
from .pending import Pending

# A waiting JoinGroup/SyncGroup is a safety net only: the coordinator answers it at the
# rebalance or session deadline, well before this extra margin runs out.
_WAIT_MARGIN_MS = 30_000


@dataclass
class JoinResult:
    """What a JoinGroup answers."""

    error: ErrorCode
    member_id: str = ""
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    skip_assignment: bool = False
    members: list[tuple[str, str | None, bytes]] = field(default_factory=list)


@dataclass
class SyncResult:
    """What a SyncGroup answers."""

    error: ErrorCode
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass(frozen=True)
class JoinRequestDetails:
    """What a JoinGroup says of the member, kept on it when it joins or rejoins."""

    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]


class GroupCoordinator:
    """Every group of the cluster, classic or consumer, by its id. Sans-IO: time comes from `clock`."""

    def __init__(self, config: BrokerConfig, clock: Clock,
                 partition_exists: Callable[[str, int], bool]) -> None:
        self.config = config
        self.clock = clock
        self.partition_exists = partition_exists
        self.groups: dict[str, Group] = {}
        self.consumer = ConsumerGroupCoordinator(config, clock)
        # committed offsets are kept per group id, whichever type of group holds that id
        self.offset_metadata = OffsetMetadataManager(config, clock, partition_exists)
        # Kafka schedules the first sweep one check interval after the coordinator loads, not at once: a sweep
        # on the first tick deleted a group whose only member was between its KIP-394 joins
        self._next_offset_expiry_check = clock.now_ms() + config["offsets.retention.check.interval.ms"]

    # -- KIP-848 -------------------------------------------------------------------------

    def consumer_heartbeat(self, group_id: str, member_id: str, member_epoch: int,
                           **details: Any) -> HeartbeatResult:
        """ConsumerGroupHeartbeat; a classic group of that id becomes a consumer group (getOrMaybeCreateConsumerGroup).

        An empty classic group is replaced; a non-empty one is upgraded online when the migration policy and
        the group allow it, and stays classic if the heartbeat is refused.
        """
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
        self._answer_all_waiters(classic, ErrorCode.REBALANCE_IN_PROGRESS)
        self._downgrade_candidates()
        return result

    def _answer_all_waiters(self, classic: Group, error: ErrorCode) -> None:
        """completeAllJoinFutures / completeAllSyncFutures of a group converted away."""
        for member in classic.members.values():
            self._answer_join(member, JoinResult(error, member.member_id))
            self._answer_sync(member, SyncResult(error))

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
            self._prepare_rebalance(group)

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
        modern = self.consumer.groups.get(group_id)
        if modern is not None:
            if modern.members:
                return self._join_consumer_group(modern, member_id, group_instance_id, details,
                                                 require_known_member_id, topics or {})
            if not member_id:
                del self.consumer.groups[group_id]  # an empty consumer group becomes a classic one
                self.groups[group_id] = Group(group_id, state_timestamp_ms=self.clock.now_ms())
        group = self.groups.get(group_id)
        if group is None:
            if member_id:
                return JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id)
            group = self.groups[group_id] = Group(group_id, state_timestamp_ms=self.clock.now_ms())
        if group.state is GroupState.DEAD:
            return JoinResult(ErrorCode.COORDINATOR_NOT_AVAILABLE, member_id)
        if not group.supports(protocol_type, protocols):
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id)
        if group.is_static_member_fenced(group_instance_id, member_id) and member_id:
            return JoinResult(ErrorCode.FENCED_INSTANCE_ID, member_id)
        if not member_id:
            return self._join_new_member(group, group_instance_id, details, require_known_member_id,
                                         supports_skip_assignment)
        return self._join_known_member(group, member_id, group_instance_id, details)

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
        replaced_id = group.static_members.get(group_instance_id) if group_instance_id is not None else None
        replaced = group.members.get(replaced_id) if replaced_id is not None and unknown else None
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

    def _join_new_member(self, group: Group, group_instance_id: str | None, details: JoinRequestDetails,
                         require_known_member_id: bool, supports_skip_assignment: bool) -> JoinResult | Pending:
        new_id = f"{group_instance_id or details.client_id}-{uuid.uuid4()}"
        if group_instance_id is not None:
            old_id = group.static_members.get(group_instance_id)
            if old_id is not None and old_id in group.members:
                return self._replace_static_member(group, old_id, new_id, details, supports_skip_assignment)
        elif require_known_member_id:
            # KIP-394: hand out the id first; the member joins with it next.
            group.pending_members[new_id] = self.clock.now_ms() + details.session_timeout_ms
            return JoinResult(ErrorCode.MEMBER_ID_REQUIRED, new_id)
        if len(group.members) >= self.config["group.max.size"]:
            return JoinResult(ErrorCode.GROUP_MAX_SIZE_REACHED, new_id)
        member = self._new_member(new_id, group_instance_id, details)
        return self._add_member_and_rebalance(group, member)

    def _join_known_member(self, group: Group, member_id: str, group_instance_id: str | None,
                           details: JoinRequestDetails) -> JoinResult | Pending:
        if member_id in group.pending_members:
            del group.pending_members[member_id]
            if len(group.members) >= self.config["group.max.size"]:
                return JoinResult(ErrorCode.GROUP_MAX_SIZE_REACHED, member_id)
            return self._add_member_and_rebalance(group, self._new_member(member_id, group_instance_id, details))
        member = group.members.get(member_id)
        if member is None or group.state in (GroupState.EMPTY, GroupState.DEAD):
            return JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id)
        self._touch(member)
        if group.state is GroupState.PREPARING_REBALANCE:
            self._update_member(member, details)
            pending = self._wait_for_join(member)
            self._try_complete_join(group)
            return pending
        same = member.protocols == details.protocols
        if group.state is GroupState.COMPLETING_REBALANCE and same:
            return self._current_generation(group, member)
        if group.state is GroupState.STABLE and same and member.member_id != group.leader_id:
            return self._current_generation(group, member)
        self._update_member(member, details)
        pending = self._wait_for_join(member)
        self._prepare_rebalance(group)
        self._try_complete_join(group)
        return pending

    def _replace_static_member(self, group: Group, old_id: str, new_id: str, details: JoinRequestDetails,
                               supports_skip_assignment: bool) -> JoinResult | Pending:
        """KIP-345: a restarted static member takes over its old entry, without a rebalance when possible."""
        old = group.members.pop(old_id)
        self._answer_join(old, JoinResult(ErrorCode.FENCED_INSTANCE_ID, old_id))
        self._answer_sync(old, SyncResult(ErrorCode.FENCED_INSTANCE_ID))
        member = old
        member.member_id = new_id
        group.members[new_id] = member
        assert member.group_instance_id is not None
        group.static_members[member.group_instance_id] = new_id
        was_leader = group.leader_id == old_id
        if was_leader:
            group.leader_id = new_id
        self._update_member(member, details)
        self._touch(member)
        if group.state is GroupState.STABLE and group.select_protocol() == group.protocol_name:
            # As Kafka's updateStaticMemberAndRebalance: no rebalance while the chosen protocol stays.
            if was_leader and supports_skip_assignment:
                result = self._generation_result(group, member, include_members=True)
                result.skip_assignment = True  # KIP-814: the leader must not reassign
                return result
            result = self._generation_result(group, member, include_members=False)
            if was_leader:
                result.leader = old_id  # an older client then acts as a follower and keeps its assignment
            return result
        if group.state is GroupState.PREPARING_REBALANCE:
            pending = self._wait_for_join(member)
            self._try_complete_join(group)
            return pending
        pending = self._wait_for_join(member)
        self._prepare_rebalance(group)
        self._try_complete_join(group)
        return pending

    @staticmethod
    def _new_member(member_id: str, group_instance_id: str | None, details: JoinRequestDetails) -> Member:
        return Member(member_id, group_instance_id, details.client_id, details.client_host,
                      details.session_timeout_ms, details.rebalance_timeout_ms, details.protocol_type,
                      list(details.protocols))

    @staticmethod
    def _update_member(member: Member, details: JoinRequestDetails) -> None:
        """A rejoin updates the timeouts and protocols; the client id and host stay as first joined."""
        member.session_timeout_ms = details.session_timeout_ms
        member.rebalance_timeout_ms = details.rebalance_timeout_ms
        member.protocols = list(details.protocols)

    def _touch(self, member: Member) -> None:
        member.session_deadline_ms = self.clock.now_ms() + member.session_timeout_ms

    def _add_member_and_rebalance(self, group: Group, member: Member) -> Pending:
        if not group.members:
            group.protocol_type = member.protocol_type
        group.members[member.member_id] = member
        if member.group_instance_id is not None:
            group.static_members[member.group_instance_id] = member.member_id
        self._touch(member)
        pending = self._wait_for_join(member)
        if group.state is not GroupState.PREPARING_REBALANCE:
            self._prepare_rebalance(group)
        self._try_complete_join(group)
        return pending

    def _wait_for_join(self, member: Member) -> Pending:
        if member.join_waiter is not None and not member.join_waiter.done:
            # a member re-sending JoinGroup while one is outstanding: answer the old one first
            self._answer_join(member, JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member.member_id))
        # answered with its result by _answer_join; a wait that reaches its deadline is told to rejoin
        waiter = Pending(lambda: JoinResult(ErrorCode.REBALANCE_IN_PROGRESS, member.member_id),
                         self.clock.now_ms() + member.rebalance_timeout_ms + _WAIT_MARGIN_MS)
        member.join_waiter = waiter
        return waiter

    @staticmethod
    def _answer_join(member: Member, result: JoinResult) -> None:
        waiter = member.join_waiter
        member.join_waiter = None
        if waiter is not None and not waiter.done:
            waiter.complete(result)

    @staticmethod
    def _answer_sync(member: Member, result: SyncResult) -> None:
        waiter = member.sync_waiter
        member.sync_waiter = None
        if waiter is not None and not waiter.done:
            waiter.complete(result)

    def _prepare_rebalance(self, group: Group) -> None:
        if group.state is GroupState.COMPLETING_REBALANCE:
            for member in group.members.values():
                self._answer_sync(member, SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
        now = self.clock.now_ms()
        if group.state is GroupState.EMPTY:
            group.join_not_before_ms = now + self.config["group.initial.rebalance.delay.ms"]
        group.state = GroupState.PREPARING_REBALANCE
        group.state_timestamp_ms = now
        group.rebalance_deadline_ms = now + max(group.rebalance_timeout_ms(),
                                                self.config["group.initial.rebalance.delay.ms"])

    def _try_complete_join(self, group: Group) -> None:
        if (group.state is GroupState.PREPARING_REBALANCE and group.all_members_joined()
                and self.clock.now_ms() >= group.join_not_before_ms):
            self._complete_join(group)

    def _complete_join(self, group: Group) -> None:
        """End the join phase: drop dynamic members that did not rejoin, start the next generation."""
        for member in [m for m in group.members.values() if m.join_waiter is None]:
            if member.group_instance_id is None:
                self._remove_member(group, member)
        group.pending_members.clear()
        group.generation_id += 1
        now = self.clock.now_ms()
        group.state_timestamp_ms = now
        if not group.members:
            group.state = GroupState.EMPTY
            group.protocol_name = None
            group.leader_id = None
            return
        group.protocol_name = group.select_protocol()
        if group.leader_id not in group.members:
            group.leader_id = next(iter(group.members))
        group.state = GroupState.COMPLETING_REBALANCE
        group.rebalance_deadline_ms = now + group.rebalance_timeout_ms()
        for member in group.members.values():
            member.assignment = b""
            self._touch(member)
            self._answer_join(member, self._generation_result(
                group, member, include_members=member.member_id == group.leader_id))

    def _generation_result(self, group: Group, member: Member, include_members: bool) -> JoinResult:
        members = []
        if include_members:
            members = [(m.member_id, m.group_instance_id, m.metadata_for(group.protocol_name))
                       for m in group.members.values()]
        return JoinResult(ErrorCode.NONE, member.member_id, group.generation_id, group.protocol_type,
                          group.protocol_name, group.leader_id or "", False, members)

    def _current_generation(self, group: Group, member: Member) -> JoinResult:
        return self._generation_result(group, member, include_members=member.member_id == group.leader_id)

    # -- sync, heartbeat, leave -----------------------------------------------------------

    def _check_member(self, group: Group | None, member_id: str, group_instance_id: str | None,
                      generation_id: int) -> tuple[ErrorCode, Member | None]:
        if group is None or group.state is GroupState.DEAD:
            return (ErrorCode.UNKNOWN_MEMBER_ID if group is None else ErrorCode.COORDINATOR_NOT_AVAILABLE), None
        static_error = group.static_member_error(group_instance_id, member_id)
        if static_error:
            return static_error, None
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID, None
        if generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION, member
        return ErrorCode.NONE, member

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
        group = self.groups.get(group_id)
        error, member = self._check_member(group, member_id, group_instance_id, generation_id)
        if error is not ErrorCode.NONE:
            return SyncResult(error)
        assert group is not None and member is not None
        if (protocol_type is not None and protocol_type != group.protocol_type) or (
                protocol_name is not None and protocol_name != group.protocol_name):
            return SyncResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        self._touch(member)
        if group.state is GroupState.PREPARING_REBALANCE:
            return SyncResult(ErrorCode.REBALANCE_IN_PROGRESS)
        if group.state is GroupState.STABLE:
            return SyncResult(ErrorCode.NONE, group.protocol_type, group.protocol_name, member.assignment)
        if group.state is not GroupState.COMPLETING_REBALANCE:
            return SyncResult(ErrorCode.UNKNOWN_MEMBER_ID)
        waiter = Pending(lambda: SyncResult(ErrorCode.REBALANCE_IN_PROGRESS),
                         self.clock.now_ms() + member.session_timeout_ms + _WAIT_MARGIN_MS)
        member.sync_waiter = waiter
        if member_id == group.leader_id:
            given = dict(assignments)
            group.state = GroupState.STABLE
            group.state_timestamp_ms = self.clock.now_ms()
            for each in group.members.values():
                each.assignment = given.get(each.member_id, b"")
                self._answer_sync(each, SyncResult(ErrorCode.NONE, group.protocol_type, group.protocol_name,
                                                   each.assignment))
        return waiter

    def heartbeat(self, group_id: str, generation_id: int, member_id: str,
                  group_instance_id: str | None) -> ErrorCode:
        """Heartbeat: keeps the session alive; tells members of a rebalance."""
        modern = self.consumer.groups.get(group_id)
        if modern is not None:
            try:
                return self.consumer.classic_heartbeat(modern, member_id, group_instance_id, generation_id)
            except HeartbeatError as exc:
                return exc.code
        group = self.groups.get(group_id)
        error, member = self._check_member(group, member_id, group_instance_id, generation_id)
        if member is not None:
            self._touch(member)
        if error is not ErrorCode.NONE:
            return error
        assert group is not None
        if group.state is GroupState.EMPTY:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if group.state is GroupState.PREPARING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def leave(self, group_id: str, members: list[tuple[str, str | None]]) -> tuple[ErrorCode, list[ErrorCode]]:
        """LeaveGroup: (group error, one error per leaving member)."""
        modern = self.consumer.groups.get(group_id)
        if modern is not None:
            codes = [self.consumer.classic_leave(modern, member_id, instance_id) for member_id, instance_id in members]
            self._downgrade_candidates()
            return ErrorCode.NONE, codes
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.UNKNOWN_MEMBER_ID, [ErrorCode.UNKNOWN_MEMBER_ID for _ in members]
        if group.state is GroupState.DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, [ErrorCode.COORDINATOR_NOT_AVAILABLE for _ in members]
        errors = []
        left = False
        for member_id, group_instance_id in members:
            if group_instance_id is not None:
                known = group.static_members.get(group_instance_id)
                if known is None:
                    errors.append(ErrorCode.UNKNOWN_MEMBER_ID)
                    continue
                if member_id and member_id != known:
                    errors.append(ErrorCode.FENCED_INSTANCE_ID)
                    continue
                member_id = known
            if member_id in group.pending_members:
                del group.pending_members[member_id]
                errors.append(ErrorCode.NONE)
                continue
            member = group.members.get(member_id)
            if member is None:
                errors.append(ErrorCode.UNKNOWN_MEMBER_ID)
                continue
            self._remove_member(group, member)
            left = True
            errors.append(ErrorCode.NONE)
        if left:
            self._after_member_removed(group)
        return ErrorCode.NONE, errors

    def _remove_member(self, group: Group, member: Member) -> None:
        group.members.pop(member.member_id, None)
        if member.group_instance_id is not None and group.static_members.get(member.group_instance_id) == \
                member.member_id:
            del group.static_members[member.group_instance_id]
        self._answer_join(member, JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member.member_id))
        self._answer_sync(member, SyncResult(ErrorCode.UNKNOWN_MEMBER_ID))

    def _after_member_removed(self, group: Group) -> None:
        if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            self._prepare_rebalance(group)
        self._try_complete_join(group)

    # -- time ------------------------------------------------------------------------------

    def tick(self) -> None:
        """Expire sessions, end overdue rebalances, drop expired offsets."""
        self.consumer.tick()
        self._downgrade_candidates()
        now = self.clock.now_ms()
        for group in list(self.groups.values()):
            for pending_id, deadline in list(group.pending_members.items()):
                if now >= deadline:
                    del group.pending_members[pending_id]
            if group.state is GroupState.PREPARING_REBALANCE:
                # a member that has not rejoined still has its session: when that runs out it is dropped,
                # so a crashed member holds the rebalance for session.timeout.ms, not the rebalance timeout
                for member in [m for m in group.members.values()
                               if m.join_waiter is None and now >= m.session_deadline_ms]:
                    self._remove_member(group, member)
                if now >= group.rebalance_deadline_ms or (group.all_members_joined()
                                                           and now >= group.join_not_before_ms):
                    self._complete_join(group)
                continue
            if group.state is GroupState.COMPLETING_REBALANCE and now >= group.rebalance_deadline_ms:
                # the leader never sent the assignment: members that did not sync go, the rest rejoin
                for member in [m for m in group.members.values() if m.sync_waiter is None]:
                    self._remove_member(group, member)
                self._prepare_rebalance(group)
                self._try_complete_join(group)
                continue
            expired = [m for m in group.members.values()
                       if now >= m.session_deadline_ms and m.join_waiter is None and m.sync_waiter is None]
            for member in expired:
                self._remove_member(group, member)
            if expired:
                self._after_member_removed(group)
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
                group.state = GroupState.DEAD
                del self.groups[group.group_id]
        for modern in list(self.consumer.groups.values()):
            if modern.members:
                continue
            if self.offset_metadata.cleanup_expired_offsets(modern.group_id, modern.state_timestamp_ms):
                del self.consumer.groups[modern.group_id]

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
        group = self.groups.get(group_id)
        error = ErrorCode.NONE
        if group is None:
            if generation_id < 0:
                # a simple group, created by its first manual commit
                group = self.groups[group_id] = Group(group_id, state_timestamp_ms=self.clock.now_ms())
            else:
                error = unknown_group_error
        if group is not None and error is ErrorCode.NONE:
            error = self._commit_allowed(group, generation_id, member_id, group_instance_id)
        if error is not ErrorCode.NONE:
            return [error for _ in offsets]
        assert group is not None
        member = group.members.get(member_id)
        if member is not None:
            self._touch(member)
        return self.offset_metadata.commit_offsets(group_id, offsets)

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        """OffsetFetch v9+: a consumer group's member must fetch at its current epoch (STALE_MEMBER_EPOCH)."""
        modern = self.consumer.groups.get(group_id)
        if modern is None:
            return ErrorCode.NONE  # classic groups do not check (ClassicGroup.validateOffsetFetch)
        return self.consumer.validate_offset_fetch(modern, member_id, member_epoch)

    @staticmethod
    def _commit_allowed(group: Group, generation_id: int, member_id: str, group_instance_id: str | None) -> ErrorCode:
        if group.state is GroupState.DEAD:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE
        static_error = group.static_member_error(group_instance_id, member_id)
        if static_error:
            return static_error
        if generation_id < 0 and group.state is GroupState.EMPTY:
            return ErrorCode.NONE  # a group not managed by the coordinator (manual assignment)
        if group.state is GroupState.COMPLETING_REBALANCE:
            return ErrorCode.REBALANCE_IN_PROGRESS
        if member_id not in group.members:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if generation_id != group.generation_id:
            return ErrorCode.ILLEGAL_GENERATION
        return ErrorCode.NONE

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
        group = self.groups.get(group_id)
        error = ErrorCode.NONE
        if group is None:
            group = self.groups[group_id] = Group(group_id, state_timestamp_ms=self.clock.now_ms())
        if generation_id >= 0 or member_id:
            error = self._commit_allowed(group, generation_id, member_id, group_instance_id)
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
        return group_id in self.groups or group_id in self.consumer.groups

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
        modern = self.consumer.groups.get(group_id)
        if modern is not None:
            if modern.members or open_transaction:
                return ErrorCode.NON_EMPTY_GROUP
            del self.consumer.groups[group_id]
            self.offset_metadata.delete_all_offsets(group_id)
            return ErrorCode.NONE
        group = self.groups.get(group_id)
        if group is None or group.state is GroupState.DEAD:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if group.state is not GroupState.EMPTY or open_transaction:
            return ErrorCode.NON_EMPTY_GROUP
        group.state = GroupState.DEAD
        del self.groups[group_id]
        self.offset_metadata.delete_all_offsets(group_id)
        return ErrorCode.NONE

    def forget_topic(self, topic: str) -> None:
        """Drop committed offsets of a deleted topic."""
        self.offset_metadata.on_partitions_deleted(topic)
