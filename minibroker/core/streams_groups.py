"""Streams groups (KIP-1071): Kafka Streams applications whose tasks the broker assigns.

Over 500 lines: the group, its members and the heartbeat's reconciliation change the same tasks and epochs, as in
Kafka's streams paths of GroupMetadataManager; the topology and its internal topics are streams_topology.py's, the
sticky task assignor streams_assignor.py's.

Mirrors Kafka 4.3.1's GroupMetadataManager.streamsGroupHeartbeat, StreamsGroup, CurrentAssignmentBuilder and
InternalTopicManager in what 4.3.1 serves: dynamic members only (a static member is refused as Kafka refuses it),
a topology that cannot change once the group has one, no source-topic regexes and no task offsets (so no
warm-up tasks). The topology of the first member is validated and configured against the cluster's topics:
missing source topics, missing internal (repartition and changelog) topics (streams_topology.py), which the
caller creates from `HeartbeatResult.topics_to_create`, and the number of tasks per subtopology. The group
epoch moves when a member, the topology or the topics change; the target assignment is recomputed at the new
epoch, and each member reconciles to it: it revokes first, and a task moves only when released (an active task
by every member, a standby by the members of the receiving process).
Sans-IO: time comes from the clock, and `tick` fences members whose session or revocation ran out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from ..protocol.errors import ErrorCode
from .clock import Clock
from .config import BrokerConfig
from .modern_groups import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    HeartbeatError,
    member_epoch_error,
)
from .streams_assignor import assign_tasks
from .streams_topology import (
    ConfiguredTopology,
    StatusCode,
    TopicInfo,
    Topology,
    configure_topology,
    referenced_topics,
)

PROTOCOL_TYPE = "streams"

# a subtopology id to its partitions (task ids), as the heartbeat carries tasks
Tasks = dict[str, set[int]]


class StreamsGroupState(Enum):
    """StreamsGroup.StreamsGroupState, named as the describe and list APIs show them."""

    EMPTY = "Empty"
    NOT_READY = "NotReady"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class MemberState(Enum):
    """A member's reconciliation state (MemberState in Kafka's streams package)."""

    STABLE = "STABLE"
    UNREVOKED_TASKS = "UNREVOKED_TASKS"
    UNRELEASED_TASKS = "UNRELEASED_TASKS"


@dataclass
class TaskAssignment:
    """Active, standby and warm-up tasks of one member."""

    active: Tasks = field(default_factory=dict)
    standby: Tasks = field(default_factory=dict)
    warmup: Tasks = field(default_factory=dict)

    def copy(self) -> TaskAssignment:
        return TaskAssignment(_copy(self.active), _copy(self.standby), _copy(self.warmup))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TaskAssignment) and _norm(self.active) == _norm(other.active)
                and _norm(self.standby) == _norm(other.standby) and _norm(self.warmup) == _norm(other.warmup))


def _copy(tasks: Tasks) -> Tasks:
    return {sid: set(parts) for sid, parts in tasks.items() if parts}


def _norm(tasks: Tasks) -> dict[str, frozenset[int]]:
    return {sid: frozenset(parts) for sid, parts in tasks.items() if parts}


def _pairs(tasks: Tasks) -> set[tuple[str, int]]:
    return {(sid, p) for sid, parts in tasks.items() for p in parts}


def _from_pairs(pairs: set[tuple[str, int]]) -> Tasks:
    tasks: Tasks = {}
    for sid, p in pairs:
        tasks.setdefault(sid, set()).add(p)
    return tasks


def _any_tasks(tasks: TaskAssignment) -> bool:
    return bool(_pairs(tasks.active) or _pairs(tasks.standby) or _pairs(tasks.warmup))


def _overlaps(owned: TaskAssignment, tasks: TaskAssignment) -> bool:
    """TasksTuple.containsAny: a task of one kind in both."""
    return any(_pairs(getattr(owned, kind)) & _pairs(getattr(tasks, kind)) for kind in ("active", "standby", "warmup"))


@dataclass(eq=False)
class StreamsGroupMember:
    """StreamsGroupMember: what the member told the coordinator and where it is in reconciliation."""

    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = -1
    state: MemberState = MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    topology_epoch: int = -1
    client_id: str = ""
    client_host: str = ""
    process_id: str = ""
    user_endpoint: tuple[str, int] | None = None
    client_tags: dict[str, str] = field(default_factory=dict)
    assigned: TaskAssignment = field(default_factory=TaskAssignment)
    # tasks the member was told to give up and has not yet reported gone
    pending_revocation: TaskAssignment = field(default_factory=TaskAssignment)
    session_deadline_ms: int = 0
    revocation_deadline_ms: int | None = None

    def metadata(self) -> tuple:
        """What hasStreamsMemberMetadataChanged compares."""
        return (self.instance_id, self.rack_id, self.rebalance_timeout_ms, self.topology_epoch, self.client_id,
                self.client_host, self.process_id, self.user_endpoint, tuple(sorted(self.client_tags.items())))


@dataclass(eq=False)
class StreamsGroup:
    """One streams group: members, topology, epochs and the target assignment."""

    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    topology: Topology | None = None
    configured: ConfiguredTopology | None = None
    topic_signature: tuple = ()
    validated_topology_epoch: int = -1
    members: dict[str, StreamsGroupMember] = field(default_factory=dict)
    target: dict[str, TaskAssignment] = field(default_factory=dict)
    endpoint_information_epoch: int = 0
    shutdown_request_member_id: str | None = None
    assignment_delayed_until_ms: int | None = None
    assigned_at_ms: int | None = None  # when the target was last computed (streams.assignment.interval.ms)
    state_timestamp_ms: int = 0
    # the assignment configs the target was computed with (num.standby.replicas): a change rebalances
    assignment_configs: tuple = ()

    def state(self) -> StreamsGroupState:
        """StreamsGroup.maybeUpdateGroupState's rules."""
        if not self.members:
            return StreamsGroupState.EMPTY
        if self.configured is None or not self.configured.ready:
            return StreamsGroupState.NOT_READY
        if self.group_epoch > self.assignment_epoch:
            return StreamsGroupState.ASSIGNING
        for member in self.members.values():
            if member.state is not MemberState.STABLE or member.member_epoch != self.assignment_epoch:
                return StreamsGroupState.RECONCILING
        return StreamsGroupState.STABLE


