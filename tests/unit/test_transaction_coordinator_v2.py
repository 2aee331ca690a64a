"""Transactions V2 (KIP-890 part 2) in the coordinator, with plain calls and a manual clock.

The expected answers are Kafka 4.3.1's (TransactionCoordinator.endTransaction's V2 table), as the
differential scenario txn_v2 checks them on the wire.
"""

from __future__ import annotations

import itertools

from minibroker.core.clock import ManualClock
from minibroker.core.config import BrokerConfig
from minibroker.core.transaction_coordinator import EXHAUSTED_EPOCH, TV_2, TransactionCoordinator, TxnState
from minibroker.protocol.errors import ErrorCode

NONE, ITS, FENCED = ErrorCode.NONE, ErrorCode.INVALID_TXN_STATE, ErrorCode.PRODUCER_FENCED


class RecordingWriter:
    """A TransactionMarkerWriter that notes the markers and offset settlements it is asked for."""

    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []

    def write_txn_marker(self, topic: str, partition: int, producer_id: int, producer_epoch: int,
                         committed: bool, coordinator_epoch: int) -> None:
        self.calls.append(("marker", topic, partition, producer_id, producer_epoch, committed))

    def complete_txn_offsets(self, group_id: str, producer_id: int, committed: bool) -> None:
        self.calls.append(("offsets", group_id, producer_id, committed))


def coordinator() -> tuple[TransactionCoordinator, RecordingWriter, int]:
    writer = RecordingWriter()
    txns = TransactionCoordinator(writer, BrokerConfig(), ManualClock(), itertools.count(7).__next__)
    error, pid, epoch = txns.init_producer_id("tx", 60000, -1, -1)
    assert (error, epoch) == (NONE, 0)
    return txns, writer, pid


def test_commit_bumps_the_epoch_and_writes_the_markers_with_it():
    txns, writer, pid = coordinator()
    assert txns.add_partitions("tx", pid, 0, [("t", 0)], TV_2) is NONE
    assert txns.add_offsets("tx", pid, 0, "g", TV_2) is NONE
    assert txns.transactions["tx"].client_transaction_version == TV_2
    assert txns.end_txn_v2("tx", pid, 0, committed=True) == (NONE, pid, 1)
    assert writer.calls == [("marker", "t", 0, pid, 1, True), ("offsets", "g", pid, True)]
    txn = txns.transactions["tx"]
    assert (txn.state, txn.producer_epoch, txn.last_producer_epoch) == (TxnState.COMPLETE_COMMIT, 1, 0)


def test_a_retried_end_gets_the_same_answer_and_writes_nothing():
    txns, writer, pid = coordinator()
    txns.add_partitions("tx", pid, 0, [("t", 0)], TV_2)
    assert txns.end_txn_v2("tx", pid, 0, committed=True) == (NONE, pid, 1)
    writer.calls.clear()
    assert txns.end_txn_v2("tx", pid, 0, committed=True) == (NONE, pid, 1)
    assert txns.end_txn_v2("tx", pid, 0, committed=False) == (ITS, -1, -1)
    assert txns.end_txn_v2("tx", pid, 1, committed=True) == (ITS, -1, -1)  # nothing to commit at the new epoch
    assert txns.end_txn_v2("tx", pid, 2, committed=True) == (FENCED, -1, -1)
    assert writer.calls == []


def test_abort_without_a_transaction_only_bumps_the_epoch():
    txns, writer, pid = coordinator()
    assert txns.end_txn_v2("tx", pid, 0, committed=True) == (ITS, -1, -1)  # Empty: nothing to commit
    assert txns.end_txn_v2("tx", pid, 0, committed=False) == (NONE, pid, 1)
    assert txns.end_txn_v2("tx", pid, 0, committed=False) == (NONE, pid, 1)  # the retry
    assert txns.end_txn_v2("tx", pid, 0, committed=True) == (ITS, -1, -1)
    assert txns.end_txn_v2("tx", pid, 1, committed=False) == (NONE, pid, 2)  # CompleteAbort: a new abort
    assert writer.calls == []
    assert txns.transactions["tx"].state is TxnState.COMPLETE_ABORT


