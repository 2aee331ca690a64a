"""Streams groups (KIP-1071) in the sans-IO core: topology validation and configuration, epochs, assignment and
reconciliation, on the manual clock. Statuses and messages are Kafka 4.3.1's, as the reference answered them."""

from __future__ import annotations

from minibroker.core.clock import ManualClock
from minibroker.core.config import BrokerConfig
from minibroker.core.streams_groups import StreamsGroupCoordinator, StreamsGroupState
from minibroker.core.streams_topology import StatusCode, Subtopology, TopicInfo, Topology, configure_topology
from minibroker.protocol.errors import ErrorCode

WORD_COUNT = Topology(0, (
    Subtopology("0", source_topics=("lines",), repartition_sink_topics=("app-counts-repartition",)),
    Subtopology("1", state_changelog_topics=(TopicInfo("app-counts-changelog"),),
                repartition_source_topics=(TopicInfo("app-counts-repartition"),)),
))


def _coordinator(delay_ms: int = 0, interval_ms: int = 0, **configs: str) -> tuple[StreamsGroupCoordinator,
                                                                                   ManualClock]:
    clock = ManualClock()
    config = BrokerConfig({"group.streams.initial.rebalance.delay.ms": str(delay_ms),
                           "group.streams.assignment.interval.ms": str(interval_ms), **configs}, profile="latest")
    return StreamsGroupCoordinator(config, clock), clock


class _Topics(dict[str, int]):
    def partitions_of(self, name: str) -> int | None:
        return self.get(name)


def _join(coordinator: StreamsGroupCoordinator, topics: _Topics, member_id: str, process: str = "p1",
          topology: Topology = WORD_COUNT, group: str = "app"):
    return coordinator.heartbeat(group, member_id, 0, partitions_of=topics.partitions_of, rebalance_timeout_ms=30000,
                                 topology=topology, owned_active={}, owned_standby={}, owned_warmup={},
                                 process_id=process)


def _beat(coordinator: StreamsGroupCoordinator, topics: _Topics, member_id: str, epoch: int,
          owned: dict[str, set[int]] | None = None, group: str = "app"):
    return coordinator.heartbeat(group, member_id, epoch, partitions_of=topics.partitions_of,
                                 owned_active=owned, owned_standby=None if owned is None else {},
                                 owned_warmup=None if owned is None else {})


def test_missing_source_topics_keep_the_group_not_ready() -> None:
    coordinator, _ = _coordinator()
    result = _join(coordinator, _Topics(), "m1")
    assert result.error is ErrorCode.NONE
    assert result.member_epoch == 2  # Kafka 4.3.1 takes a new group to epoch 2 at its first member
    assert result.status == [(StatusCode.MISSING_SOURCE_TOPICS, "Source topics lines are missing.")]
    assert result.assignment is not None and result.assignment.active == {}
    assert coordinator.groups["app"].state() is StreamsGroupState.NOT_READY


def test_missing_internal_topics_are_reported_for_the_caller_to_create_with_derived_partitions() -> None:
    coordinator, _ = _coordinator()
    result = _join(coordinator, _Topics(lines=3), "m1")
    # named in the order of Kafka's HashMap of them
    assert result.status == [(StatusCode.MISSING_INTERNAL_TOPICS,
                              "Internal topics are missing: app-counts-repartition, app-counts-changelog")]
    assert {name: info.partitions for name, info in result.topics_to_create.items()} == {
        "app-counts-changelog": 3, "app-counts-repartition": 3}


def test_once_the_topics_exist_every_task_goes_to_the_only_member() -> None:
    coordinator, _ = _coordinator()
    topics = _Topics(lines=3)
    first = _join(coordinator, topics, "m1")
    topics.update({name: info.partitions for name, info in first.topics_to_create.items()})
    result = _beat(coordinator, topics, "m1", first.member_epoch)
    assert result.status == []
    assert result.member_epoch == 3  # the topics changed: the group epoch moved
    assert result.assignment is not None
    assert result.assignment.active == {"0": {0, 1, 2}, "1": {0, 1, 2}}
    assert coordinator.groups["app"].state() is StreamsGroupState.STABLE


