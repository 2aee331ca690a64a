"""KIP-848 consumer groups: the heartbeat state machine with plain calls and a manual clock."""

from __future__ import annotations

import pytest

from minibroker.core.assignors import range_assign, uniform_assign
from minibroker.core.clock import ManualClock
from minibroker.core.config import BrokerConfig, ConfigError
from minibroker.core.consumer_groups import (
    ConsumerGroupState,
    HeartbeatResult,
    MemberState,
)
from minibroker.core.group_coordinator import GroupCoordinator
from minibroker.protocol.errors import ErrorCode

TOPICS = {"t": 4}


def coordinator(**configs: str) -> GroupCoordinator:
    clock = ManualClock()
    return GroupCoordinator(BrokerConfig(configs), clock, lambda topic, partition: partition < TOPICS.get(topic, 0))


def beat(c: GroupCoordinator, member: str, epoch: int, owned: dict[str, set[int]] | None = None,
         topics: dict[str, int] | None = None, **details) -> HeartbeatResult:
    if epoch == 0:
        details.setdefault("rebalance_timeout_ms", 30_000)
        details.setdefault("subscribed_topic_names", ["t"])
        owned = owned if owned is not None else {}
    return c.consumer_heartbeat("g", member, epoch, owned=owned, topics=topics or TOPICS, **details)


def test_first_member_gets_every_partition_in_its_first_heartbeat():
    c = coordinator()
    result = beat(c, "a", 0)
    assert result.error is ErrorCode.NONE
    assert (result.member_id, result.member_epoch, result.heartbeat_interval_ms) == ("a", 1, 5000)
    assert result.assignment == {"t": {0, 1, 2, 3}}
    assert c.consumer.groups["g"].state is ConsumerGroupState.STABLE


def test_second_member_waits_for_revocation_before_partitions_move():
    c = coordinator()
    beat(c, "a", 0)
    joined = beat(c, "b", 0)
    # b is at the new epoch but its partitions are still owned by a: nothing yet
    assert (joined.member_epoch, joined.assignment) == (2, {})
    assert c.consumer.groups["g"].members["b"].state is MemberState.UNRELEASED_PARTITIONS
    assert c.consumer.groups["g"].state is ConsumerGroupState.RECONCILING
    # a is told to keep two partitions, at its old epoch
    revoking = beat(c, "a", 1, owned={"t": {0, 1, 2, 3}})
    assert revoking.member_epoch == 1 and revoking.assignment is not None
    kept = revoking.assignment["t"]
    assert len(kept) == 2
    # until a says it revoked the others, b gets nothing
    assert beat(c, "b", 2, owned={}).assignment is None
    done = beat(c, "a", 1, owned={"t": kept})
    assert done.member_epoch == 2
    given = beat(c, "b", 2, owned={})
    assert given.assignment == {"t": {0, 1, 2, 3} - kept}
    assert c.consumer.groups["g"].state is ConsumerGroupState.STABLE


def test_no_partition_is_owned_by_two_members_at_any_step():
    c = coordinator()
    owned = {"a": beat(c, "a", 0).assignment or {}}
    epochs = {"a": 1}
    for member in ("b", "c"):
        result = beat(c, member, 0)
        owned[member], epochs[member] = result.assignment or {}, result.member_epoch
        for _ in range(4):
            for name in list(owned):
                reply = beat(c, name, epochs[name], owned=owned[name])
                assert reply.error is ErrorCode.NONE
                epochs[name] = reply.member_epoch
                if reply.assignment is not None:
                    owned[name] = reply.assignment
                everything = [(t, p) for a in owned.values() for t, ps in a.items() for p in ps]
                assert len(everything) == len(set(everything))
    assert sorted(len(a.get("t", ())) for a in owned.values()) == [1, 1, 2]


def test_leave_frees_partitions_for_the_others():
    c = coordinator()
    beat(c, "a", 0)
    beat(c, "b", 0)
    kept = beat(c, "a", 1, owned={"t": {0, 1, 2, 3}}).assignment or {}
    beat(c, "a", 1, owned=kept)
    left = beat(c, "b", -1)
    assert (left.error, left.member_epoch) == (ErrorCode.NONE, -1)
    back = beat(c, "a", 2, owned=kept)
    assert back.assignment == {"t": {0, 1, 2, 3}} and back.member_epoch == 3


def test_fencing_by_epoch_and_unknown_member():
    c = coordinator()
    beat(c, "a", 0)
    assert beat(c, "a", 5).error is ErrorCode.FENCED_MEMBER_EPOCH
    assert beat(c, "zz", 1).error is ErrorCode.UNKNOWN_MEMBER_ID
    assert c.consumer_heartbeat("nope", "a", 1, topics=TOPICS).error is ErrorCode.GROUP_ID_NOT_FOUND


