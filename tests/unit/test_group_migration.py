"""KIP-848 online migration between classic and consumer groups, with plain calls and a manual clock."""

from __future__ import annotations

from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from minibroker.core.classic_group import GroupState
from minibroker.core.clock import ManualClock
from minibroker.core.config import BrokerConfig
from minibroker.core.consumer_groups import MemberState
from minibroker.core.group_coordinator import GroupCoordinator, JoinResult, SyncResult
from minibroker.core.pending import Pending
from minibroker.protocol.errors import ErrorCode
from minibroker.testing import TEST_BROKER_CONFIG

TOPICS = {"t": 4}


def coordinator(**configs: str) -> tuple[GroupCoordinator, ManualClock]:
    clock = ManualClock()
    c = GroupCoordinator(BrokerConfig({**TEST_BROKER_CONFIG, **configs}), clock,
                         lambda topic, partition: partition < TOPICS.get(topic, 0))
    return c, clock


def subscription(owned: dict[str, set[int]] | None = None) -> bytes:
    owned_partitions = [ConsumerProtocolSubscription.TopicPartition(topic=t, partitions=sorted(ps))
                        for t, ps in sorted((owned or {}).items())]
    return bytes(ConsumerProtocolSubscription(version=1, topics=["t"], user_data=None,
                                              owned_partitions=owned_partitions).encode(version=1))


def assignment_bytes(partitions: set[int]) -> bytes:
    tps = [ConsumerProtocolAssignment.TopicPartition(topic="t", partitions=sorted(partitions))] if partitions else []
    return bytes(ConsumerProtocolAssignment(version=1, assigned_partitions=tps, user_data=None).encode(version=1))


def partitions_of(blob: bytes) -> set[int]:
    decoded = ConsumerProtocolAssignment.decode(blob)
    return {p for tp in decoded.assigned_partitions for p in tp.partitions}


def join(c: GroupCoordinator, member_id: str = "", owned: dict[str, set[int]] | None = None,
         instance_id: str | None = None, require_known: bool = False) -> JoinResult:
    result = c.join("g", member_id, instance_id, "client", "/h", 10_000, 30_000, "consumer",
                    [("range", subscription(owned))], require_known, True, topics=TOPICS)
    if isinstance(result, Pending):  # a classic group's join completes at once when every member is in
        assert result.done
        result = result.result()
    assert isinstance(result, JoinResult)
    return result


def sync(c: GroupCoordinator, joined: JoinResult, assignments: list[tuple[str, bytes]] | None = None) -> SyncResult:
    result = c.sync("g", joined.generation_id, joined.member_id, None, "consumer", "range", assignments or [])
    if isinstance(result, Pending):
        assert result.done
        result = result.result()
    assert isinstance(result, SyncResult)
    return result


def beat(c: GroupCoordinator, member_id: str, epoch: int, owned: dict[str, set[int]] | None = None,
         instance_id: str | None = None):
    details: dict = {"topics": TOPICS, "instance_id": instance_id}
    if epoch == 0:
        details.update(rebalance_timeout_ms=30_000, subscribed_topic_names=["t"], owned={})
    elif owned is not None:
        details["owned"] = owned
    return c.consumer_heartbeat("g", member_id, epoch, **details)


def stable_classic_member(c: GroupCoordinator) -> JoinResult:
    joined = join(c)
    assert joined.error is ErrorCode.NONE and joined.leader == joined.member_id
    synced = sync(c, joined, [(joined.member_id, assignment_bytes({0, 1, 2, 3}))])
    assert synced.error is ErrorCode.NONE
    assert c.groups["g"].state is GroupState.STABLE
    return joined