def _ready(coordinator: StreamsGroupCoordinator) -> _Topics:
    return _Topics({"lines": 2, "app-counts-repartition": 2, "app-counts-changelog": 2})


def test_a_second_member_gets_tasks_only_after_the_first_revokes_them() -> None:
    coordinator, _ = _coordinator()
    topics = _ready(coordinator)
    m1 = _join(coordinator, topics, "m1", process="p1")
    assert m1.assignment is not None and m1.assignment.active == {"0": {0, 1}, "1": {0, 1}}
    m2 = _join(coordinator, topics, "m2", process="p2")
    assert m2.member_epoch == 3
    assert m2.assignment is not None and m2.assignment.active == {}  # its tasks are still m1's
    revoke = _beat(coordinator, topics, "m1", m1.member_epoch, owned={"0": {0, 1}, "1": {0, 1}})
    assert revoke.member_epoch == 2  # revocation first, at the old epoch
    assert revoke.assignment is not None
    kept = revoke.assignment.active
    assert sum(len(p) for p in kept.values()) == 2
    done = _beat(coordinator, topics, "m1", 2, owned=kept)
    assert done.member_epoch == 3
    m2 = _beat(coordinator, topics, "m2", 3, owned={})
    assert m2.assignment is not None
    given = {(s, p) for s, parts in m2.assignment.active.items() for p in parts}
    assert given == {("0", 0), ("0", 1), ("1", 0), ("1", 1)} - {(s, p) for s, parts in kept.items() for p in parts}
    assert coordinator.groups["app"].state() is StreamsGroupState.STABLE


def test_a_leaving_member_frees_its_tasks_for_the_others() -> None:
    coordinator, _ = _coordinator()
    topics = _ready(coordinator)
    _join(coordinator, topics, "m1", process="p1")
    _join(coordinator, topics, "m2", process="p2")
    revoking = _beat(coordinator, topics, "m1", 2, owned={"0": {0, 1}, "1": {0, 1}})
    assert revoking.assignment is not None
    left = coordinator.heartbeat("app", "m2", -1, partitions_of=topics.partitions_of)
    assert (left.error, left.member_epoch) == (ErrorCode.NONE, -1)
    kept = revoking.assignment.active
    # revoked: the new epoch, but the tasks it gave up count as its own until this heartbeat is done
    result = _beat(coordinator, topics, "m1", 2, owned=kept)
    assert (result.member_epoch, result.assignment) == (4, None)
    result = _beat(coordinator, topics, "m1", 4, owned=kept)
    assert result.member_epoch == 4
    assert result.assignment is not None and result.assignment.active == {"0": {0, 1}, "1": {0, 1}}


def test_a_member_whose_session_runs_out_is_fenced() -> None:
    coordinator, clock = _coordinator()
    topics = _ready(coordinator)
    joined = _join(coordinator, topics, "m1")
    clock.advance(45_000)
    coordinator.tick()
    result = _beat(coordinator, topics, "m1", joined.member_epoch)
    assert result.error is ErrorCode.UNKNOWN_MEMBER_ID
    assert result.message == "Member m1 is not a member of group app."
    assert coordinator.groups["app"].state() is StreamsGroupState.EMPTY


