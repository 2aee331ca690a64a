"""SharePartition (KIP-932) with a manual clock: acquisition, locks, delivery counts, acknowledgements."""

from __future__ import annotations

from minibroker.core.clock import ManualClock
from minibroker.core.share_partition import AcquiredRange, RecordState, SharePartition
from minibroker.protocol.errors import ErrorCode

LOCK = 30_000
ACCEPT, RELEASE, REJECT, RENEW = 1, 2, 3, 4


def _acquire(sp: SharePartition, clock: ManualClock, member: str, upper: int = 10, max_records: int = 100
             ) -> list[AcquiredRange]:
    return sp.acquire(member, 0, upper, max_records, LOCK, clock.now_ms())


def test_records_are_acquired_by_one_member_at_a_time() -> None:
    clock, sp = ManualClock(), SharePartition(0)
    assert _acquire(sp, clock, "a", max_records=3) == [AcquiredRange(0, 2, 1)]
    assert _acquire(sp, clock, "b", max_records=3) == [AcquiredRange(3, 5, 1)]
    assert _acquire(sp, clock, "c") == [AcquiredRange(6, 9, 1)]
    assert _acquire(sp, clock, "a") == []


def test_accepted_records_advance_the_start_offset() -> None:
    clock, sp = ManualClock(), SharePartition(0)
    _acquire(sp, clock, "a", max_records=4)
    assert sp.acknowledge("a", 0, 1, [ACCEPT], LOCK, clock.now_ms()) == (ErrorCode.NONE, None)
    assert sp.start_offset == 2
    assert sp.acknowledge("a", 3, 3, [ACCEPT], LOCK, clock.now_ms()) == (ErrorCode.NONE, None)
    assert sp.start_offset == 2  # offset 2 is still acquired
    assert sp.acknowledge("a", 2, 2, [REJECT], LOCK, clock.now_ms()) == (ErrorCode.NONE, None)
    assert sp.start_offset == 4 and sp.in_flight == {}


def test_released_record_is_redelivered_with_a_higher_delivery_count() -> None:
    clock, sp = ManualClock(), SharePartition(0)
    _acquire(sp, clock, "a", upper=3)
    sp.acknowledge("a", 0, 2, [ACCEPT, RELEASE, ACCEPT], LOCK, clock.now_ms())
    assert sp.state_of(1) is RecordState.AVAILABLE
    assert _acquire(sp, clock, "b", upper=3) == [AcquiredRange(1, 1, 2)]


def test_rejected_record_is_never_delivered_again() -> None:
    clock, sp = ManualClock(), SharePartition(0)
    _acquire(sp, clock, "a", upper=2)
    sp.acknowledge("a", 0, 1, [REJECT, RELEASE], LOCK, clock.now_ms())
    assert sp.start_offset == 1  # archived, so the start offset moved past it
    assert _acquire(sp, clock, "b", upper=2) == [AcquiredRange(1, 1, 2)]


def test_lock_runs_out_on_the_clock_and_records_come_back() -> None:
    clock, sp = ManualClock(), SharePartition(0)
    _acquire(sp, clock, "a", upper=2)
    clock.advance(LOCK - 1)
    assert _acquire(sp, clock, "b", upper=2) == []
    clock.advance(1)
    assert _acquire(sp, clock, "b", upper=2) == [AcquiredRange(0, 1, 2)]
    assert sp.acknowledge("a", 0, 0, [ACCEPT], LOCK, clock.now_ms())[0] is ErrorCode.INVALID_RECORD_STATE


def test_renew_extends_the_lock() -> None:
    clock, sp = ManualClock(), SharePartition(0)
    _acquire(sp, clock, "a", upper=1)
    clock.advance(LOCK - 1)
    sp.acknowledge("a", 0, 0, [RENEW], LOCK, clock.now_ms())
    clock.advance(LOCK - 1)
    assert sp.state_of(0) is RecordState.ACQUIRED and _acquire(sp, clock, "b", upper=1) == []


def test_delivery_count_limit_archives_a_poison_record() -> None:
    clock, sp = ManualClock(), SharePartition(0, delivery_count_limit=3)
    for delivery in (1, 2, 3):
        assert _acquire(sp, clock, "a", upper=1) == [AcquiredRange(0, 0, delivery)]
        sp.acknowledge("a", 0, 0, [RELEASE], LOCK, clock.now_ms())
    assert sp.state_of(0) is RecordState.ACKNOWLEDGED  # archived, then below the start offset
    assert sp.start_offset == 1 and _acquire(sp, clock, "a", upper=1) == []


def test_acknowledging_records_another_member_holds_changes_nothing() -> None:
    clock, sp = ManualClock(), SharePartition(0)
    _acquire(sp, clock, "a", upper=2)
    error, message = sp.acknowledge("b", 0, 1, [ACCEPT], LOCK, clock.now_ms())
    assert error is ErrorCode.INVALID_RECORD_STATE and message
    assert sp.acknowledge("a", 5, 6, [ACCEPT], LOCK, clock.now_ms()) == (  # as Kafka 4.3.1 (share_ack_refusals)
        ErrorCode.INVALID_REQUEST, "Batch record not found. The first offset in request is past acquired records.")
    assert sp.state_of(0) is RecordState.ACQUIRED and sp.state_of(1) is RecordState.ACQUIRED


def test_in_flight_records_are_bounded_by_max_record_locks() -> None:
    clock, sp = ManualClock(), SharePartition(0, max_record_locks=3)
    assert _acquire(sp, clock, "a", upper=10) == [AcquiredRange(0, 2, 1)]
    assert _acquire(sp, clock, "b", upper=10) == []
    sp.acknowledge("a", 0, 0, [ACCEPT], LOCK, clock.now_ms())
    assert _acquire(sp, clock, "b", upper=10) == [AcquiredRange(3, 3, 1)]


def test_member_release_makes_its_records_available() -> None:
    clock, sp = ManualClock(), SharePartition(5)
    _acquire(sp, clock, "a", upper=8)
    assert sp.release_member("a") == 3
    assert _acquire(sp, clock, "b", upper=8) == [AcquiredRange(5, 7, 2)]


def test_acknowledgements_below_the_start_offset_are_ignored() -> None:
    clock, sp = ManualClock(), SharePartition(5)
    _acquire(sp, clock, "a", upper=7)
    assert sp.acknowledge("a", 0, 4, [ACCEPT], LOCK, clock.now_ms()) == (ErrorCode.NONE, None)
    assert sp.acknowledge("a", 3, 6, [ACCEPT, ACCEPT, REJECT, ACCEPT], LOCK, clock.now_ms()) == (ErrorCode.NONE, None)
    assert sp.start_offset == 7


def test_batch_optimized_acquisition_takes_whole_batches() -> None:
    clock, sp = ManualClock(), SharePartition(0)
    batches = [(0, 4), (5, 9)]  # two stored batches of five records

    def batch_last_offset(offset: int) -> int:
        return next(last for first, last in batches if first <= offset <= last)

    assert sp.acquire("a", 0, 10, 3, LOCK, clock.now_ms(), batch_last_offset) == [AcquiredRange(0, 4, 1)]
    assert sp.acquire("b", 0, 10, 1, LOCK, clock.now_ms(), batch_last_offset) == [AcquiredRange(5, 9, 1)]