@dataclass
class HeartbeatResult:
    """What a StreamsGroupHeartbeat answers, and the internal topics the caller must create."""

    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    member_id: str = ""
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    status: list[tuple[int, str]] = field(default_factory=list)
    assignment: TaskAssignment | None = None
    endpoint_information_epoch: int = 0
    # (host, port), active partitions by topic, standby partitions by topic
    partitions_by_user_endpoint: list[tuple[tuple[str, int], Tasks, Tasks]] | None = None
    topics_to_create: dict[str, TopicInfo] = field(default_factory=dict)


def streams_protocol_enabled(config: BrokerConfig) -> bool:
    """Whether the KIP-1071 APIs may be served: `group.coordinator.rebalance.protocols` lists `streams`."""
    return "streams" in [p.strip().lower() for p in config["group.coordinator.rebalance.protocols"]]


# -- the coordinator --------------------------------------------------------------------------------------


class StreamsGroupCoordinator:
    """Every streams group of the cluster. Sans-IO: time comes from `clock`."""

    def __init__(self, config: BrokerConfig, clock: Clock) -> None:
        self.config = config
        self.clock = clock
        self.groups: dict[str, StreamsGroup] = {}

    # -- configuration --------------------------------------------------------------------------------

    def _group_config(self, group_id: str, name: str) -> int:
        return int(self.config.group_value(group_id, name))

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self._group_config(group_id, "streams.heartbeat.interval.ms")

    def session_timeout_ms(self, group_id: str) -> int:
        return self._group_config(group_id, "streams.session.timeout.ms")

    def assignment_interval_ms(self, group_id: str) -> int:
        """The group's `streams.assignment.interval.ms` (Kafka 4.3), else the broker's; 0 on a release before 4.3,
        which computed every new target at once."""
        if "group.streams.assignment.interval.ms" not in self.config.broker_configs:
            return 0
        return self._group_config(group_id, "streams.assignment.interval.ms")

    # -- heartbeat ------------------------------------------------------------------------------------

    @staticmethod
    def validate(group_id: str, member_id: str, member_epoch: int, instance_id: str | None, rack_id: str | None,
                 rebalance_timeout_ms: int, topology: Topology | None, owned: tuple[Tasks | None, ...],
                 uses_regex: bool, task_offsets: bool, task_end_offsets: bool) -> None:
        """GroupCoordinatorService's checks before the coordinator sees the request (unsupported, then invalid)."""
        invalid = ErrorCode.INVALID_REQUEST
        if uses_regex:
            raise HeartbeatError(invalid, "Regular expressions for source topics are not supported yet.")
        if task_offsets:
            raise HeartbeatError(invalid, "TaskOffsets are not supported yet.")
        if task_end_offsets:
            raise HeartbeatError(invalid, "TaskEndOffsets are not supported yet.")
        if instance_id is not None:
            raise HeartbeatError(invalid, "Static membership is not yet supported.")
        for value, what in ((member_id, "MemberId"), (group_id, "GroupId"), (instance_id, "InstanceId"),
                            (rack_id, "RackId")):
            if value is not None and not value.strip():
                raise HeartbeatError(invalid, f"{what} can't be empty.")
        if member_epoch == 0:
            if rebalance_timeout_ms == -1:
                raise HeartbeatError(invalid, "RebalanceTimeoutMs must be provided in first request.")
            for tasks, what in zip(owned, ("ActiveTasks", "StandbyTasks", "WarmupTasks"), strict=True):
                if tasks:
                    raise HeartbeatError(invalid, f"{what} must be empty when (re-)joining.")
            if topology is None:
                raise HeartbeatError(invalid, "Topology must be non-null when (re-)joining.")
            for sub in topology.subtopologies:
                for info in sub.state_changelog_topics:
                    if info.partitions != 0:
                        raise HeartbeatError(ErrorCode.STREAMS_INVALID_TOPOLOGY,
                                             f"Changelog topic {info.name} must have an undefined partition "
                                             f"count, but it is set to {info.partitions}.")
        elif member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if instance_id is None:
                raise HeartbeatError(invalid, "InstanceId can't be null.")
        elif member_epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            raise HeartbeatError(invalid, f"MemberEpoch is {member_epoch}, but must be greater than or equal to -2.")
        if any(tasks is not None for tasks in owned) and any(tasks is None for tasks in owned):
            raise HeartbeatError(invalid, "If one task-type is non-null, all must be non-null.")
        if member_epoch != 0 and topology is not None:
            raise HeartbeatError(invalid, "Topology can only be provided when (re-)joining.")

    def heartbeat(self, group_id: str, member_id: str, member_epoch: int, *, partitions_of: Callable[[str], int | None],
                  instance_id: str | None = None, rack_id: str | None = None, rebalance_timeout_ms: int = -1,
                  topology: Topology | None = None, owned_active: Tasks | None = None,
                  owned_standby: Tasks | None = None, owned_warmup: Tasks | None = None,
                  process_id: str | None = None, user_endpoint: tuple[str, int] | None = None,
                  client_tags: dict[str, str] | None = None, shutdown_application: bool = False,
                  endpoint_information_epoch: int = 0, client_id: str = "", client_host: str = "",
                  uses_regex: bool = False, task_offsets: bool = False,
                  task_end_offsets: bool = False) -> HeartbeatResult:
        """StreamsGroupHeartbeat: join (epoch 0), heartbeat, or leave (-1); errors as HeartbeatResult.error."""
        try:
            self.validate(group_id, member_id, member_epoch, instance_id, rack_id, rebalance_timeout_ms, topology,
                          (owned_active, owned_standby, owned_warmup), uses_regex, task_offsets, task_end_offsets)
            if member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                return self._leave(group_id, member_id, member_epoch)
            return self._heartbeat(group_id, member_id, member_epoch, partitions_of, rack_id, rebalance_timeout_ms,
                                   topology, owned_active, owned_standby, owned_warmup, process_id, user_endpoint,
                                   client_tags, shutdown_application, endpoint_information_epoch, client_id,
                                   client_host)
        except HeartbeatError as error:
            return HeartbeatResult(error.code, error.message)

    def _group_or_error(self, group_id: str) -> StreamsGroup:
        group = self.groups.get(group_id)
        if group is None:
            raise HeartbeatError(ErrorCode.GROUP_ID_NOT_FOUND, f"Streams group {group_id} not found.")
        return group

    def _leave(self, group_id: str, member_id: str, member_epoch: int) -> HeartbeatResult:
        group = self._group_or_error(group_id)
        member = group.members.get(member_id)
        if member is None:
            raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID,
                                 f"Member {member_id} is not a member of group {group_id}.")
        self.remove_member(group, member)
        return HeartbeatResult(member_id=member_id, member_epoch=member_epoch)

    def _heartbeat(self, group_id: str, member_id: str, member_epoch: int,
                   partitions_of: Callable[[str], int | None], rack_id: str | None, rebalance_timeout_ms: int,
                   topology: Topology | None, owned_active: Tasks | None, owned_standby: Tasks | None,
                   owned_warmup: Tasks | None, process_id: str | None, user_endpoint: tuple[str, int] | None,
                   client_tags: dict[str, str] | None, shutdown_application: bool, endpoint_epoch: int,
                   client_id: str, client_host: str) -> HeartbeatResult:
        now = self.clock.now_ms()
        status: list[tuple[int, str]] = []
        joining = member_epoch == 0
        if joining:
            group = self.groups.get(group_id)
            if group is None:
                group = StreamsGroup(group_id, state_timestamp_ms=now)
            max_size = int(self.config["group.streams.max.size"])
            if member_id not in group.members and len(group.members) >= max_size:
                raise HeartbeatError(ErrorCode.GROUP_MAX_SIZE_REACHED,
                                     f"The streams group has reached its maximum capacity of {max_size} members.")
        else:
            group = self._group_or_error(group_id)
        old = group.members.get(member_id)
        if joining:
            # a member that rejoins starts over, as a new member (getOrMaybeCreateDynamicStreamsGroupMember)
            member = StreamsGroupMember(member_id)
            previous_assigned = TaskAssignment()
            bump = True
        else:
            if old is None:
                raise HeartbeatError(ErrorCode.UNKNOWN_MEMBER_ID,
                                     f"Member {member_id} is not a member of group {group_id}.")
            self._check_epoch(old, member_epoch, owned_active)
            member = old
            previous_assigned = member.assigned.copy()
            bump = False
        before = member.metadata() if not joining else None
        if rack_id is not None:
            member.rack_id = rack_id
        if rebalance_timeout_ms != -1:
            member.rebalance_timeout_ms = rebalance_timeout_ms
        if topology is not None:
            member.topology_epoch = topology.epoch
        member.client_id, member.client_host = client_id, client_host
        if process_id is not None:
            member.process_id = process_id
        if client_tags is not None:
            member.client_tags = dict(client_tags)
        if user_endpoint is not None:
            member.user_endpoint = user_endpoint
        if before is not None and before != member.metadata():
            bump = True
        # 2. the topology: set by the first member; a different one at the same or a later epoch is refused
        if topology is not None:
            if group.topology is None:
                group.topology = topology
            elif group.topology.epoch > topology.epoch:
                pass  # a stale member: it gets the STALE_TOPOLOGY status
            elif group.topology != topology:
                raise HeartbeatError(ErrorCode.INVALID_REQUEST, "Topology updates are not supported yet.")
        assert group.topology is not None  # validate() requires one to create a group
        if member.topology_epoch < group.topology.epoch:
            status.append((StatusCode.STALE_TOPOLOGY,
                           f"The member's topology epoch {member.topology_epoch} is behind the group's topology "
                           f"epoch {group.topology.epoch}."))
        # 3. configure the topology against the topics as they are now
        signature = tuple((name, partitions_of(name)) for name in referenced_topics(group.topology))
        if group.configured is None or signature != group.topic_signature:
            if group.configured is not None:
                bump = True
            group.topic_signature = signature
            group.configured = configure_topology(group.topology, partitions_of)
        configured = group.configured
        validated = group.topology.epoch if configured.ready else -1
        if validated != group.validated_topology_epoch:
            group.validated_topology_epoch = validated
            bump = True
        if joining:
            self.groups[group_id] = group
            group.members[member_id] = member  # replaces a member that rejoins, and frees its tasks
        configs = (self._group_config(group_id, "streams.num.standby.replicas"),)
        if configs != group.assignment_configs:
            bump = bump or bool(group.assignment_configs)  # streamsGroupAssignmentConfigs changed
            group.assignment_configs = configs
        new_group = group.group_epoch == 0
        if bump or new_group:
            group.group_epoch += 1
        # 4. the target assignment at the group epoch, after the initial delay of a new group and at most once per
        # assignment interval
        delay = self._group_config(group_id, "streams.initial.rebalance.delay.ms")
        interval = self.assignment_interval_ms(group_id)
        if group.group_epoch > group.assignment_epoch:
            if group.assignment_epoch == 0 and delay > 0 and group.assignment_delayed_until_ms is None:
                # the first assignment waits for more members: an empty one now, the real one after the delay
                group.assignment_delayed_until_ms = now + delay
                self._set_target(group, {m: TaskAssignment() for m in group.members}, group.group_epoch)
                group.group_epoch += 1
            elif new_group:
                group.group_epoch += 1  # Kafka 4.3.1 takes a new group to epoch 2 at its first member, as when delayed
            if group.assignment_delayed_until_ms is not None and now < group.assignment_delayed_until_ms:
                status.append((StatusCode.ASSIGNMENT_DELAYED,
                               "Assignment delayed due to the configured initial rebalance delay."))
            elif group.assigned_at_ms is not None and now - group.assigned_at_ms < interval:
                status.append((StatusCode.ASSIGNMENT_DELAYED,
                               "Assignment delayed due to the configured assignment interval."))
            else:
                self._update_target(group)
                group.assigned_at_ms = now
        # 5. reconcile the member with its target
        owned = None if owned_active is None else TaskAssignment(owned_active, owned_standby or {}, owned_warmup or {})
        self._reconcile(group, member, owned, now)
        member.session_deadline_ms = now + self.session_timeout_ms(group_id)
        if shutdown_application:
            group.shutdown_request_member_id = member_id
        result = HeartbeatResult(member_id=member_id, member_epoch=member.member_epoch,
                                 heartbeat_interval_ms=self.heartbeat_interval_ms(group_id))
        if joining or member.assigned != previous_assigned:
            result.assignment = member.assigned.copy()
            if member.user_endpoint is not None:
                group.endpoint_information_epoch += 1
        if group.endpoint_information_epoch != endpoint_epoch:
            result.partitions_by_user_endpoint = self._endpoints(group)
        if configured.status is not None:
            status.append((int(configured.status[0]), configured.status[1]))
            result.topics_to_create = dict(configured.topics_to_create)
        if group.shutdown_request_member_id is not None:
            status.append((StatusCode.SHUTDOWN_APPLICATION,
                           f"Streams group member {group.shutdown_request_member_id} encountered a fatal error and "
                           f"requested a shutdown for the entire application."))
        # Kafka 4.3 sends the list on every heartbeat, empty too: a client keeps the last list it saw
        result.status = [(int(code), detail) for code, detail in status]
        result.endpoint_information_epoch = group.endpoint_information_epoch
        return result

    @staticmethod
    def _check_epoch(member: StreamsGroupMember, received: int, owned_active: Tasks | None) -> None:
        """StreamsGroupMember epoch checks: a greater epoch is fenced; a smaller one only as the previous epoch
        with nothing owned beyond the current assignment (a lost response)."""
        if received > member.member_epoch:
            raise HeartbeatError(ErrorCode.FENCED_MEMBER_EPOCH,
                                 f"The streams group member has a greater member epoch ({received}) than the one "
                                 f"known by the group coordinator ({member.member_epoch}). The member must abandon "
                                 f"all its partitions and rejoin.")
        if received < member.member_epoch:
            # a lost answer: the previous epoch, with owned tasks all still assigned (null owned tasks are not)
            if received != member.previous_member_epoch or owned_active is None \
                    or not _pairs(owned_active) <= _pairs(member.assigned.active):
                raise HeartbeatError(ErrorCode.FENCED_MEMBER_EPOCH,
                                     f"The streams group member has a smaller member epoch ({received}) than the one "
                                     f"known by the group coordinator ({member.member_epoch}). The member must "
                                     f"abandon all its partitions and rejoin.")

    def _set_target(self, group: StreamsGroup, target: dict[str, TaskAssignment], epoch: int) -> None:
        group.target = target
        group.assignment_epoch = epoch

    def _update_target(self, group: StreamsGroup) -> None:
        configured = group.configured
        if configured is None or configured.task_counts is None or group.topology is None:
            target = {m: TaskAssignment() for m in group.members}
        else:
            standbys = self._group_config(group.group_id, "streams.num.standby.replicas")
            stateful = {sub.subtopology_id for sub in group.topology.subtopologies if sub.state_changelog_topics}
            processes = {member_id: m.process_id for member_id, m in group.members.items()}
            previous = {member_id: (_pairs(a.active), _pairs(a.standby)) for member_id, a in group.target.items()}
            target = {member_id: TaskAssignment(_from_pairs(active), _from_pairs(standby))
                      for member_id, (active, standby) in assign_tasks(
                          configured.task_counts, stateful, processes, previous, standbys).items()}
        self._set_target(group, target, group.group_epoch)

    def _reconcile(self, group: StreamsGroup, member: StreamsGroupMember, owned: TaskAssignment | None,
                   now: int) -> None:
        """CurrentAssignmentBuilder.build: a member revokes what its target no longer holds (acknowledged by the
        tasks it reports owning), then takes the target's tasks that are released: an active task no member holds,
        and no member of its process holds as standby or warm-up; a standby or warm-up task its process does not
        hold in any role."""
        if member.state is MemberState.STABLE:
            if member.member_epoch == group.assignment_epoch:
                return
            epoch = member.member_epoch
        elif member.state is MemberState.UNREVOKED_TASKS:
            if owned is None or _overlaps(owned, member.pending_revocation):
                return
            epoch = member.member_epoch + 1
        else:
            epoch = member.member_epoch
        target = group.target.get(member.member_id, TaskAssignment())
        active_process: dict[tuple[str, int], str] = {}
        replica_processes: dict[tuple[str, int], set[str]] = {}  # standby and warm-up holders, one check for both
        for other in group.members.values():
            for tasks in (other.assigned, other.pending_revocation):
                for task in _pairs(tasks.active):
                    active_process[task] = other.process_id
                for task in _pairs(tasks.standby) | _pairs(tasks.warmup):
                    replica_processes.setdefault(task, set()).add(other.process_id)
        mine = member.process_id

        def in_replicas(task: tuple[str, int]) -> bool:
            return mine in replica_processes.get(task, ())

        kept, revoke, grant = TaskAssignment(), TaskAssignment(), TaskAssignment()
        unreleased = False
        for kind in ("active", "standby", "warmup"):
            current, wanted = _pairs(getattr(member.assigned, kind)), _pairs(getattr(target, kind))
            pending = wanted - current
            if kind == "active":
                free = {t for t in pending if t not in active_process and not in_replicas(t)}
            else:
                free = {t for t in pending if active_process.get(t) != mine and not in_replicas(t)}
            unreleased = unreleased or free != pending
            setattr(kept, kind, _from_pairs(current & wanted))
            setattr(revoke, kind, _from_pairs(current - wanted))
            setattr(grant, kind, _from_pairs(free))
        if _any_tasks(revoke) and (owned is None or _overlaps(owned, revoke)):
            state, new_epoch, assigned, pending_revocation = MemberState.UNREVOKED_TASKS, epoch, kept, revoke
        else:
            if _any_tasks(grant):
                kept = TaskAssignment(*(_from_pairs(_pairs(getattr(kept, k)) | _pairs(getattr(grant, k)))
                                        for k in ("active", "standby", "warmup")))
            state = MemberState.UNRELEASED_TASKS if unreleased else MemberState.STABLE
            new_epoch, assigned, pending_revocation = group.assignment_epoch, kept, TaskAssignment()
        member.previous_member_epoch, member.member_epoch = member.member_epoch, new_epoch
        member.state, member.assigned, member.pending_revocation = state, assigned, pending_revocation
        if state is MemberState.UNREVOKED_TASKS:
            member.revocation_deadline_ms = now + max(member.rebalance_timeout_ms, 0)
        else:
            member.revocation_deadline_ms = None

    @staticmethod
    def _endpoints(group: StreamsGroup) -> list[tuple[tuple[str, int], Tasks, Tasks]]:
        """EndpointToPartitionsManager: each member with an endpoint and the input partitions of the tasks it holds
        (active, standby), by topic."""
        sources = {sub.subtopology_id: sub.all_source_names() for sub in group.topology.subtopologies} \
            if group.topology is not None else {}

        def partitions(tasks: Tasks) -> Tasks:
            by_topic: Tasks = {}
            for sid, parts in tasks.items():
                for topic in sources.get(sid, []):
                    by_topic.setdefault(topic, set()).update(parts)
            return by_topic

        return [(m.user_endpoint, partitions(m.assigned.active), partitions(m.assigned.standby))
                for m in group.members.values() if m.user_endpoint is not None]

    def remove_member(self, group: StreamsGroup, member: StreamsGroupMember) -> None:
        """A member left or was fenced: its tasks are free at once and the group epoch moves."""
        group.members.pop(member.member_id, None)
        group.target.pop(member.member_id, None)
        group.group_epoch += 1
        if group.shutdown_request_member_id == member.member_id and not group.members:
            group.shutdown_request_member_id = None
        if not group.members:
            group.state_timestamp_ms = self.clock.now_ms()
            group.shutdown_request_member_id = None

    def tick(self) -> None:
        """Fence members whose session ran out or who did not revoke within their rebalance timeout."""
        now = self.clock.now_ms()
        for group in list(self.groups.values()):
            for member in list(group.members.values()):
                late = member.revocation_deadline_ms is not None and now >= member.revocation_deadline_ms
                if now >= member.session_deadline_ms or late:
                    self.remove_member(group, member)

    # -- offsets and admin ----------------------------------------------------------------------------

    @staticmethod
    def validate_offset_commit(group: StreamsGroup, member_id: str, member_epoch: int,
                               transactional: bool = False, api_version: int | None = None) -> ErrorCode:
        """StreamsGroup.validateOffsetCommit: a member commits at its current epoch, with OffsetCommit v9 or later
        (a transactional commit at another epoch is ILLEGAL_GENERATION)."""
        if member_epoch < 0 and not group.members:
            return ErrorCode.NONE  # the admin client
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        if api_version is not None and api_version < 9:
            return ErrorCode.UNSUPPORTED_VERSION  # as Kafka 4.3.1 answers OffsetCommit v8 of a member
        if transactional:
            return ErrorCode.NONE if member_epoch == member.member_epoch else ErrorCode.ILLEGAL_GENERATION
        return member_epoch_error(member_epoch, member.member_epoch)

    @staticmethod
    def validate_offset_fetch(group: StreamsGroup, member_id: str | None, member_epoch: int) -> ErrorCode:
        """StreamsGroup.validateOffsetFetch: without a member id and epoch it is the admin; else the member's
        current epoch."""
        if member_epoch < 0 and member_id is None:
            return ErrorCode.NONE
        member = group.members.get(member_id or "")
        if member is None:
            return ErrorCode.UNKNOWN_MEMBER_ID
        return member_epoch_error(member_epoch, member.member_epoch)