def test_the_first_assignment_waits_for_the_initial_rebalance_delay() -> None:
    coordinator, clock = _coordinator(delay_ms=3000)
    topics = _ready(coordinator)
    joined = _join(coordinator, topics, "m1")
    assert joined.status == [(StatusCode.ASSIGNMENT_DELAYED,
                              "Assignment delayed due to the configured initial rebalance delay.")]
    assert joined.member_epoch == 1 and joined.assignment is not None and joined.assignment.active == {}
    group = coordinator.groups["app"]
    assert (group.group_epoch, group.assignment_epoch) == (2, 1)  # as Kafka 4.3.1 describes it
    clock.advance(3000)
    result = _beat(coordinator, topics, "m1", 1)
    assert result.status == [] and result.member_epoch == 2
    assert result.assignment is not None and result.assignment.active == {"0": {0, 1}, "1": {0, 1}}


def test_request_checks_answer_kafkas_errors() -> None:
    coordinator, _ = _coordinator()
    topics = _ready(coordinator)
    bad = Topology(0, (Subtopology("0", source_topics=("lines",),
                                   state_changelog_topics=(TopicInfo("x-changelog", partitions=2),)),))
    result = _join(coordinator, topics, "m1", topology=bad)
    assert (result.error, result.message) == (
        ErrorCode.STREAMS_INVALID_TOPOLOGY,
        "Changelog topic x-changelog must have an undefined partition count, but it is set to 2.")
    static = coordinator.heartbeat("app", "m1", 0, partitions_of=topics.partitions_of, instance_id="i",
                                   rebalance_timeout_ms=1, topology=WORD_COUNT)
    assert (static.error, static.message) == (ErrorCode.INVALID_REQUEST, "Static membership is not yet supported.")
    joined = _join(coordinator, topics, "m1")
    other = _join(coordinator, topics, "m2", topology=Topology(0, (Subtopology("0", source_topics=("lines",)),)))
    assert (other.error, other.message) == (ErrorCode.INVALID_REQUEST, "Topology updates are not supported yet.")
    again = coordinator.heartbeat("app", "m1", joined.member_epoch, partitions_of=topics.partitions_of,
                                  topology=WORD_COUNT)
    assert (again.error, again.message) == (ErrorCode.INVALID_REQUEST,
                                            "Topology can only be provided when (re-)joining.")
    fenced = _beat(coordinator, topics, "m1", 99)
    assert (fenced.error, fenced.message) == (
        ErrorCode.FENCED_MEMBER_EPOCH,
        "The streams group member has a greater member epoch (99) than the one known by the group coordinator "
        "(2). The member must abandon all its partitions and rejoin.")
    offsets = coordinator.heartbeat("app", "m1", 1, partitions_of=topics.partitions_of, task_offsets=True)
    assert (offsets.error, offsets.message) == (ErrorCode.INVALID_REQUEST, "TaskOffsets are not supported yet.")


def test_standby_tasks_go_to_another_process() -> None:
    coordinator, _ = _coordinator(**{"group.streams.num.standby.replicas": "1"})
    topics = _Topics(lines=1)
    topology = Topology(0, (Subtopology("0", source_topics=("lines",),
                                        state_changelog_topics=(TopicInfo("app-s-changelog"),)),))
    topics["app-s-changelog"] = 1
    first = _join(coordinator, topics, "m1", process="p1", topology=topology)
    assert first.assignment is not None and first.assignment.active == {"0": {0}}
    second = _join(coordinator, topics, "m2", process="p2", topology=topology)
    assert second.assignment is not None and second.assignment.standby == {"0": {0}}
    assert second.assignment.active == {}


def test_copartitioned_repartition_topics_follow_their_sources() -> None:
    topology = Topology(0, (Subtopology("0", source_topics=("a",), repartition_source_topics=(TopicInfo("r"),),
                                        copartition_groups=(((0,), (0,)),)),))
    configured = configure_topology(topology, {"a": 4}.get)
    assert configured.status is not None and configured.status[0] is StatusCode.MISSING_INTERNAL_TOPICS
    assert configured.topics_to_create["r"].partitions == 4