def test_upgrade_shares_partitions_without_double_ownership_then_downgrade_on_leave() -> None:
    c, _clock = coordinator()
    a = stable_classic_member(c)
    c.commit_offsets("g", a.generation_id, a.member_id, None, [("t", 0, 5, -1, None)])
    # a consumer-protocol member joins: the classic group becomes a consumer group, offsets and all
    first = beat(c, "b", 0)
    assert first.error is ErrorCode.NONE
    assert "g" not in c.groups and "g" in c.consumer.groups
    modern = c.consumer.groups["g"]
    assert modern.members[a.member_id].classic is not None
    assert first.assignment == {}  # everything is still a's: b waits for a to give its share back
    assert c.fetch_offsets("g", [("t", 0)])[0][2].offset == 5  # type: ignore[union-attr]
    # the classic member learns of the rebalance through its heartbeat and rejoins (an eager client owns nothing)
    assert c.heartbeat("g", a.generation_id, a.member_id, None) is ErrorCode.REBALANCE_IN_PROGRESS
    rejoined = join(c, a.member_id)
    assert (rejoined.error, rejoined.leader, rejoined.members) == (ErrorCode.NONE, "", [])
    assert rejoined.generation_id == modern.group_epoch
    kept = partitions_of(sync(c, rejoined).assignment)
    given = beat(c, "b", first.member_epoch, owned={})
    assert given.assignment is not None
    mine = given.assignment.get("t", set())
    assert kept and mine and not (kept & mine) and kept | mine == {0, 1, 2, 3}
    assert c.heartbeat("g", rejoined.generation_id, a.member_id, None) is ErrorCode.NONE
    # a classic member commits with its generation, which is its member epoch
    assert c.commit_offsets("g", rejoined.generation_id, a.member_id, None, [("t", 1, 7, -1, None)],
                            api_version=8) == [ErrorCode.NONE]
    assert c.commit_offsets("g", rejoined.generation_id - 1, a.member_id, None, [("t", 1, 7, -1, None)],
                            api_version=8) == [ErrorCode.ILLEGAL_GENERATION]
    # the last consumer-protocol member leaves: the group is classic again and rebalances
    assert beat(c, "b", given.member_epoch).error is ErrorCode.NONE
    left = c.consumer_heartbeat("g", "b", -1)
    assert left.error is ErrorCode.NONE
    assert "g" not in c.consumer.groups and c.groups["g"].state is GroupState.PREPARING_REBALANCE
    assert c.fetch_offsets("g", [("t", 1)])[0][2].offset == 7  # type: ignore[union-attr]
    classic = c.groups["g"]
    # converted at the epoch it had: the classic member's generation still matches, and it is told to rejoin
    assert classic.generation_id == rejoined.generation_id
    assert c.heartbeat("g", rejoined.generation_id, a.member_id, None) is ErrorCode.REBALANCE_IN_PROGRESS
    again = c.join("g", a.member_id, None, "client", "/h", 10_000, 30_000, "consumer", [("range", subscription())],
                   True, True)
    assert isinstance(again, Pending) and again.done
    answer = again.result()
    assert answer.error is ErrorCode.NONE and answer.leader == a.member_id
    assert sync(c, answer, [(a.member_id, assignment_bytes({0, 1, 2, 3}))]).error is ErrorCode.NONE


def test_cooperative_classic_member_revokes_before_the_new_member_gets_partitions() -> None:
    c, _clock = coordinator()
    a = stable_classic_member(c)
    b = beat(c, "b", 0)
    assert c.heartbeat("g", a.generation_id, a.member_id, None) is ErrorCode.REBALANCE_IN_PROGRESS
    # a cooperative client rejoins still owning everything: it keeps its epoch until it has revoked
    rejoined = join(c, a.member_id, owned={"t": {0, 1, 2, 3}})
    member = c.consumer.groups["g"].members[a.member_id]
    assert member.state is MemberState.UNREVOKED_PARTITIONS and rejoined.generation_id == a.generation_id
    kept = partitions_of(sync(c, rejoined).assignment)
    assert len(kept) == 2
    assert beat(c, "b", b.member_epoch, owned={}).assignment in (None, {})  # nothing free yet
    assert c.heartbeat("g", rejoined.generation_id, a.member_id, None) is ErrorCode.REBALANCE_IN_PROGRESS
    done = join(c, a.member_id, owned={"t": kept})
    assert done.generation_id == c.consumer.groups["g"].group_epoch
    assert partitions_of(sync(c, done).assignment) == kept
    given = beat(c, "b", b.member_epoch, owned={})
    assert given.assignment == {"t": {0, 1, 2, 3} - kept}


def test_classic_member_joins_a_consumer_group() -> None:
    c, _clock = coordinator()
    b = beat(c, "b", 0)
    required = join(c, require_known=True)
    assert required.error is ErrorCode.MEMBER_ID_REQUIRED and required.member_id
    joined = join(c, required.member_id)
    assert joined.error is ErrorCode.NONE and joined.protocol_type == "consumer" and joined.protocol_name == "range"
    assert partitions_of(sync(c, joined).assignment) == set()  # b must give its half back first
    beat(c, "b", b.member_epoch, owned={"t": {0, 1, 2, 3}})
    beat(c, "b", b.member_epoch, owned={"t": {0, 1}} if c.consumer.groups["g"].members["b"].assigned == {
        "t": {0, 1}} else {"t": {2, 3}})
    assert c.heartbeat("g", joined.generation_id, joined.member_id, None) is ErrorCode.REBALANCE_IN_PROGRESS
    again = join(c, joined.member_id)
    assert len(partitions_of(sync(c, again).assignment)) == 2
    # a consumer-protocol member is not served by the classic APIs
    assert c.heartbeat("g", b.member_epoch, "b", None) is ErrorCode.UNKNOWN_MEMBER_ID
    # a classic member leaves with LeaveGroup; the group stays a consumer group around b
    assert c.leave("g", [(joined.member_id, None)]) == (ErrorCode.NONE, [ErrorCode.NONE])
    assert "g" in c.consumer.groups and list(c.consumer.groups["g"].members) == ["b"]


