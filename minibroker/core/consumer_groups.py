"""KIP-848 consumer groups, as Kafka 4's GroupMetadataManager runs them.

Over 500 lines: one state machine — the heartbeat, the classic-protocol members a consumer group serves during
online migration, leaving and fencing, and the offset-commit checks all change the same members, epochs and
owners, as in Kafka's one class; the assignors (assignors.py) and committed offsets (offset_metadata.py) are apart.

The broker computes each member's target assignment with a server-side
assignor (`group.consumer.assignors`: uniform, range; assignors.py) and reconciles every
member towards it one heartbeat at a time (Kafka's CurrentAssignmentBuilder):
a partition taken from a member is first revoked (the member keeps its epoch
and is told its smaller assignment), and only when no member owns it any more
is it given to its new owner. The group epoch moves when membership,
subscriptions or the subscribed topics change; the target assignment is
recomputed in the heartbeat that sees the new epoch, at most once per
`consumer.assignment.interval.ms` (Kafka 4.3; at once on earlier releases), so a
first member gets its partitions in its first heartbeat answer.

Sessions (`group.consumer.session.timeout.ms`) and revocation deadlines (the
member's rebalance timeout) are read from the clock on `tick`.

Online migration (KIP-848 upgrade/downgrade): a consumer group may hold classic-protocol members (members
converted from a classic group, or joining with JoinGroup), which keep using JoinGroup, SyncGroup, Heartbeat
and LeaveGroup; the `classic_*` methods serve them from the group's state as GroupMetadataManager's
classicGroup*ToConsumerGroup do. Converting whole groups between the types is group_coordinator.py's.

Regex subscriptions: Kafka 4 compiles them with RE2J and a topic matches when
the whole name matches (`Matcher.matches`); we compile them with RE2 itself
(google-re2), so what Kafka refuses as INVALID_REGULAR_EXPRESSION (lookaround,
backreferences) is refused here too. Kafka resolves regexes in the background at most every few seconds; we
resolve them on each heartbeat, which only makes new topics show up sooner.
"""

from __future__ import annotations

import base64
import functools
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..protocol.errors import ErrorCode
from .assignors import ASSIGNOR_CLASSES, ASSIGNORS, Assignment
from .clock import Clock
from .config import BrokerConfig
from .group_configs import validate_consumer_group_configs
from .modern_groups import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    HeartbeatError,
    member_epoch_error,
)

CONSUMER_GROUP_TYPE = "consumer"

BROKER_ASSIGNMENT_INTERVAL = "group.consumer.assignment.interval.ms"