def test_a_changed_number_of_standby_replicas_rebalances():
    coordinator, _ = _coordinator()
    topics = _Topics({"lines": 1, "app-s-changelog": 1})
    topology = Topology(0, (Subtopology("0", source_topics=("lines",),
                                        state_changelog_topics=(TopicInfo("app-s-changelog"),)),))
    _join(coordinator, topics, "m1", process="p1", topology=topology)
    second = _join(coordinator, topics, "m2", process="p2", topology=topology)
    assert second.assignment is not None and second.assignment.standby == {}
    coordinator.config.set_group_configs("app", coordinator.config.parse_group_configs(
        {"streams.num.standby.replicas": "1"}))
    again = _beat(coordinator, topics, "m2", second.member_epoch)
    assert again.member_epoch == second.member_epoch + 1
    assert again.assignment is not None and again.assignment.standby == {"0": {0}}


def test_a_new_target_waits_for_the_assignment_interval():
    coordinator, clock = _coordinator(interval_ms=1000)
    topics = _ready(coordinator)
    first = _join(coordinator, topics, "m1", process="p1")
    assert first.assignment is not None and first.assignment.active == {"0": {0, 1}, "1": {0, 1}}
    clock.advance(500)
    second = _join(coordinator, topics, "m2", process="p2")  # within a second of the last assignment
    assert second.status == [(StatusCode.ASSIGNMENT_DELAYED,
                              "Assignment delayed due to the configured assignment interval.")]
    assert second.member_epoch == 2 and coordinator.groups["app"].state() is StreamsGroupState.ASSIGNING
    clock.advance(500)
    again = _beat(coordinator, topics, "m2", 2, owned={})
    assert again.status == [] and again.member_epoch == 3


def test_standby_tasks_only_for_stateful_subtopologies_and_only_once_released() -> None:
    # the word count: subtopology 0 is stateless, 1 keeps a store; member ids and processes as the differential
    # scenario group_streams_standby sends them, where Kafka 4.3.1 answered the same heartbeat by heartbeat
    coordinator, _ = _coordinator(**{"group.streams.num.standby.replicas": "1"})
    topics = _ready(coordinator)
    a, b = "StreamsMemberA00000000", "StreamsMemberB00000000"
    first = _join(coordinator, topics, a, process="11111111-1111-4111-8111-111111111111")
    assert first.assignment is not None
    assert (first.member_epoch, first.assignment.active, first.assignment.standby) == (
        2, {"0": {0, 1}, "1": {0, 1}}, {})  # no other process to hold a standby
    joined = _join(coordinator, topics, b, process="22222222-2222-4222-8222-222222222222")
    assert joined.assignment is not None  # its active tasks are still a's; the standby is free at once
    assert (joined.member_epoch, joined.assignment.active, joined.assignment.standby) == (3, {}, {"1": {0}})
    revoking = _beat(coordinator, topics, a, 2, owned={"0": {0, 1}, "1": {0, 1}})
    assert revoking.assignment is not None
    assert (revoking.member_epoch, revoking.assignment.active, revoking.assignment.standby) == (
        2, {"0": {0}, "1": {0}}, {})
    # revoked: the new epoch, but its standby waits while its own process still ran that task as active
    revoked = _beat(coordinator, topics, a, 2, owned={"0": {0}, "1": {0}})
    assert (revoked.member_epoch, revoked.assignment) == (3, None)
    taken = coordinator.heartbeat("app", b, 3, partitions_of=topics.partitions_of, owned_active={},
                                  owned_standby={"1": {0}}, owned_warmup={})
    assert taken.assignment is not None
    assert (taken.member_epoch, taken.assignment.active, taken.assignment.standby) == (
        3, {"0": {1}, "1": {1}}, {"1": {0}})
    standby = _beat(coordinator, topics, a, 3, owned={"0": {0}, "1": {0}})
    assert standby.assignment is not None
    assert (standby.assignment.active, standby.assignment.standby) == ({"0": {0}, "1": {0}}, {"1": {1}})
    assert coordinator.groups["app"].state() is StreamsGroupState.STABLE