def test_classic_member_that_does_not_rejoin_is_fenced_after_its_rebalance_timeout() -> None:
    c, clock = coordinator()
    a = stable_classic_member(c)
    beat(c, "b", 0)
    assert c.heartbeat("g", a.generation_id, a.member_id, None) is ErrorCode.REBALANCE_IN_PROGRESS
    clock.advance(29_000)
    assert c.heartbeat("g", a.generation_id, a.member_id, None) is ErrorCode.REBALANCE_IN_PROGRESS
    clock.advance(1_000)
    c.tick()
    assert a.member_id not in c.consumer.groups["g"].members


def test_migration_policy_refusals() -> None:
    c, _clock = coordinator(**{"group.consumer.migration.policy": "DOWNGRADE"})
    stable_classic_member(c)
    refused = beat(c, "b", 0)
    assert (refused.error, refused.message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group g is not a consumer group")
    assert c.groups["g"].state is GroupState.STABLE
    # no downgrade: the consumer group keeps its classic member when the last consumer-protocol member goes
    c, _clock = coordinator(**{"group.consumer.migration.policy": "upgrade"})
    a = stable_classic_member(c)
    b = beat(c, "b", 0)
    assert c.consumer_heartbeat("g", "b", -1).error is ErrorCode.NONE
    assert "g" in c.consumer.groups and list(c.consumer.groups["g"].members) == [a.member_id]
    assert b.error is ErrorCode.NONE


def test_refused_heartbeat_leaves_the_classic_group_as_it_was() -> None:
    c, _clock = coordinator(**{"group.consumer.max.size": "1"})
    stable_classic_member(c)
    refused = beat(c, "b", 0)
    assert refused.error is ErrorCode.GROUP_MAX_SIZE_REACHED
    assert "g" in c.groups and "g" not in c.consumer.groups and c.groups["g"].state is GroupState.STABLE


def test_classic_group_not_using_the_consumer_protocol_is_not_upgraded() -> None:
    c, _clock = coordinator()
    joined = c.join("g", "", None, "client", "/h", 10_000, 30_000, "connect", [("default", b"x")], False, True)
    assert isinstance(joined, Pending) and joined.done and joined.result().error is ErrorCode.NONE
    refused = beat(c, "b", 0)
    assert (refused.error, refused.message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group g is not a consumer group")


def test_classic_member_that_does_not_sync_is_fenced_after_its_rebalance_timeout() -> None:
    c, clock = coordinator()
    beat(c, "b", 0)
    joined = join(c, "late")
    for _ in range(3):  # heartbeats keep its session (10 s) alive, but not past the sync deadline (30 s)
        clock.advance(9_000)
        assert c.heartbeat("g", joined.generation_id, "late", None) is ErrorCode.NONE
    clock.advance(2_999)
    c.tick()
    assert "late" in c.consumer.groups["g"].members
    clock.advance(1)
    c.tick()
    assert "late" not in c.consumer.groups["g"].members
    prompt = join(c, "prompt")
    assert sync(c, prompt).error is ErrorCode.NONE
    for _ in range(4):
        clock.advance(9_000)
        assert c.heartbeat("g", prompt.generation_id, "prompt", None) is ErrorCode.NONE
        beat(c, "b", c.consumer.groups["g"].members["b"].member_epoch)  # b's session too
    c.tick()
    assert "prompt" in c.consumer.groups["g"].members


def test_classic_static_member_replacing_the_last_consumer_member_downgrades_without_rebalance() -> None:
    c, _clock = coordinator()
    a = stable_classic_member(c)
    static = beat(c, "s", 0, instance_id="i1")
    assert static.error is ErrorCode.NONE and "g" in c.consumer.groups
    assert c.consumer_heartbeat("g", "s", -2, instance_id="i1").error is ErrorCode.NONE  # keeps its place
    assert "g" in c.consumer.groups
    epoch = c.consumer.groups["g"].group_epoch
    joined = join(c, instance_id="i1")
    assert joined.error is ErrorCode.NONE and joined.generation_id == epoch
    classic = c.groups["g"]
    assert (classic.state, classic.generation_id) == (GroupState.STABLE, epoch)
    assert set(classic.members) == {a.member_id, joined.member_id}
    assert sync(c, joined).error is ErrorCode.NONE