def test_refusals_of_the_producer():
    txns, _, pid = coordinator()
    assert txns.end_txn_v2("unknown", pid, 0, committed=True) == (ErrorCode.INVALID_PRODUCER_ID_MAPPING, -1, -1)
    assert txns.end_txn_v2("tx", pid + 1, 0, committed=True) == (ErrorCode.INVALID_PRODUCER_ID_MAPPING, -1, -1)
    txns.add_partitions("tx", pid, 0, [("t", 0)], TV_2)
    assert txns.end_txn_v2("tx", pid, 1, committed=True) == (FENCED, -1, -1)
    # the previous transaction's epoch is not a retry while a new one is open
    assert txns.end_txn_v2("tx", pid, 0, committed=True) == (NONE, pid, 1)
    assert txns.add_partitions("tx", pid, 1, [("t", 0)], TV_2) is NONE
    assert txns.end_txn_v2("tx", pid, 0, committed=True) == (FENCED, -1, -1)
    # an ended transaction's epoch may add no more
    assert txns.end_txn_v2("tx", pid, 1, committed=False) == (NONE, pid, 2)
    assert txns.add_partitions("tx", pid, 1, [("t", 0)], TV_2) is FENCED
    assert txns.add_offsets("tx", pid, 1, "g", TV_2) is FENCED


def test_exhausted_epoch_moves_to_a_new_producer_id_after_the_markers():
    txns, writer, pid = coordinator()
    txns.transactions["tx"].producer_epoch = EXHAUSTED_EPOCH
    txns.add_partitions("tx", pid, EXHAUSTED_EPOCH, [("t", 0)], TV_2)
    error, new_pid, new_epoch = txns.end_txn_v2("tx", pid, EXHAUSTED_EPOCH, committed=True)
    assert (error, new_epoch) == (NONE, 0) and new_pid != pid
    assert writer.calls == [("marker", "t", 0, pid, EXHAUSTED_EPOCH + 1, True)]
    assert txns.by_producer_id[new_pid] is txns.transactions["tx"] and pid not in txns.by_producer_id
    # the retry from the old producer id is recognised and answered with the new one
    assert txns.end_txn_v2("tx", pid, EXHAUSTED_EPOCH, committed=True) == (NONE, new_pid, 0)
    assert txns.end_txn_v2("tx", new_pid, 0, committed=False) == (NONE, new_pid, 1)


def test_a_v1_end_after_v2_and_a_v2_end_after_v1():
    txns, writer, pid = coordinator()
    txns.add_partitions("tx", pid, 0, [("t", 0)])  # V1: AddPartitionsToTxn
    assert txns.end_txn("tx", pid, 0, committed=True) is NONE  # no bump
    assert txns.end_txn_v2("tx", pid, 0, committed=True) == (ITS, -1, -1)  # not a retry: same epoch
    txns.add_partitions("tx", pid, 0, [("t", 0)], TV_2)
    assert txns.end_txn_v2("tx", pid, 0, committed=True) == (NONE, pid, 1)
    assert txns.end_txn("tx", pid, 1, committed=True) is NONE  # V1 retry rules at the current epoch
    assert [call[4] for call in writer.calls] == [0, 1]


def test_timed_out_v2_transaction_is_fenced_once():
    txns, writer, pid = coordinator()
    txns.transactions["tx"].timeout_ms = 1000
    txns.add_partitions("tx", pid, 0, [("t", 0)], TV_2)
    txns.clock.advance(20000)  # type: ignore[attr-defined]
    txns.tick()
    txn = txns.transactions["tx"]
    assert (txn.state, txn.producer_epoch) == (TxnState.COMPLETE_ABORT, 1)
    assert writer.calls == [("marker", "t", 0, pid, 1, False)]
    # Kafka 4.3.1 then takes an EndTxn v5 abort at the old epoch for the retry of that abort
    assert txns.end_txn_v2("tx", pid, 0, committed=False) == (NONE, pid, 1)
