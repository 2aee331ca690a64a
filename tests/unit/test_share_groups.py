"""Share groups (KIP-932) with a manual clock: joins, epochs, the simple assignor, sessions and timeouts."""

from __future__ import annotations

from minibroker.core.clock import ManualClock
from minibroker.core.share_groups import ShareGroupCoordinator, simple_assignment
from minibroker.core.share_sessions import ShareSessionCache
from minibroker.protocol.errors import ErrorCode

DEFAULTS = {"share.session.timeout.ms": 45_000, "share.heartbeat.interval.ms": 5_000,
            "share.assignment.interval.ms": 1000, "share.delivery.count.limit": 5,
            "share.partition.max.record.locks": 2000}


def _coordinator(clock: ManualClock) -> ShareGroupCoordinator:
    return ShareGroupCoordinator(clock, lambda _group, name: DEFAULTS[name])


def _join(c: ShareGroupCoordinator, member: str, topics: dict[str, int] | None = None):  # type: ignore[no-untyped-def]
    return c.heartbeat("g", member, 0, rack_id=None, subscribed_topic_names=["t"], topics=topics or {"t": 1},
                       start_offset=lambda *_: 0)


def _beat(c: ShareGroupCoordinator, member: str, epoch: int):  # type: ignore[no-untyped-def]
    return c.heartbeat("g", member, epoch, rack_id=None, subscribed_topic_names=None, topics={"t": 1},
                       start_offset=lambda *_: 0)


def test_every_member_gets_the_one_partition_with_kafkas_epochs():
    """The epochs and assignments Kafka 4.3.1 answered to the same heartbeats 0.5 s apart."""
    clock = ManualClock()
    c = _coordinator(clock)
    first = _join(c, "a")  # the share partition is initialized after this heartbeat's target
    assert (first.error, first.member_epoch, first.assignment) == (ErrorCode.NONE, 2, {})
    clock.advance(500)
    assert (_beat(c, "a", 2).member_epoch, _beat(c, "a", 2).assignment) == (2, None)  # within the interval
    clock.advance(500)
    got = _beat(c, "a", 2)
    assert (got.member_epoch, got.assignment, got.heartbeat_interval_ms) == (3, {"t": {0}}, 5_000)
    clock.advance(500)
    second = _join(c, "b")
    assert (second.member_epoch, second.assignment) == (3, {})  # the last target has no place for it yet
    clock.advance(500)
    got = _beat(c, "b", 3)
    assert (got.member_epoch, got.assignment) == (4, {"t": {0}})
    got = _beat(c, "a", 3)
    assert (got.member_epoch, got.assignment) == (4, None)  # the same partition: not sent again


def test_simple_assignor_deals_partitions_when_members_are_fewer() -> None:
    assert simple_assignment({"a": ["t"], "b": ["t"]}, {"t": [0, 1, 2, 3]}) == {
        "a": {"t": {0, 2}}, "b": {"t": {1, 3}}}
    assert simple_assignment({"a": ["t"], "b": ["t"], "c": ["t"]}, {"t": [0, 1]}) == {
        "a": {"t": {0}}, "b": {"t": {1}}, "c": {"t": {0}}}


def test_stale_or_future_epoch_is_fenced() -> None:
    clock = ManualClock()
    c = _coordinator(clock)
    _join(c, "a")  # epoch 2
    clock.advance(1000)
    assert _beat(c, "a", 2).member_epoch == 3
    assert _beat(c, "a", 2).error is ErrorCode.NONE  # the previous epoch is still accepted (a lost answer)
    stale = _beat(c, "a", 1)
    assert (stale.error, stale.message) == (
        ErrorCode.FENCED_MEMBER_EPOCH, "The share group member has a smaller member epoch (1) than the one known by "
        "the group coordinator (3), and it does not match the previous member epoch (2). The member must abandon all "
        "its partitions and rejoin.")
    assert _beat(c, "a", 7).error is ErrorCode.FENCED_MEMBER_EPOCH
    unknown = c.heartbeat("nope", "a", 3, rack_id=None, subscribed_topic_names=None, topics={"t": 1})
    assert (unknown.error, unknown.message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Share group nope not found.")


def test_member_that_times_out_releases_its_records() -> None:
    clock = ManualClock()
    c = _coordinator(clock)
    _join(c, "a")
    _join(c, "b")
    sp = c.initialized_share_partition("g", "t", 0)
    assert sp is not None and sp.acquire("a", 0, 3, 10, 30_000, clock.now_ms())
    clock.advance(40_000)
    _beat(c, "b", 2)
    clock.advance(10_000)  # a has not heartbeated for 50 s
    c.expire()
    assert set(c.groups["g"].members) == {"b"}
    assert [r.delivery_count for r in sp.acquire("b", 0, 3, 10, 30_000, clock.now_ms())] == [2]


def test_leave_and_delete() -> None:
    c = _coordinator(ManualClock())
    _join(c, "a")
    assert c.delete("g") is ErrorCode.NON_EMPTY_GROUP
    left = _beat(c, "a", -1)
    assert (left.error, left.member_epoch) == (ErrorCode.NONE, -1)
    assert c.groups["g"].state == "Empty"
    assert c.delete("g") is ErrorCode.NONE and "g" not in c.groups


def test_share_session_epochs() -> None:
    cache = ShareSessionCache(max_sessions=1)
    assert cache.check("g", "a", 1) is ErrorCode.SHARE_SESSION_NOT_FOUND
    session, replaced = cache.open("g", "a")
    assert session is not None and replaced is None and session.epoch == 1
    assert cache.check("g", "a", 2) is ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert cache.check("g", "a", 1) is ErrorCode.NONE
    cache.advance(session)
    assert cache.check("g", "a", 1) is ErrorCode.INVALID_SHARE_SESSION_EPOCH
    assert cache.open("g", "b") == (None, None)  # the cache is full
    assert cache.close("g", "a") is session
