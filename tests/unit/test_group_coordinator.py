"""The group coordinator's state machine with plain calls and a manual clock."""

from __future__ import annotations

from minibroker.core.classic_group import GroupState
from minibroker.core.clock import ManualClock
from minibroker.core.config import BrokerConfig
from minibroker.core.group_coordinator import GroupCoordinator, JoinResult
from minibroker.core.pending import Pending
from minibroker.protocol.errors import ErrorCode
from minibroker.testing import TEST_BROKER_CONFIG

PROTOCOLS = [("range", b"r"), ("roundrobin", b"rr")]


def coordinator(**configs: str) -> GroupCoordinator:
    settings = {**TEST_BROKER_CONFIG, "group.min.session.timeout.ms": "10", **configs}
    return GroupCoordinator(BrokerConfig(settings), ManualClock(), lambda topic, partition: topic == "t")


def join(c: GroupCoordinator, member_id: str = "", protocols=PROTOCOLS, session: int = 1000,
         rebalance: int = 5000, instance: str | None = None):
    return c.join("g", member_id, instance, "client", "/127.0.0.1", session, rebalance, "consumer", protocols,
                  require_known_member_id=False, supports_skip_assignment=True)


def joined(result) -> JoinResult:
    assert isinstance(result, Pending) and result.done
    return result.result()


def test_first_member_completes_join_at_once_and_leads():
    c = coordinator()
    first = joined(join(c))
    assert (first.error, first.generation_id, first.protocol_name) == (ErrorCode.NONE, 1, "range")
    assert first.leader == first.member_id
    assert c.groups["g"].state is GroupState.COMPLETING_REBALANCE


def test_initial_rebalance_delay_holds_the_first_join():
    c = coordinator(**{"group.initial.rebalance.delay.ms": "3000"})
    waiting = join(c)
    assert isinstance(waiting, Pending) and not waiting.done
    c.clock.advance(2999)
    c.tick()
    assert not waiting.done
    c.clock.advance(1)
    c.tick()
    assert joined(waiting).generation_id == 1


def test_member_that_does_not_rejoin_is_dropped_at_the_rebalance_timeout():
    c = coordinator()
    first = joined(join(c))
    c.sync("g", 1, first.member_id, None, None, None, [(first.member_id, b"a")])
    second = join(c)  # a newcomer: the first member must rejoin
    assert isinstance(second, Pending) and not second.done
    c.clock.advance(5000)
    c.tick()
    result = joined(second)
    assert result.generation_id == 2 and result.leader == result.member_id
    assert first.member_id not in c.groups["g"].members


def test_protocol_is_the_one_every_member_supports_by_vote():
    c = coordinator()
    first = joined(join(c))
    c.sync("g", 1, first.member_id, None, None, None, [])
    second = join(c, protocols=[("roundrobin", b"x")])
    rejoined = join(c, member_id=first.member_id)
    assert joined(rejoined).protocol_name == joined(second).protocol_name == "roundrobin"


def test_session_expiry_empties_the_group_and_heartbeats_keep_it():
    c = coordinator()
    member = joined(join(c, session=1000))
    c.sync("g", 1, member.member_id, None, None, None, [])
    for _ in range(5):
        c.clock.advance(900)
        assert c.heartbeat("g", 1, member.member_id, None) is ErrorCode.NONE
        c.tick()
    c.clock.advance(1000)
    c.tick()
    assert c.groups["g"].state is GroupState.EMPTY
    assert c.heartbeat("g", 1, member.member_id, None) is ErrorCode.UNKNOWN_MEMBER_ID


def test_sync_waits_for_the_leader_and_rebalance_answers_waiting_syncs():
    c = coordinator()
    first = joined(join(c))
    c.sync("g", 1, first.member_id, None, None, None, [])
    second_join = join(c)
    joined(join(c, member_id=first.member_id))
    second = joined(second_join)
    follower_id = second.member_id if second.leader != second.member_id else first.member_id
    waiting = c.sync("g", 2, follower_id, None, None, None, [])
    assert isinstance(waiting, Pending) and not waiting.done
    leader_id = second.leader
    c.sync("g", 2, leader_id, None, None, None, [(follower_id, b"yours"), (leader_id, b"mine")])
    assert waiting.done and waiting.result().assignment == b"yours"


def test_offsets_of_an_empty_group_expire_after_retention():
    c = coordinator(**{"offsets.retention.minutes": "1"})
    assert c.commit_offsets("g", -1, "", None, [("t", 0, 5, -1, None), ("x", 0, 1, -1, None)]) == [
        ErrorCode.NONE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
    c.clock.advance(59_999)
    c.expire_offsets()
    assert c.fetch_offsets("g", [("t", 0)])[0][2] is not None
    c.clock.advance(1)
    c.expire_offsets()
    assert "g" not in c.groups


def test_the_first_offset_expiry_sweep_waits_a_check_interval_so_a_kip394_member_can_rejoin():
    # Kafka schedules the first cleanup offsets.retention.check.interval.ms after the coordinator loads; a
    # sweep on the first tick deleted a group whose only member was waiting to rejoin with its new id
    c = coordinator(**{"offsets.retention.check.interval.ms": "1000"})
    first = c.join("g", "", None, "client", "/127.0.0.1", 1000, 5000, "consumer", PROTOCOLS,
                   require_known_member_id=True, supports_skip_assignment=True)
    assert first.error is ErrorCode.MEMBER_ID_REQUIRED
    c.clock.advance(999)
    c.tick()
    rejoined = c.join("g", first.member_id, None, "client", "/127.0.0.1", 1000, 5000, "consumer", PROTOCOLS,
                      require_known_member_id=True, supports_skip_assignment=True)
    assert joined(rejoined).error is ErrorCode.NONE


def test_commit_during_completing_rebalance_is_rebalance_in_progress():
    c = coordinator()
    member = joined(join(c))
    assert c.commit_offsets("g", 1, member.member_id, None, [("t", 0, 1, -1, None)]) == [
        ErrorCode.REBALANCE_IN_PROGRESS]


def test_member_that_never_rejoins_is_dropped_at_its_session_timeout_not_the_rebalance_timeout():
    c = coordinator()
    first = joined(join(c, session=1000, rebalance=300_000))
    c.sync("g", 1, first.member_id, None, None, None, [])
    second = join(c, session=1000, rebalance=300_000)  # the first member has crashed and never rejoins
    assert isinstance(second, Pending) and not second.done
    c.clock.advance(1000)
    c.tick()
    result = joined(second)
    assert result.generation_id == 2 and list(c.groups["g"].members) == [result.member_id]
