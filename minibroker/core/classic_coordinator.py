"""The classic rebalance protocol: JoinGroup, SyncGroup, Heartbeat and LeaveGroup of classic groups.

Kafka keeps these as the classic paths of GroupMetadataManager (classicGroupJoinToClassicGroup,
classicGroupSyncToClassicGroup, classicGroupHeartbeatToClassicGroup, classicGroupLeaveToClassicGroup and the
rebalance and session timers); here they are one coordinator over the classic groups by id, beside
consumer_groups.py's for KIP-848 groups. group_coordinator.py routes a group id to one or the other.

Classic states: Empty, PreparingRebalance, CompletingRebalance, Stable, Dead (classic_group.py). A join
completes as soon as every known member has rejoined (with `group.initial.rebalance.delay.ms` after it was
Empty: Kafka's 3000 by default, 0 in test brokers), or at the rebalance timeout, when members that did not
rejoin are dropped. Session and rebalance deadlines are read from the clock on `tick`, so tests move time by
hand. JoinGroup and SyncGroup answers that must wait are `Pending`s the coordinator completes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from ..protocol.errors import ErrorCode
from .classic_group import Group, GroupState, Member
from .clock import Clock
from .config import BrokerConfig
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


class ClassicGroupCoordinator:
    """The classic groups by id and their rebalance. Sans-IO: time comes from `clock`."""

    def __init__(self, config: BrokerConfig, clock: Clock) -> None:
        self.config = config
        self.clock = clock
        self.groups: dict[str, Group] = {}

    def create_group(self, group_id: str) -> Group:
        """A new Empty group of that id, kept from now on."""
        group = self.groups[group_id] = Group(group_id, state_timestamp_ms=self.clock.now_ms())
        return group

    # -- join ------------------------------------------------------------------------

    def join(self, group_id: str, member_id: str, group_instance_id: str | None, details: JoinRequestDetails,
             require_known_member_id: bool, supports_skip_assignment: bool) -> JoinResult | Pending:
        """JoinGroup of a request already validated: a result now, or a Pending completed when the rebalance's
        join phase ends. A member without an id creates the group."""
        group = self.groups.get(group_id)
        if group is None:
            if member_id:
                return JoinResult(ErrorCode.UNKNOWN_MEMBER_ID, member_id)
            group = self.create_group(group_id)
        if group.state is GroupState.DEAD:
            return JoinResult(ErrorCode.COORDINATOR_NOT_AVAILABLE, member_id)
        if not group.supports(details.protocol_type, details.protocols):
            return JoinResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, member_id)
        if group.is_static_member_fenced(group_instance_id, member_id) and member_id:
            return JoinResult(ErrorCode.FENCED_INSTANCE_ID, member_id)
        if not member_id:
            return self._join_new_member(group, group_instance_id, details, require_known_member_id,
                                         supports_skip_assignment)
        return self._join_known_member(group, member_id, group_instance_id, details)

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
        self.touch(member)
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
        self.prepare_rebalance(group)
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
        self.touch(member)
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
        self.prepare_rebalance(group)
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

    def touch(self, member: Member) -> None:
        """The member is alive: its session runs from now."""
        member.session_deadline_ms = self.clock.now_ms() + member.session_timeout_ms

    def _add_member_and_rebalance(self, group: Group, member: Member) -> Pending:
        if not group.members:
            group.protocol_type = member.protocol_type
        group.members[member.member_id] = member
        if member.group_instance_id is not None:
            group.static_members[member.group_instance_id] = member.member_id
        self.touch(member)
        pending = self._wait_for_join(member)
        if group.state is not GroupState.PREPARING_REBALANCE:
            self.prepare_rebalance(group)
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

    def prepare_rebalance(self, group: Group) -> None:
        """PreparingRebalance: members are told to rejoin (a waiting sync is answered REBALANCE_IN_PROGRESS)."""
        if group.state is GroupState.COMPLETING_REBALANCE:
            for member in group.members.values():
                self._answer_sync(member, SyncResult(ErrorCode.REBALANCE_IN_PROGRESS))
        now = self.clock.now_ms()
        if group.state is GroupState.EMPTY:
            group.join_not_before_ms = now + self.config["group.initial.rebalance.delay.ms"]
        if group.state is not GroupState.PREPARING_REBALANCE:  # already there: only its deadline starts again
            group.transition_to(GroupState.PREPARING_REBALANCE)
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
            group.transition_to(GroupState.EMPTY)
            group.protocol_name = None
            group.leader_id = None
            return
        group.protocol_name = group.select_protocol()
        if group.leader_id not in group.members:
            group.leader_id = next(iter(group.members))
        group.transition_to(GroupState.COMPLETING_REBALANCE)
        group.rebalance_deadline_ms = now + group.rebalance_timeout_ms()
        for member in group.members.values():
            member.assignment = b""
            self.touch(member)
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
        group = self.groups.get(group_id)
        error, member = self._check_member(group, member_id, group_instance_id, generation_id)
        if error is not ErrorCode.NONE:
            return SyncResult(error)
        assert group is not None and member is not None
        if (protocol_type is not None and protocol_type != group.protocol_type) or (
                protocol_name is not None and protocol_name != group.protocol_name):
            return SyncResult(ErrorCode.INCONSISTENT_GROUP_PROTOCOL)
        self.touch(member)
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
            group.transition_to(GroupState.STABLE)
            group.state_timestamp_ms = self.clock.now_ms()
            for each in group.members.values():
                each.assignment = given.get(each.member_id, b"")
                self._answer_sync(each, SyncResult(ErrorCode.NONE, group.protocol_type, group.protocol_name,
                                                   each.assignment))
        return waiter

    def heartbeat(self, group_id: str, generation_id: int, member_id: str,
                  group_instance_id: str | None) -> ErrorCode:
        """Heartbeat: keeps the session alive; tells members of a rebalance."""
        group = self.groups.get(group_id)
        error, member = self._check_member(group, member_id, group_instance_id, generation_id)
        if member is not None:
            self.touch(member)
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
            self.prepare_rebalance(group)
        self._try_complete_join(group)

    # -- time ------------------------------------------------------------------------------

    def tick(self) -> None:
        """Expire sessions and pending members, end overdue rebalances."""
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
                self.prepare_rebalance(group)
                self._try_complete_join(group)
                continue
            expired = [m for m in group.members.values()
                       if now >= m.session_deadline_ms and m.join_waiter is None and m.sync_waiter is None]
            for member in expired:
                self._remove_member(group, member)
            if expired:
                self._after_member_removed(group)

    # -- what the router asks of classic groups ------------------------------------------

    @staticmethod
    def validate_offset_commit(group: Group, generation_id: int, member_id: str,
                               group_instance_id: str | None) -> ErrorCode:
        """ClassicGroup.validateOffsetCommit: whether this member may commit at this generation."""
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

    def answer_all_waiters(self, group: Group, error: ErrorCode) -> None:
        """completeAllJoinFutures / completeAllSyncFutures of a group converted away."""
        for member in group.members.values():
            self._answer_join(member, JoinResult(error, member.member_id))
            self._answer_sync(member, SyncResult(error))
