"""A classic group and its members, as Kafka's ClassicGroup and ClassicGroupMember keep them.

The states are those DescribeGroups and ListGroups show; the rebalance that moves a group between them is the
classic coordinator's (classic_coordinator.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from ..protocol.consumer_protocol import CONSUMER_PROTOCOL_TYPE, subscribed_topics
from ..protocol.errors import ErrorCode
from .pending import Pending
from .transitions import PreviousStates


class GroupState(Enum):
    """Kafka's classic group states, named as DescribeGroups and ListGroups show them."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


# Kafka's ClassicGroupState.validPreviousStates: each state and the states it may be entered from
_G = GroupState
TRANSITIONS: PreviousStates[GroupState] = PreviousStates("classic group", {
    _G.PREPARING_REBALANCE: frozenset({_G.STABLE, _G.COMPLETING_REBALANCE, _G.EMPTY}),
    _G.COMPLETING_REBALANCE: frozenset({_G.PREPARING_REBALANCE}),
    _G.STABLE: frozenset({_G.COMPLETING_REBALANCE}),
    _G.DEAD: frozenset({_G.STABLE, _G.PREPARING_REBALANCE, _G.COMPLETING_REBALANCE, _G.EMPTY, _G.DEAD}),
    _G.EMPTY: frozenset({_G.PREPARING_REBALANCE}),
})


@dataclass(eq=False)
class Member:
    """One member of a classic group."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]
    assignment: bytes = b""
    session_deadline_ms: int = 0
    join_waiter: Pending | None = None
    sync_waiter: Pending | None = None

    def metadata_for(self, protocol: str | None) -> bytes:
        return next((meta for name, meta in self.protocols if name == protocol), b"")

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]


@dataclass(eq=False)
class Group:
    """A classic group: members, generation and chosen protocol."""

    group_id: str
    state: GroupState = GroupState.EMPTY  # changed by `transition_to` only
    generation_id: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    pending_members: dict[str, int] = field(default_factory=dict)  # member id -> deadline (KIP-394)
    static_members: dict[str, str] = field(default_factory=dict)  # group.instance.id -> member id
    rebalance_deadline_ms: int = 0
    join_not_before_ms: int = 0  # group.initial.rebalance.delay.ms from Empty
    state_timestamp_ms: int = 0

    def transition_to(self, state: GroupState) -> None:
        """Enter `state`; IllegalTransition unless Kafka's table allows it from the current one."""
        self.state = TRANSITIONS.check(self.state, state)

    def is_static_member_fenced(self, group_instance_id: str | None, member_id: str) -> bool:
        if group_instance_id is None:
            return False
        known = self.static_members.get(group_instance_id)
        return known is not None and known != member_id

    def static_member_error(self, group_instance_id: str | None, member_id: str) -> ErrorCode:
        """ClassicGroup.validateMember's instance check: an instance id the group does not know is
        UNKNOWN_MEMBER_ID, one another member id holds FENCED_INSTANCE_ID."""
        if group_instance_id is None:
            return ErrorCode.NONE
        known = self.static_members.get(group_instance_id)
        if known is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        return ErrorCode.FENCED_INSTANCE_ID if known != member_id else ErrorCode.NONE

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def all_members_joined(self) -> bool:
        return not self.pending_members and all(m.join_waiter is not None for m in self.members.values())

    def select_protocol(self) -> str | None:
        """The protocol every member supports, most preferred by the members' votes."""
        members = list(self.members.values())
        if not members:
            return None
        candidates = set(members[0].protocol_names())
        for member in members[1:]:
            candidates &= set(member.protocol_names())
        if not candidates:
            return None
        votes: dict[str, int] = {}
        for member in members:
            choice = next(name for name in member.protocol_names() if name in candidates)
            votes[choice] = votes.get(choice, 0) + 1
        # ties go to the first member's preference, its first mention of a name counting (as list.index)
        rank: dict[str, int] = {}
        for position, name in enumerate(members[0].protocol_names()):
            rank.setdefault(name, position)
        return max(candidates, key=lambda name: (votes.get(name, 0), -rank[name]))

    def supports(self, protocol_type: str, protocols: list[tuple[str, bytes]]) -> bool:
        """Whether a member with these protocols may join (type matches, a protocol in common)."""
        if not self.members:
            return True
        if protocol_type != self.protocol_type:
            return False
        common = set(name for name, _ in protocols)
        for member in self.members.values():
            common &= set(member.protocol_names())
        return bool(common)

    def subscribed_topics(self) -> set[str] | None:
        """Topics the members subscribe to; None when the protocol type is not `consumer`."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE:
            return None
        topics: set[str] = set()
        for member in self.members.values():
            topics |= subscribed_topics(member.metadata_for(self.protocol_name))
        return topics