class ConsumerGroupState(Enum):
    """ConsumerGroup.ConsumerGroupState, named as ListGroups and ConsumerGroupDescribe show them."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class MemberState(Enum):
    """MemberState of CurrentAssignmentBuilder."""

    STABLE = "stable"
    UNREVOKED_PARTITIONS = "unrevoked_partitions"
    UNRELEASED_PARTITIONS = "unreleased_partitions"


@dataclass
class HeartbeatResult:
    """What a ConsumerGroupHeartbeat answers."""

    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Assignment | None = None


@dataclass
class ClassicMemberMetadata:
    """ConsumerGroupMemberMetadataValue.ClassicMemberMetadata: what a classic-protocol member joined with."""

    session_timeout_ms: int
    protocols: list[tuple[str, bytes]]


@dataclass(eq=False)
class ConsumerGroupMember:
    """ConsumerGroupMember: subscription, epochs and the partitions it owns or is giving back."""

    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = 0
    subscribed_topic_names: list[str] = field(default_factory=list)
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)
    session_deadline_ms: int = 0
    revocation_deadline_ms: int | None = None
    classic: ClassicMemberMetadata | None = None  # set while the member uses the classic protocol
    join_deadline_ms: int | None = None  # a classic member told to rejoin must do so by then
    sync_deadline_ms: int | None = None  # a classic member that joined must sync by then

    def owned(self) -> set[tuple[str, int]]:
        """Partitions this member holds: assigned ones and those it still has to revoke."""
        return {(t, p) for part in (self.assigned, self.pending_revocation) for t, ps in part.items() for p in ps}


@dataclass(eq=False)
class ConsumerGroup:
    """A consumer-protocol group: members, epochs and target assignment (its committed offsets are
    offset_metadata.py's)."""

    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ConsumerGroupMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    target: dict[str, Assignment] = field(default_factory=dict)
    owners: dict[tuple[str, int], str] = field(default_factory=dict)  # partition -> member owning it
    subscribed_partition_counts: dict[str, int] = field(default_factory=dict)
    state_timestamp_ms: int = 0
    assignor_name: str = "uniform"
    assignment_timestamp_ms: int = 0  # when the last target was computed; 0 before the first (or none so far)

    def static_member(self, instance_id: str) -> ConsumerGroupMember | None:
        """The member holding `instance_id`, None if none does (ConsumerGroup.staticMember)."""
        member_id = self.static_members.get(instance_id)
        return self.members.get(member_id) if member_id is not None else None

    @property
    def state(self) -> ConsumerGroupState:
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch != self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(m.member_epoch != self.assignment_epoch or m.state is not MemberState.STABLE
               for m in self.members.values()):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def subscribed_topics(self, topics: Mapping[str, int]) -> set[str]:
        """Every topic some member subscribes to, by name or by regex, among `topics`."""
        subscribed: set[str] = set()
        for member in self.members.values():
            subscribed |= member_topics(member, topics)
        return subscribed

    def classic_members(self) -> list[ConsumerGroupMember]:
        return [m for m in self.members.values() if m.classic is not None]

    def supports_classic_protocols(self, protocol_type: str, names: set[str]) -> bool:
        """ConsumerGroup.supportsClassicProtocols: type `consumer` and a protocol every classic member has."""
        if protocol_type != CONSUMER_GROUP_TYPE:
            return False
        if not self.members:
            return bool(names)
        # each member's protocol names gathered once, not once per name asked about
        supported = [{n for n, _ in m.classic.protocols} for m in self.classic_members() if m.classic is not None]
        return any(all(name in names_of_member for names_of_member in supported) for name in names)

    def waiting_on_unreleased_partition(self, member: ConsumerGroupMember) -> bool:
        """ConsumerGroup.waitingOnUnreleasedPartition: a partition of its target another member still holds."""
        for topic, partitions in self.target.get(member.member_id, {}).items():
            for p in partitions - member.assigned.get(topic, set()):
                if self.owners.get((topic, p), member.member_id) != member.member_id:
                    return True
        return False


def migration_policy(config: BrokerConfig) -> str:
    """`group.consumer.migration.policy` in lower case: disabled, upgrade, downgrade or bidirectional."""
    return str(config["group.consumer.migration.policy"]).strip().lower()


def upgrade_enabled(config: BrokerConfig) -> bool:
    return migration_policy(config) in ("upgrade", "bidirectional")


def downgrade_enabled(config: BrokerConfig) -> bool:
    return migration_policy(config) in ("downgrade", "bidirectional")


def member_topics(member: ConsumerGroupMember, topics: Mapping[str, int]) -> set[str]:
    """The existing topics a member subscribes to, by name or by regex."""
    subscribed = {name for name in member.subscribed_topic_names if name in topics}
    if member.subscribed_topic_regex:
        pattern = compile_regex(member.subscribed_topic_regex)
        subscribed |= {name for name in topics if pattern.fullmatch(name)}
    return subscribed


@functools.cache
def _re2_options() -> Any:
    import re2  # google-re2 loads with the first subscription regex, not with every broker

    options = re2.Options()
    options.log_errors = False  # a refused pattern is the client's error, answered; not the broker's to log
    return options


@functools.lru_cache(maxsize=256)
def compile_regex(pattern: str) -> Any:
    """A subscription regex compiled as Kafka's RE2J would take it; re2.error if RE2 refuses it."""
    import re2

    return re2.compile(pattern, options=_re2_options())


def new_member_id() -> str:
    """A member id as Kafka's Uuid.randomUuid().toString() prints: 22 url-safe base64 characters."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def _copy(assignment: Assignment) -> Assignment:
    return {t: set(ps) for t, ps in assignment.items() if ps}


def _is_subset(owned: Assignment, assigned: Assignment) -> bool:
    return all(ps <= assigned.get(t, set()) for t, ps in owned.items())




def _subscribes(group: ConsumerGroup) -> bool:
    """Some member subscribes to a topic name or a regex (whether or not anything matches)."""
    return any(m.subscribed_topic_names or m.subscribed_topic_regex for m in group.members.values())


def _instance_id_fenced(member_id: str, instance_id: str, holder: str | None) -> HeartbeatError:
    """throwIfInstanceIdIsFenced's error: `instance_id` is held by `holder`, not by `member_id`."""
    return HeartbeatError(ErrorCode.FENCED_INSTANCE_ID,
                          f"Static member {member_id} with instance id {instance_id} was fenced by member {holder}.")


def _known_static_member(group: ConsumerGroup, member_id: str, instance_id: str) -> ConsumerGroupMember:
    """The member holding `instance_id`, which must be `member_id`: HeartbeatError as Kafka's
    throwIfStaticMemberIsUnknown and throwIfInstanceIdIsFenced refuse otherwise."""
    member = group.static_member(instance_id)
    if member is None:
        raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
    if member.member_id != member_id:
        raise _instance_id_fenced(member_id, instance_id, member.member_id)
    return member


def consumer_protocol_enabled(config: BrokerConfig) -> bool:
    """Whether the KIP-848 APIs are served: `group.coordinator.rebalance.protocols` lists `consumer`."""
    return "consumer" in [p.strip().lower() for p in config["group.coordinator.rebalance.protocols"]]


class ConsumerGroupCoordinator:
    """Every consumer-protocol group of the cluster. Sans-IO: time comes from `clock`."""

    def __init__(self, config: BrokerConfig, clock: Clock) -> None:
        validate_consumer_group_configs(config)
        self.config = config
        self.clock = clock
        self.groups: dict[str, ConsumerGroup] = {}
        # groups that lost a member, with their epoch before: group_coordinator.py checks whether they downgrade
        # to classic groups (Kafka converts instead of removing the member, so the epoch stays as it was)
        self.downgrade_candidates: dict[str, int] = {}

    # -- configuration --------------------------------------------------------------------------

    def assignors(self) -> list[str]:
        """The configured assignors by short name, the default first."""
        names = [ASSIGNOR_CLASSES.get(name, name) for name in self.config["group.consumer.assignors"]]
        return [name for name in names if name in ASSIGNORS] or ["uniform"]

    def session_timeout_ms(self, group_id: str) -> int:
        """The group's `consumer.session.timeout.ms` (a GROUP config), else the broker's default for it."""
        return int(self.config.group_value(group_id, "consumer.session.timeout.ms"))

    def coordinator_is_4_3(self) -> bool:
        """The node's release has Kafka 4.3's group coordinator (known by its assignment-interval configs)."""
        return BROKER_ASSIGNMENT_INTERVAL in self.config.broker_configs

    def assignment_interval_ms(self, group_id: str) -> int:
        """The group's `consumer.assignment.interval.ms` (Kafka 4.3), else the broker's; 0 on a release before 4.3,
        which computed every new target at once."""
        if not self.coordinator_is_4_3():
            return 0
        return int(self.config.group_value(group_id, "consumer.assignment.interval.ms"))

    def heartbeat_interval_ms(self, group_id: str) -> int:
        """The group's `consumer.heartbeat.interval.ms` (a GROUP config), else the broker's default for it."""
        return int(self.config.group_value(group_id, "consumer.heartbeat.interval.ms"))

    # -- heartbeat ---------------------------------------------------------------------------------

    def validate(self, group_id: str, member_id: str, member_epoch: int, instance_id: str | None,
                 rack_id: str | None, rebalance_timeout_ms: int, subscribed_topic_names: list[str] | None,
                 subscribed_topic_regex: str | None, server_assignor: str | None,
                 owned: Assignment | None) -> None:
        """throwIfConsumerGroupHeartbeatRequestIsInvalid (Kafka 4.x): HeartbeatError with Kafka's message.

        The v1 rule that the client names itself is the API module's; here a member id is required where
        every version requires it.
        """
        if (member_epoch > 0 or member_epoch == LEAVE_GROUP_MEMBER_EPOCH) and not member_id.strip():
            raise HeartbeatError(ErrorCode.INVALID_REQUEST, "MemberId can't be empty.")
        for value, name in ((group_id, "GroupId"), (instance_id, "InstanceId"), (rack_id, "RackId")):
            if value is not None and not value.strip():
                raise HeartbeatError(ErrorCode.INVALID_REQUEST, f"{name} can't be empty.")
        if member_epoch == 0:
            if rebalance_timeout_ms == -1:
                raise HeartbeatError(ErrorCode.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request.")
            if owned is None or any(owned.values()):
                raise HeartbeatError(ErrorCode.INVALID_REQUEST, "TopicPartitions must be empty when (re-)joining.")
            if subscribed_topic_names is None and subscribed_topic_regex is None:  # an empty list joins with no topics
                raise HeartbeatError(ErrorCode.INVALID_REQUEST,
                                     "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when "
                                     "(re-)joining.")
        elif member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if instance_id is None:
                raise HeartbeatError(ErrorCode.INVALID_REQUEST, "InstanceId can't be null.")
        elif member_epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            raise HeartbeatError(ErrorCode.INVALID_REQUEST, "MemberEpoch is invalid.")
        if subscribed_topic_regex is not None:
            import re2

            try:
                compile_regex(subscribed_topic_regex)
            except re2.error as exc:
                reason = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else str(exc)
                raise HeartbeatError(ErrorCode.INVALID_REGULAR_EXPRESSION,
                                     f"SubscribedTopicRegex `{subscribed_topic_regex}` is not a valid regular "
                                     f"expression: {reason}.") from None
        if server_assignor is not None and server_assignor not in self.assignors():
            raise HeartbeatError(ErrorCode.UNSUPPORTED_ASSIGNOR,
                                 f"ServerAssignor {server_assignor} is not supported. Supported assignors: "
                                 f"{', '.join(self.assignors())}.")

    def heartbeat(self, group_id: str, member_id: str, member_epoch: int, *, instance_id: str | None = None,
                  rack_id: str | None = None, rebalance_timeout_ms: int = -1,
                  subscribed_topic_names: list[str] | None = None, subscribed_topic_regex: str | None = None,
                  server_assignor: str | None = None, owned: Assignment | None = None, client_id: str = "",
                  client_host: str = "", topics: Mapping[str, int] | None = None) -> HeartbeatResult:
        """ConsumerGroupHeartbeat: join, heartbeat, reconcile or leave; `topics` maps names to partition counts."""
        topics = topics or {}
        try:
            if not member_id and member_epoch == 0:
                member_id = new_member_id()  # v0: the coordinator names a new member
            self.validate(group_id, member_id, member_epoch, instance_id, rack_id, rebalance_timeout_ms,
                          subscribed_topic_names, subscribed_topic_regex, server_assignor, owned)
            if member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                return self._leave(group_id, member_id, member_epoch, instance_id)
            return self._heartbeat(group_id, member_id, member_epoch, instance_id, rack_id, rebalance_timeout_ms,
                                   subscribed_topic_names, subscribed_topic_regex, server_assignor, owned,
                                   client_id, client_host, topics)
        except HeartbeatError as exc:
            return HeartbeatResult(exc.code, exc.message)

    def _group(self, group_id: str, create: bool) -> ConsumerGroup:
        group = self.groups.get(group_id)
        if group is None:
            if not create:
                raise HeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND, f"Consumer group {group_id} not found.")
            group = self.groups[group_id] = ConsumerGroup(group_id, state_timestamp_ms=self.clock.now_ms())
        return group

    @staticmethod
    def _member(group: ConsumerGroup, member_id: str) -> ConsumerGroupMember:
        member = group.members.get(member_id)
        if member is None:
            raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Member {member_id} is not a member of group {group.group_id}.")
        return member

    @staticmethod
    def _check_epoch(member: ConsumerGroupMember, received: int, owned: Assignment | None) -> None:
        """throwIfMemberEpochIsInvalid."""
        if received > member.member_epoch:
            raise HeartbeatError(ErrorCode.FENCED_MEMBER_EPOCH,
                                 f"The consumer group member has a greater member epoch ({received}) than the one "
                                 f"known by the group coordinator ({member.member_epoch}). The member must abandon "
                                 "all its partitions and rejoin.")
        if received < member.member_epoch:
            # the answer that bumped the epoch may have been lost: the previous epoch is accepted with a subset
            if received != member.previous_member_epoch or not _is_subset(owned or {}, member.assigned):
                raise HeartbeatError(ErrorCode.FENCED_MEMBER_EPOCH,
                                     f"The consumer group member has a smaller member epoch ({received}) than the "
                                     f"one known by the group coordinator ({member.member_epoch}). The member must "
                                     "abandon all its partitions and rejoin.")

    def _heartbeat(self, group_id: str, member_id: str, member_epoch: int, instance_id: str | None,
                   rack_id: str | None, rebalance_timeout_ms: int, names: list[str] | None, regex: str | None,
                   server_assignor: str | None, owned: Assignment | None, client_id: str, client_host: str,
                   topics: Mapping[str, int]) -> HeartbeatResult:
        now = self.clock.now_ms()
        group = self._group(group_id, create=member_epoch == 0)
        bump = False
        member = group.members.get(member_id)
        if instance_id is None:
            if member_epoch != 0:
                member = self._member(group, member_id)
                self._check_epoch(member, member_epoch, owned)
            elif member is None:
                member = self._add_member(group, member_id)
                bump = True
        else:
            # the id as well: the fencing check below names it even when its member is gone
            existing_id = group.static_members.get(instance_id)
            existing = group.members.get(existing_id) if existing_id is not None else None
            if member_epoch == 0:
                if existing is None:
                    if member is None:
                        member = self._add_member(group, member_id)
                        bump = True
                elif existing.member_id != member_id:
                    if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                        raise HeartbeatError(ErrorCode.UNRELEASED_INSTANCE_ID,
                                             f"Static member {existing.member_id} with instance id {instance_id} "
                                             f"cannot join the group because the instance id is is owned by "
                                             f"{existing.member_id} member.")
                    member = self._replace_static_member(group, existing, member_id)
                else:
                    member = existing
            else:
                member = self._member(group, member_id)
                self._check_epoch(member, member_epoch, owned)
                if member.instance_id != instance_id:
                    raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID,
                                         f"Member {member_id} is not a member of group {group_id}.")
                if existing_id != member_id:
                    raise _instance_id_fenced(member_id, instance_id, existing_id)
            member.instance_id = instance_id
            group.static_members[instance_id] = member.member_id
        assert member is not None
        # the subscription and the member's details (ConsumerGroupMember.Builder.maybeUpdate*)
        if rack_id is not None:
            member.rack_id = rack_id
        if rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = rebalance_timeout_ms
        # names and regex are kept apart, as Kafka keeps them: the subscription is both (an empty regex is none)
        if names is not None and sorted(names) != member.subscribed_topic_names:
            member.subscribed_topic_names = sorted(names)
            bump = True
        if regex is not None and (regex or None) != member.subscribed_topic_regex:
            member.subscribed_topic_regex = regex or None
            bump = True
        if server_assignor is not None and server_assignor != member.server_assignor:
            member.server_assignor = server_assignor
            bump = True
        member.client_id, member.client_host = client_id, client_host
        member.session_deadline_ms = now + self.session_timeout_ms(group_id)
        # a classic member heartbeating with the new protocol has upgraded itself (Kafka clears its classic metadata)
        member.classic, member.join_deadline_ms, member.sync_deadline_ms = None, None, None
        before = _copy(member.assigned)
        self._update_and_reconcile(group, member, bump, topics, owned)
        full = rebalance_timeout_ms != -1 and (names is not None or regex is not None) and owned is not None
        changed = before != _copy(member.assigned)
        return HeartbeatResult(
            ErrorCode.NONE, None, member.member_id, member.member_epoch, self.heartbeat_interval_ms(group_id),
            _copy(member.assigned) if (member_epoch == 0 or full or changed) else None)

    def _update_and_reconcile(self, group: ConsumerGroup, member: ConsumerGroupMember, bump: bool,
                              topics: Mapping[str, int], owned: Assignment | None) -> None:
        """Steps 1-3 of a heartbeat or classic join: bump the epoch, recompute the target, reconcile the member."""
        # the subscribed topics' partition counts: a new topic, a deleted one or more partitions move the epoch
        counts = {t: topics[t] for t in group.subscribed_topics(topics)}
        if counts != group.subscribed_partition_counts:
            group.subscribed_partition_counts = counts
            bump = True
        if bump:
            # Kafka 4.3.1 lands a group's first epoch at 2 when its first member subscribes to anything (at 1 with an
            # empty subscription): observed on the reference broker, the cause is not in the heartbeat path. Taken as
            # part of 4.3's coordinator (with the assignment interval); releases before 4.3 were not checked.
            first = group.group_epoch == 0 and _subscribes(group) and self.coordinator_is_4_3()
            group.group_epoch += 2 if first else 1
        if group.group_epoch > group.assignment_epoch:
            self._maybe_compute_target(group)
        self._reconcile(group, member, owned)

    def _maybe_compute_target(self, group: ConsumerGroup) -> None:
        """A new target for the group epoch, unless one was computed less than the group's assignment interval ago
        (Kafka 4.3's canComputeNextTargetAssignment): members then stay on the last target, the group Assigning,
        and the first heartbeat after the interval computes it. A group that subscribes to nothing gets its empty
        target at once and without a timestamp, as on the reference broker."""
        if not _subscribes(group):
            group.target = {m: {} for m in group.members}
            group.assignment_epoch = group.group_epoch
            return
        now, interval = self.clock.now_ms(), self.assignment_interval_ms(group.group_id)
        last = group.assignment_timestamp_ms
        if last == 0 or interval == 0 or now >= last + interval:
            self._compute_target(group)
            group.assignment_timestamp_ms = now

    def _add_member(self, group: ConsumerGroup, member_id: str) -> ConsumerGroupMember:
        if len(group.members) >= self.config["group.consumer.max.size"]:
            raise HeartbeatError(ErrorCode.GROUP_MAX_SIZE_REACHED,
                                 f"The consumer group has reached its maximum capacity of "
                                 f"{self.config['group.consumer.max.size']} members.")
        member = group.members[member_id] = ConsumerGroupMember(member_id)
        return member

    def _replace_static_member(self, group: ConsumerGroup, old: ConsumerGroupMember,
                               member_id: str) -> ConsumerGroupMember:
        """A restarted static member takes over its old entry: epoch and assignment, without a rebalance."""
        self._set_owned(group, old, old.assigned, {})  # what it was giving back is free now
        del group.members[old.member_id]
        target = group.target.pop(old.member_id, None)
        for tp in old.owned():
            group.owners[tp] = member_id
        old.member_id = member_id
        # as Kafka: the new member starts at epoch 0 with the old one's partitions and target, so its first
        # reconciliation hands it the same partitions at the current epoch
        old.member_epoch, old.previous_member_epoch, old.state = 0, 0, MemberState.STABLE
        group.members[member_id] = old
        if target is not None:
            group.target[member_id] = target
        return old

    def _set_owned(self, group: ConsumerGroup, member: ConsumerGroupMember, assigned: Assignment,
                   pending: Assignment) -> None:
        for tp in member.owned():
            if group.owners.get(tp) == member.member_id:
                del group.owners[tp]
        member.assigned, member.pending_revocation = _copy(assigned), _copy(pending)
        for tp in member.owned():
            group.owners[tp] = member.member_id

    def _compute_target(self, group: ConsumerGroup) -> None:
        """The target assignment of the group epoch, by the preferred server assignor."""
        choices = [m.server_assignor for m in group.members.values() if m.server_assignor]
        assignors = self.assignors()
        name = max(set(choices), key=lambda n: (choices.count(n), -assignors.index(n))) if choices else assignors[0]
        group.assignor_name = name
        topics = group.subscribed_partition_counts
        subscriptions = {m.member_id: member_topics(m, topics) for m in group.members.values()}
        current = {m.member_id: group.target.get(m.member_id, m.assigned) for m in group.members.values()}
        group.target = ASSIGNORS[name](subscriptions, topics, current)
        group.assignment_epoch = group.group_epoch

    def _reconcile(self, group: ConsumerGroup, member: ConsumerGroupMember, owned: Assignment | None) -> None:
        """CurrentAssignmentBuilder.build: one step of the member towards its target assignment."""
        if member.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            return
        epoch = group.assignment_epoch
        if member.state is MemberState.STABLE:
            if member.member_epoch != epoch:
                self._next_assignment(group, member, member.member_epoch, owned)
        elif member.state is MemberState.UNREVOKED_PARTITIONS:
            if not self._owns_revoked(member.pending_revocation, owned):
                self._next_assignment(group, member, min(member.member_epoch + 1, epoch), owned)
        else:
            self._next_assignment(group, member, member.member_epoch, owned)

    @staticmethod
    def _owns_revoked(pending: Assignment, owned: Assignment | None) -> bool:
        if owned is None:
            return True  # a heartbeat without its owned partitions says nothing about them
        return any(ps & pending.get(t, set()) for t, ps in owned.items())

    def _next_assignment(self, group: ConsumerGroup, member: ConsumerGroupMember, member_epoch: int,
                         owned: Assignment | None) -> None:
        target = group.target.get(member.member_id, {})
        assigned: Assignment = {}
        revoke: Assignment = {}
        unreleased = False
        for topic in set(target) | set(member.assigned):
            want, have = target.get(topic, set()), member.assigned.get(topic, set())
            keep = want & have
            revoke_here = have - want
            for p in sorted(want - have):
                holder = group.owners.get((topic, p))
                if holder is None or holder == member.member_id:
                    keep.add(p)
                else:
                    unreleased = True
            if keep:
                assigned[topic] = keep
            if revoke_here:
                revoke[topic] = revoke_here
        previous = member.member_epoch
        if revoke and self._owns_revoked(revoke, owned):
            # partitions to give back first: the member keeps its epoch until it says it has revoked them
            # (the partitions it gets meanwhile are only those no other member holds)
            self._set_owned(group, member, {t: ps & member.assigned.get(t, set()) for t, ps in assigned.items()},
                            revoke)
            member.state = MemberState.UNREVOKED_PARTITIONS
            member.member_epoch = member_epoch
            member.revocation_deadline_ms = self.clock.now_ms() + member.rebalance_timeout_ms
        else:
            self._set_owned(group, member, assigned, {})
            member.state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
            member.member_epoch = group.assignment_epoch
            member.revocation_deadline_ms = None
        if member.member_epoch != previous:
            member.previous_member_epoch = previous

    # -- classic-protocol members (online migration) -------------------------------------------------

    def classic_join(self, group: ConsumerGroup, member_id: str, unknown: bool, instance_id: str | None,
                     rack_id: str | None, rebalance_timeout_ms: int, session_timeout_ms: int,
                     protocols: list[tuple[str, bytes]], subscribed: list[str], owned: Assignment, client_id: str,
                     client_host: str, topics: Mapping[str, int]) -> ConsumerGroupMember:
        """classicGroupJoinToConsumerGroup steps 1-3: HeartbeatError as Kafka refuses; the reconciled member.

        `unknown` says the member joined without an id (`member_id` is the one just made for it).
        """
        if not self._classic_member_fits(group, member_id, instance_id):
            raise HeartbeatError(ErrorCode.GROUP_MAX_SIZE_REACHED,
                                 f"The consumer group has reached its maximum capacity of "
                                 f"{self.config['group.consumer.max.size']} members.")
        bump = False
        if instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                member = self._add_member(group, member_id)
                bump = True
        else:
            existing = group.static_member(instance_id)
            if unknown:
                if existing is None:
                    member = self._add_member(group, member_id)
                    bump = True
                else:  # a restarted static member takes its old entry over (no UNRELEASED_INSTANCE_ID for classic)
                    member = self._replace_static_member(group, existing, member_id)
            else:
                member = _known_static_member(group, member_id, instance_id)
            member.instance_id = instance_id
            group.static_members[instance_id] = member.member_id
        if rack_id is not None:
            member.rack_id = rack_id
        if rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = rebalance_timeout_ms
        if sorted(subscribed) != member.subscribed_topic_names:
            member.subscribed_topic_names = sorted(subscribed)
            bump = True
        member.client_id, member.client_host = client_id, client_host
        member.classic = ClassicMemberMetadata(session_timeout_ms, list(protocols))
        now = self.clock.now_ms()
        member.join_deadline_ms = None
        member.sync_deadline_ms = now + rebalance_timeout_ms  # scheduleConsumerGroupSyncTimeout
        member.session_deadline_ms = now + session_timeout_ms
        self._update_and_reconcile(group, member, bump, topics, owned)
        return member

    def _classic_member_fits(self, group: ConsumerGroup, member_id: str, instance_id: str | None) -> bool:
        """throwIfConsumerGroupIsFull: a member not yet in the group must find room."""
        known = member_id in group.members or (instance_id is not None and instance_id in group.static_members)
        return known or len(group.members) < self.config["group.consumer.max.size"]

    def classic_member(self, group: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerGroupMember:
        """validateConsumerGroupMember and throwIfMemberDoesNotUseClassicProtocol."""
        if instance_id is None:
            member = self._member(group, member_id)
        else:
            found = group.static_member(instance_id)
            if found is None:
                raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID, f"Member with instance id {instance_id} is not a "
                                                                  f"member of group {group.group_id}.")
            if found.member_id != member_id:
                raise _instance_id_fenced(member_id, instance_id, found.member_id)
            member = found
        if member.classic is None:
            raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Member {member.member_id} does not use the classic protocol.")
        return member

    def classic_sync(self, group: ConsumerGroup, member_id: str, instance_id: str | None, generation_id: int,
                     protocol_type: str | None, protocol_name: str | None) -> ConsumerGroupMember:
        """classicGroupSyncToConsumerGroup: HeartbeatError as Kafka refuses; the member, whose assignment is sent."""
        member = self.classic_member(group, member_id, instance_id)
        assert member.classic is not None
        if generation_id != member.member_epoch:
            raise HeartbeatError(ErrorCode.ILLEGAL_GENERATION,
                                 f"The request generation id {generation_id} is not equal to the member epoch "
                                 f"{member.member_epoch} of member {member.member_id}.")
        chosen = member.classic.protocols[0][0] if member.classic.protocols else None
        if (protocol_type is not None and protocol_type != CONSUMER_GROUP_TYPE) or (
                protocol_name is not None and protocol_name != chosen):
            raise HeartbeatError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
                                 "The protocol type or name is not consistent with the member's.")
        # a member revoking partitions has rejoined already: it finishes its reconciliation at its epoch
        if group.group_epoch > member.member_epoch and member.state is not MemberState.UNREVOKED_PARTITIONS:
            raise HeartbeatError(ErrorCode.REBALANCE_IN_PROGRESS,
                                 f"A new rebalance is triggered in group {group.group_id} and member "
                                 f"{member.member_id} should rejoin to catch up.")
        member.session_deadline_ms = self.clock.now_ms() + member.classic.session_timeout_ms
        member.sync_deadline_ms = None
        return member

    def classic_heartbeat(self, group: ConsumerGroup, member_id: str, instance_id: str | None,
                          generation_id: int) -> ErrorCode:
        """classicGroupHeartbeatToConsumerGroup: REBALANCE_IN_PROGRESS when the member must rejoin."""
        member = self.classic_member(group, member_id, instance_id)
        assert member.classic is not None
        if generation_id != member.member_epoch:
            raise HeartbeatError(ErrorCode.ILLEGAL_GENERATION)
        now = self.clock.now_ms()
        member.session_deadline_ms = now + member.classic.session_timeout_ms
        # rejoin when the group epoch moved on, to finish revoking, or to take partitions that are free now
        if (member.member_epoch < group.group_epoch or member.state is MemberState.UNREVOKED_PARTITIONS
                or (member.state is MemberState.UNRELEASED_PARTITIONS
                    and not group.waiting_on_unreleased_partition(member))):
            if member.join_deadline_ms is None:  # scheduleConsumerGroupJoinTimeoutIfAbsent
                member.join_deadline_ms = now + member.rebalance_timeout_ms
            return ErrorCode.REBALANCE_IN_PROGRESS
        return ErrorCode.NONE

    def classic_leave(self, group: ConsumerGroup, member_id: str, instance_id: str | None) -> ErrorCode:
        """One member of classicGroupLeaveToConsumerGroup: it leaves, its partitions are free, the epoch moves."""
        try:
            if instance_id is None:
                member = self.classic_member(group, member_id, None)
            else:
                found = group.static_member(instance_id)
                if found is None:
                    return ErrorCode.UNKNOWN_MEMBER_ID
                # the admin client removes static members by instance id alone
                member = self.classic_member(group, member_id or found.member_id, instance_id)
        except HeartbeatError as exc:
            return exc.code
        self.remove_member(group, member)
        return ErrorCode.NONE

    # -- leaving and fencing -----------------------------------------------------------------------

    def _leave(self, group_id: str, member_id: str, member_epoch: int, instance_id: str | None) -> HeartbeatResult:
        group = self._group(group_id, create=False)
        if instance_id is None:
            member = self._member(group, member_id)
        else:
            member = _known_static_member(group, member_id, instance_id)
        if member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # the static member keeps its partitions for its session: a restart with the same instance id takes
            # them over without a rebalance
            if member.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                member.previous_member_epoch = member.member_epoch
            member.member_epoch = LEAVE_GROUP_STATIC_MEMBER_EPOCH
            self._set_owned(group, member, member.assigned, {})  # what it was revoking is free
            member.session_deadline_ms = self.clock.now_ms() + self.session_timeout_ms(group_id)
        else:
            self.remove_member(group, member)
        return HeartbeatResult(ErrorCode.NONE, None, member_id, member_epoch, 0, None)

    def remove_member(self, group: ConsumerGroup, member: ConsumerGroupMember) -> None:
        """Take a member out (left, fenced or expired): its partitions are free, the group epoch moves."""
        self.downgrade_candidates.setdefault(group.group_id, group.group_epoch)
        self._set_owned(group, member, {}, {})
        group.members.pop(member.member_id, None)
        group.target.pop(member.member_id, None)
        if member.instance_id is not None and group.static_members.get(member.instance_id) == member.member_id:
            del group.static_members[member.instance_id]
        group.group_epoch += 1
        if not group.members:
            group.state_timestamp_ms = self.clock.now_ms()

    def tick(self) -> None:
        """Fence members whose session ran out or who did not revoke within their rebalance timeout."""
        now = self.clock.now_ms()
        for group in list(self.groups.values()):
            for member in list(group.members.values()):
                late_revocation = (member.state is MemberState.UNREVOKED_PARTITIONS
                                   and member.revocation_deadline_ms is not None
                                   and now >= member.revocation_deadline_ms)
                late_rejoin = member.join_deadline_ms is not None and now >= member.join_deadline_ms
                late_sync = member.sync_deadline_ms is not None and now >= member.sync_deadline_ms
                if now >= member.session_deadline_ms or late_revocation or late_rejoin or late_sync:
                    self.remove_member(group, member)

    # -- offsets -----------------------------------------------------------------------------------

    def validate_offset_commit(self, group: ConsumerGroup, member_id: str, member_epoch: int,
                               api_version: int | None) -> ErrorCode:
        """ConsumerGroup.validateOffsetCommit."""
        if member_epoch < 0 and not group.members:
            return ErrorCode.NONE  # the admin client, or a consumer without group management
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member.classic is not None:
            # a classic member commits with its generation, which is its member epoch (validateMemberEpoch)
            return ErrorCode.NONE if member_epoch == member.member_epoch else ErrorCode.ILLEGAL_GENERATION
        if api_version is not None and api_version < 9:
            return ErrorCode.UNSUPPORTED_VERSION  # members of the new protocol commit with v9+
        return member_epoch_error(member_epoch, member.member_epoch)

    def validate_offset_fetch(self, group: ConsumerGroup, member_id: str | None, member_epoch: int) -> ErrorCode:
        """ConsumerGroup.validateOffsetFetch."""
        if member_epoch < 0 and member_id is None:
            return ErrorCode.NONE  # the admin client
        member = group.members.get(member_id or "")
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if member.classic is not None:
            return ErrorCode.NONE if member_epoch == member.member_epoch else ErrorCode.ILLEGAL_GENERATION
        return member_epoch_error(member_epoch, member.member_epoch)
