"""Share groups (KIP-932): members, epochs, the simple assignor and each group's share partitions.

Mirrors Kafka 4.3.1's GroupMetadataManager for share groups and its SimpleAssignor. Unlike a consumer group, a
share group's partitions are not owned: many members may be assigned one partition and the share partition
(core/share_partition.py) hands each record to one of them at a time. So there is no revocation to wait for:
every change of membership or subscription bumps the group epoch, and a member takes the epoch and assignment of
the last target assignment on its next heartbeat. As on Kafka 4.3.1, a target is computed at most once per
`share.assignment.interval.ms`, and only over share partitions whose state is initialized: a heartbeat that
subscribes to new partitions initializes them after its target is computed and bumps the epoch again, so a first
member joins at epoch 2 with nothing and gets its partitions at epoch 3, a heartbeat after the interval.

Members time out after `share.session.timeout.ms` (a group config) without a heartbeat; a member leaving or
timing out releases every record it holds. Time is the core's clock; expiry is applied when the coordinator is
next used (`expire`), so tests move a manual clock and observe the effect on the next request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..protocol.errors import ErrorCode
from .clock import Clock
from .share_partition import SharePartition

#: Topic name -> assigned partition indexes.
Assignment = dict[str, set[int]]

LEAVE_EPOCH = -1
ASSIGNOR_NAME = "simple"  # group.share.assignors: Kafka's only one


@dataclass(slots=True)
class ShareMember:
    """One member of a share group, as ShareGroupMember."""

    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = 0
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: list[str] = field(default_factory=list)
    assignment: Assignment = field(default_factory=dict)
    sent_assignment: Assignment | None = None  # the assignment the member was last told
    session_deadline_ms: int = 0


@dataclass(slots=True)
class ShareGroup:
    """A share group: its epochs, members and the share partitions it consumes."""

    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    partitions: dict[tuple[str, int], SharePartition] = field(default_factory=dict)
    # the partition count of each subscribed topic when the group epoch last moved
    partition_counts: dict[str, int] = field(default_factory=dict)
    assignment_timestamp_ms: int = 0  # when the target assignment was last computed (0: never)

    @property
    def state(self) -> str:
        """ShareGroup.ShareGroupState as Kafka names it."""
        return "Stable" if self.members else "Empty"

    def subscribed_topics(self) -> set[str]:
        return {name for member in self.members.values() for name in member.subscribed_topic_names}


@dataclass(frozen=True, slots=True)
class HeartbeatResult:
    """What a ShareGroupHeartbeat answers; `assignment` is None when it is not sent."""

    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Assignment | None = None


def simple_assignment(members: Mapping[str, list[str]], partitions: Mapping[str, list[int]]
                      ) -> dict[str, Assignment]:
    """SimpleAssignor: per topic, its assignable partitions spread over the members subscribed to it.

    With at least as many members as partitions every member gets one partition and partitions are shared
    round-robin; with fewer members the partitions are dealt round-robin so each is assigned once.
    """
    result: dict[str, Assignment] = {member_id: {} for member_id in members}
    for topic in sorted({name for names in members.values() for name in names}):
        parts = sorted(partitions.get(topic, ()))
        subscribers = sorted(m for m, names in members.items() if topic in names)
        if not parts or not subscribers:
            continue
        if len(subscribers) >= len(parts):
            for index, member_id in enumerate(subscribers):
                result[member_id].setdefault(topic, set()).add(parts[index % len(parts)])
        else:
            for index, partition in enumerate(parts):
                result[subscribers[index % len(subscribers)]].setdefault(topic, set()).add(partition)
    return result


class ShareGroupCoordinator:
    """Every share group of the cluster, driven by heartbeats, share fetches and the clock."""

    def __init__(self, clock: Clock, group_config: Callable[[str, str], object],
                 max_size: Callable[[], int] = lambda: 200) -> None:
        """`group_config(group_id, name)` reads a group config (its override, else the broker default);
        `max_size()` is `group.share.max.size`, the members a share group may have."""
        self.clock = clock
        self.group_config = group_config
        self.max_size = max_size
        self.groups: dict[str, ShareGroup] = {}
        # called with (group, member id) when a member leaves or times out, after its records are released
        self.on_member_removed: list[Callable[[str, str], None]] = []

    def group(self, group_id: str) -> ShareGroup | None:
        """The share group of this id, None when there is none."""
        return self.groups.get(group_id)

    def config_int(self, group_id: str, name: str) -> int:
        return int(str(self.group_config(group_id, name)))

    def heartbeat(self, group_id: str, member_id: str, member_epoch: int, *, rack_id: str | None,
                  subscribed_topic_names: list[str] | None, topics: Mapping[str, int],
                  client_id: str = "", client_host: str = "",
                  start_offset: Callable[[str, str, int], int] | None = None) -> HeartbeatResult:
        """One ShareGroupHeartbeat: join (epoch 0), heartbeat, or leave (epoch -1).

        `topics` maps each existing topic name to its partition count; `start_offset(group, topic, partition)`
        gives a newly assigned share partition its start offset (share.auto.offset.reset).
        """
        self.expire()
        if not member_id.strip():
            return HeartbeatResult(ErrorCode.INVALID_REQUEST)  # Kafka 4.3.1 sends no message here
        group = self.groups.get(group_id)
        if member_epoch == LEAVE_EPOCH:
            if group is None or member_id not in group.members:
                return HeartbeatResult(ErrorCode.UNKNOWN_MEMBER_ID,
                                       f"Member {member_id} is not a member of group {group_id}.")
            self._remove_member(group, member_id, topics, start_offset)
            return HeartbeatResult(member_id=member_id, member_epoch=LEAVE_EPOCH)
        if member_epoch == 0:
            if not subscribed_topic_names:
                return HeartbeatResult(ErrorCode.INVALID_REQUEST, "SubscribedTopicNames must be set in first request.")
            if group is None:
                group = self.groups[group_id] = ShareGroup(group_id)
            member = group.members.get(member_id)
            if member is None:
                if len(group.members) >= self.max_size():
                    return HeartbeatResult(ErrorCode.GROUP_MAX_SIZE_REACHED, "The share group has reached its "
                                           f"maximum capacity of {self.max_size()} members.")
                member = group.members[member_id] = ShareMember(member_id)
                changed = True
            else:
                changed = False
        else:
            if group is None:
                return HeartbeatResult(ErrorCode.GROUP_ID_NOT_FOUND, f"Share group {group_id} not found.")
            found = group.members.get(member_id)
            if found is None:
                return HeartbeatResult(ErrorCode.UNKNOWN_MEMBER_ID,
                                       f"Member {member_id} is not a member of group {group_id}.")
            member = found
            error = _fenced(member, member_epoch)
            if error is not None:
                return HeartbeatResult(ErrorCode.FENCED_MEMBER_EPOCH, error)
            changed = False
        member.rack_id = rack_id if rack_id is not None else member.rack_id
        member.client_id, member.client_host = client_id, client_host
        if subscribed_topic_names is not None and sorted(subscribed_topic_names) != member.subscribed_topic_names:
            member.subscribed_topic_names = sorted(subscribed_topic_names)
            changed = True
        member.session_deadline_ms = self.clock.now_ms() + self.config_int(group_id, "share.session.timeout.ms")
        self._update(group, topics, start_offset, changed or self._partition_counts_changed(group, topics))
        if member.member_epoch != group.assignment_epoch:
            member.previous_member_epoch = member.member_epoch
            member.member_epoch = group.assignment_epoch
        sent: Assignment | None = None
        if member_epoch == 0 or member.assignment != member.sent_assignment:  # Kafka sends it when it changed
            sent = member.sent_assignment = {name: set(parts) for name, parts in member.assignment.items()}
        return HeartbeatResult(member_id=member_id, member_epoch=member.member_epoch,
                               heartbeat_interval_ms=self.config_int(group_id, "share.heartbeat.interval.ms"),
                               assignment=sent)

    def expire(self) -> None:
        """Remove the members whose session ran out; their records become available again."""
        now = self.clock.now_ms()
        for group in list(self.groups.values()):
            for member_id in [m.member_id for m in group.members.values() if m.session_deadline_ms <= now]:
                self._remove_member(group, member_id, None, None)

    def delete(self, group_id: str) -> ErrorCode:
        """DeleteGroups for a share group: only an empty one."""
        group = self.groups.get(group_id)
        if group is None:
            return ErrorCode.GROUP_ID_NOT_FOUND
        if group.members:
            return ErrorCode.NON_EMPTY_GROUP
        del self.groups[group_id]
        return ErrorCode.NONE

    def share_partition(self, group_id: str, topic: str, partition: int,
                        start_offset: Callable[[str, str, int], int]) -> SharePartition:
        """The group's share partition of topic-partition, made on first use; `start_offset` gives where it starts
        at its first acquisition (a share fetch), as Kafka's SharePartition starts when first loaded."""
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = ShareGroup(group_id)
        key = (topic, partition)
        found = group.partitions.get(key)
        if found is None:
            found = group.partitions[key] = SharePartition(
                0, delivery_count_limit=self.config_int(group_id, "share.delivery.count.limit"),
                max_record_locks=self.config_int(group_id, "share.partition.max.record.locks"))
            found.pending_start = lambda: start_offset(group_id, topic, partition)
        return found

    def initialized_share_partition(self, group_id: str, topic: str, partition: int) -> SharePartition | None:
        """The group's share partition of topic-partition if an assignment has initialized it: Kafka hands out
        no records of a partition before the group coordinator initializes its share-group state."""
        group = self.groups.get(group_id)
        return group.partitions.get((topic, partition)) if group is not None else None

    def alter_start_offset(self, group_id: str, topic: str, partition: int, start_offset: int) -> None:
        """AlterShareGroupOffsets: the share partition starts afresh at `start_offset` (the group is made if it
        does not exist, as Kafka makes it)."""
        group = self.groups.get(group_id)
        if group is None:
            group = self.groups[group_id] = ShareGroup(group_id)
        fresh = group.partitions[(topic, partition)] = SharePartition(
            start_offset, delivery_count_limit=self.config_int(group_id, "share.delivery.count.limit"),
            max_record_locks=self.config_int(group_id, "share.partition.max.record.locks"))
        fresh.persisted = (start_offset, 0)

    def delete_offsets(self, group_id: str, topic: str) -> None:
        """DeleteShareGroupOffsets: the group's share partitions of `topic` go."""
        group = self.groups.get(group_id)
        if group is not None:
            for key in [k for k in group.partitions if k[0] == topic]:
                del group.partitions[key]

    def release_member(self, group_id: str, member_id: str) -> None:
        """Release every record `member_id` holds in the group (its share session closed)."""
        group = self.groups.get(group_id)
        if group is not None:
            for share_partition in group.partitions.values():
                share_partition.release_member(member_id)

    def forget_topic(self, topic: str) -> None:
        """A deleted topic: its share partitions go."""
        for group in self.groups.values():
            for key in [k for k in group.partitions if k[0] == topic]:
                del group.partitions[key]

    @staticmethod
    def _partition_counts_changed(group: ShareGroup, topics: Mapping[str, int]) -> bool:
        """Whether a subscribed topic was created, deleted or grew partitions since the last assignment."""
        return any(group.partition_counts.get(name, 0) != topics.get(name, 0) for name in group.subscribed_topics())

    def _update(self, group: ShareGroup, topics: Mapping[str, int],
                start_offset: Callable[[str, str, int], int] | None, bump: bool) -> None:
        """Move the group epoch on a change, compute a new target when one is due, then initialize the share
        partitions the subscriptions reach, as Kafka 4.3.1 does after the heartbeat: their state ready, a new
        group epoch assigns them (at the next target computation)."""
        if bump:
            # as Kafka 4.3.1 (and its consumer groups, consumer_groups.py): a group's first epoch with a
            # subscription is 2
            first = group.group_epoch == 0 and bool(group.subscribed_topics())
            group.group_epoch += 2 if first else 1
            group.partition_counts = {name: topics.get(name, 0) for name in group.subscribed_topics()}
        if group.group_epoch > group.assignment_epoch:
            self._maybe_compute_target(group)
        if start_offset is not None and self._initialize(group, start_offset):
            group.group_epoch += 1

    def _maybe_compute_target(self, group: ShareGroup) -> None:
        """A new target assignment for the group epoch, unless one was computed less than the group's
        `share.assignment.interval.ms` ago: members then stay at the last assignment epoch."""
        now, interval = self.clock.now_ms(), self.config_int(group.group_id, "share.assignment.interval.ms")
        last = group.assignment_timestamp_ms
        if last and interval and now < last + interval:
            return
        assignable: dict[str, list[int]] = {}
        for name, index in group.partitions:
            if index < group.partition_counts.get(name, 0):
                assignable.setdefault(name, []).append(index)
        targets = simple_assignment({m.member_id: m.subscribed_topic_names for m in group.members.values()},
                                    assignable)
        for member in group.members.values():
            member.assignment = targets.get(member.member_id, {})
        group.assignment_epoch = group.group_epoch
        group.assignment_timestamp_ms = now

    def _initialize(self, group: ShareGroup, start_offset: Callable[[str, str, int], int]) -> bool:
        """Initialize the share partitions of subscribed topics that have none yet; whether any was."""
        new = False
        for name, count in group.partition_counts.items():
            for index in range(count):
                if (name, index) not in group.partitions:
                    self.share_partition(group.group_id, name, index, start_offset)
                    new = True
        return new

    def _remove_member(self, group: ShareGroup, member_id: str, topics: Mapping[str, int] | None,
                       start_offset: Callable[[str, str, int], int] | None) -> None:
        del group.members[member_id]
        for share_partition in group.partitions.values():
            share_partition.release_member(member_id)
        if topics is None:  # timed out: the topics are as the last assignment saw them
            topics = group.partition_counts
        self._update(group, topics, start_offset, True)
        for callback in self.on_member_removed:
            callback(group.group_id, member_id)


def _fenced(member: ShareMember, member_epoch: int) -> str | None:
    """GroupMetadataManager.throwIfShareGroupMemberEpochIsInvalid's message, or None when the epoch is valid."""
    if member_epoch > member.member_epoch:
        return (f"The share group member has a greater member epoch ({member_epoch}) than the one known by the "
                f"group coordinator ({member.member_epoch}). The member must abandon all its partitions and rejoin.")
    if member_epoch < member.member_epoch and member_epoch != member.previous_member_epoch:
        return (f"The share group member has a smaller member epoch ({member_epoch}) than the one known by the "
                f"group coordinator ({member.member_epoch}), and it does not match the previous member epoch "
                f"({member.previous_member_epoch}). The member must abandon all its partitions and rejoin.")
    return None