def test_previous_epoch_is_accepted_with_a_subset_of_the_assignment():
    c = coordinator()
    beat(c, "a", 0)
    beat(c, "b", 0)
    kept = beat(c, "a", 1, owned={"t": {0, 1, 2, 3}}).assignment or {}
    assert beat(c, "a", 1, owned=kept).member_epoch == 2
    # the answer with epoch 2 was lost: epoch 1 with the kept partitions is still fine
    assert beat(c, "a", 1, owned=kept).error is ErrorCode.NONE
    assert beat(c, "a", 1, owned={"t": {0, 1, 2, 3}}).error is ErrorCode.FENCED_MEMBER_EPOCH


def test_session_timeout_removes_member_on_the_clock():
    c = coordinator()
    beat(c, "a", 0)
    beat(c, "b", 0)
    c.clock.advance(44_999)  # type: ignore[attr-defined]
    beat(c, "a", 1, owned={"t": {0, 1, 2, 3}})
    c.tick()
    assert set(c.consumer.groups["g"].members) == {"a", "b"}
    c.clock.advance(1)  # type: ignore[attr-defined]
    c.tick()
    assert set(c.consumer.groups["g"].members) == {"a"}


def test_revocation_not_done_within_rebalance_timeout_fences_the_member():
    c = coordinator()
    beat(c, "a", 0, rebalance_timeout_ms=1000)
    beat(c, "b", 0)
    beat(c, "a", 1, owned={"t": {0, 1, 2, 3}})
    assert c.consumer.groups["g"].members["a"].state is MemberState.UNREVOKED_PARTITIONS
    c.clock.advance(1000)  # type: ignore[attr-defined]
    c.tick()
    assert set(c.consumer.groups["g"].members) == {"b"}
    assert beat(c, "b", 2, owned={}).assignment == {"t": {0, 1, 2, 3}}


def test_static_member_leaves_with_minus_two_and_rejoins_with_its_partitions():
    c = coordinator()
    first = beat(c, "a", 0, instance_id="i1")
    assert beat(c, "a", -2, instance_id="i1").member_epoch == -2
    epoch = c.consumer.groups["g"].group_epoch
    again = beat(c, "a2", 0, instance_id="i1")
    assert again.assignment == first.assignment and again.member_epoch == first.member_epoch
    assert c.consumer.groups["g"].group_epoch == epoch  # no rebalance
    assert set(c.consumer.groups["g"].members) == {"a2"}


def test_static_instance_id_in_use_is_unreleased():
    c = coordinator()
    beat(c, "a", 0, instance_id="i1")
    assert beat(c, "b", 0, instance_id="i1").error is ErrorCode.UNRELEASED_INSTANCE_ID


def test_regex_subscription_picks_up_a_new_topic():
    c = coordinator()
    result = beat(c, "a", 0, subscribed_topic_names=None, subscribed_topic_regex="orders-.*",
                  topics={"orders-1": 1, "other": 1})
    assert result.assignment == {"orders-1": {0}}
    later = beat(c, "a", result.member_epoch, owned={"orders-1": {0}},
                 topics={"orders-1": 1, "orders-2": 2, "other": 1})
    assert later.assignment == {"orders-1": {0}, "orders-2": {0, 1}}


def test_invalid_requests_answer_kafkas_errors():
    c = coordinator()
    assert beat(c, "a", 0, subscribed_topic_regex="(").error is ErrorCode.INVALID_REGULAR_EXPRESSION
    # RE2's syntax, as Kafka's RE2J: lookaround and backreferences are refused although Python's re takes them
    for pattern in ("orders-(?!eu).*", r"(a)\1"):
        assert beat(c, "a", 0, subscribed_topic_regex=pattern).error is ErrorCode.INVALID_REGULAR_EXPRESSION
    bad = beat(c, "a", 0, server_assignor="sticky")
    assert bad.error is ErrorCode.UNSUPPORTED_ASSIGNOR
    assert bad.message == "ServerAssignor sticky is not supported. Supported assignors: uniform, range."
    assert beat(c, "a", 0, rebalance_timeout_ms=-1).error is ErrorCode.INVALID_REQUEST
    assert beat(c, "a", -3).error is ErrorCode.INVALID_REQUEST


def test_range_server_assignor_chosen_by_the_member():
    c = coordinator()
    beat(c, "a", 0, server_assignor="range")
    beat(c, "b", 0, server_assignor="range")
    assert c.consumer.groups["g"].assignor_name == "range"
    assert c.consumer.groups["g"].target == {"a": {"t": {0, 1}}, "b": {"t": {2, 3}}}


