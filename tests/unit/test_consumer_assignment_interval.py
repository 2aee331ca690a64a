"""Kafka 4.3's consumer.assignment.interval.ms on the manual clock: a new target assignment at most once per
interval, the first epochs of a group as the reference broker gives them, and releases before 4.3 unchanged.

The values come from Kafka 4.3.1 answering the same heartbeats (tests/differential/scenarios/
group_consumer_assignment_interval.json compares them on the wire).
"""

from __future__ import annotations

from minibroker.core.clock import ManualClock
from minibroker.core.config import BrokerConfig
from minibroker.core.consumer_groups import ConsumerGroupState, HeartbeatResult
from minibroker.core.group_coordinator import GroupCoordinator

TOPICS = {"t": 2, "u": 2}


def coordinator(profile: str | None = "latest", **configs: str) -> tuple[GroupCoordinator, ManualClock]:
    clock = ManualClock()
    config = BrokerConfig(configs, profile=profile)
    return GroupCoordinator(config, clock, lambda topic, p: p < TOPICS.get(topic, 0)), clock


def join(c: GroupCoordinator, member: str, topics: list[str]) -> HeartbeatResult:
    return c.consumer_heartbeat("g", member, 0, rebalance_timeout_ms=60_000, subscribed_topic_names=topics,
                                owned={}, topics=TOPICS)


def beat(c: GroupCoordinator, member: str, epoch: int, owned: dict[str, set[int]]) -> HeartbeatResult:
    return c.consumer_heartbeat("g", member, epoch, owned=owned, topics=TOPICS)


def test_a_group_first_joined_with_topics_starts_at_epoch_2_and_with_none_at_1():
    c, _ = coordinator()
    first = join(c, "a", ["t"])
    assert (first.member_epoch, first.assignment) == (2, {"t": {0, 1}})
    c2, _ = coordinator()
    assert join(c2, "a", []).member_epoch == 1


def test_a_second_member_within_the_interval_waits_for_the_next_target():
    c, clock = coordinator()
    join(c, "a", ["t"])
    clock.advance(999)
    second = join(c, "b", ["t"])
    assert (second.member_epoch, second.assignment) == (2, {})
    group = c.consumer.groups["g"]
    assert (group.state, group.group_epoch, group.assignment_epoch) == (ConsumerGroupState.ASSIGNING, 3, 2)
    assert beat(c, "a", 2, {"t": {0, 1}}).assignment is None  # still inside the interval: nothing new
    clock.advance(1)
    revoking = beat(c, "a", 2, {"t": {0, 1}})  # the interval is over: this heartbeat computes the target
    assert (revoking.member_epoch, revoking.assignment) == (2, {"t": {0}})  # keeps its first partition
    assert beat(c, "b", 2, {}).member_epoch == 3
    assert beat(c, "a", 2, {"t": {0}}).member_epoch == 3
    assert beat(c, "b", 3, {}).assignment == {"t": {1}}
    assert group.state is ConsumerGroupState.STABLE


def test_a_subscription_change_within_the_interval_keeps_the_old_target():
    c, clock = coordinator()
    join(c, "a", ["t"])
    changed = c.consumer_heartbeat("g", "a", 2, subscribed_topic_names=["t", "u"], owned={"t": {0, 1}},
                                   topics=TOPICS)
    assert (changed.member_epoch, changed.assignment) == (2, None)
    clock.advance(1000)
    assert beat(c, "a", 2, {"t": {0, 1}}).assignment == {"t": {0, 1}, "u": {0, 1}}


def test_a_group_that_subscribed_to_nothing_assigns_a_newcomer_at_once():
    c, _ = coordinator()
    join(c, "a", [])
    second = join(c, "b", ["t"])
    assert (second.member_epoch, second.assignment) == (2, {"t": {0, 1}})


def test_the_group_config_sets_the_interval_and_0_computes_at_once():
    c, clock = coordinator()
    c.config.groups["g"] = {"consumer.assignment.interval.ms": 0}
    join(c, "a", ["t"])
    assert join(c, "b", ["t"]).member_epoch == 3


def test_a_release_before_4_3_assigns_at_once_and_starts_at_epoch_1():
    c, _ = coordinator(profile="4.2")
    assert join(c, "a", ["t"]).member_epoch == 1
    assert join(c, "b", ["t"]).member_epoch == 2