def test_assignors_balance_and_stick():
    subs = {"a": {"t"}, "b": {"t"}, "c": {"t"}}
    result = uniform_assign(subs, {"t": 7}, {"a": {"t": {0, 1, 2, 3, 4, 5, 6}}})
    assert sorted(len(v["t"]) for v in result.values()) == [2, 2, 3]
    assert result["a"]["t"] <= {0, 1, 2, 3, 4, 5, 6}
    assert range_assign(subs, {"t": 7}, {}) == {"a": {"t": {0, 1, 2}}, "b": {"t": {3, 4}}, "c": {"t": {5, 6}}}


def test_offset_commit_and_fetch_check_member_epoch():
    c = coordinator()
    beat(c, "a", 0)
    beat(c, "b", 0)
    commit: list[tuple[str, int, int, int, str | None]] = [("t", 0, 10, -1, None)]
    assert c.commit_offsets("g", 1, "a", None, commit, api_version=9) == [ErrorCode.NONE]
    assert c.commit_offsets("g", 0, "a", None, commit, api_version=9) == [ErrorCode.STALE_MEMBER_EPOCH]
    assert c.commit_offsets("g", 3, "a", None, commit, api_version=9) == [ErrorCode.FENCED_MEMBER_EPOCH]
    assert c.commit_offsets("g", 1, "x", None, commit, api_version=9) == [ErrorCode.UNKNOWN_MEMBER_ID]
    assert c.commit_offsets("g", 1, "a", None, commit, api_version=8) == [ErrorCode.UNSUPPORTED_VERSION]
    assert c.validate_offset_fetch("g", "b", 1) is ErrorCode.STALE_MEMBER_EPOCH
    assert c.validate_offset_fetch("g", None, -1) is ErrorCode.NONE
    assert c.fetch_offsets("g", [("t", 0)])[0][2].offset == 10  # type: ignore[union-attr]


def test_group_ids_are_shared_between_protocols():
    c = coordinator(**{"group.min.session.timeout.ms": "10"})
    beat(c, "a", 0)
    joined = c.join("g", "", None, "client", "/h", 1000, 1000, "consumer", [("range", b"")], False, True)
    assert getattr(joined, "error", None) is ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    c.commit_offsets("g", 1, "a", None, [("t", 1, 5, -1, None)], api_version=9)
    beat(c, "a", -1)
    assert c.delete_groups(["g"]) == [ErrorCode.NONE]
    # a classic group's id refuses a consumer member until it is empty
    c.join("c", "", None, "client", "/h", 1000, 1000, "consumer", [("range", b"")], False, True)
    refused = c.consumer_heartbeat("c", "m", 0, rebalance_timeout_ms=1, subscribed_topic_names=["t"], owned={})
    assert (refused.error, refused.message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group c is not a consumer group")


def test_empty_classic_group_becomes_a_consumer_group_with_its_offsets():
    c = coordinator()
    c.commit_offsets("g", -1, "", None, [("t", 2, 7, -1, None)])
    assert "g" in c.groups
    assert beat(c, "a", 0).error is ErrorCode.NONE
    assert "g" not in c.groups and "g" in c.consumer.groups
    assert c.fetch_offsets("g", [("t", 2)])[0][2].offset == 7  # type: ignore[union-attr]


def test_config_bounds_are_checked_at_start_as_kafka_does():
    with pytest.raises(ConfigError, match="group.consumer.heartbeat.interval.ms must be greater than or equal"):
        coordinator(**{"group.consumer.heartbeat.interval.ms": "1000"})
    with pytest.raises(ConfigError, match="group.consumer.session.timeout.ms must be less than or equal"):
        coordinator(**{"group.consumer.session.timeout.ms": "90000"})
    with pytest.raises(ConfigError, match="Disabling the 'classic' protocol is not supported."):
        coordinator(**{"group.coordinator.rebalance.protocols": "consumer"})
    fast = coordinator(**{"group.consumer.heartbeat.interval.ms": "200",
                          "group.consumer.min.heartbeat.interval.ms": "100"})
    assert beat(fast, "a", 0).heartbeat_interval_ms == 200


def test_a_static_leave_names_the_member_holding_the_instance_id_as_kafka_does():
    c = coordinator()
    assert beat(c, "a", 0, instance_id="i1").error is ErrorCode.NONE
    fenced = beat(c, "b", -2, instance_id="i1")
    assert (fenced.error, fenced.message) == (ErrorCode.FENCED_INSTANCE_ID,
                                              "Static member b with instance id i1 was fenced by member a.")
    unknown = beat(c, "a", -2, instance_id="i9")
    assert (unknown.error, unknown.message) == (ErrorCode.UNKNOWN_MEMBER_ID, "Instance id i9 is unknown.")
