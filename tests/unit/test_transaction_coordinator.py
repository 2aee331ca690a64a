"""The transaction coordinator with plain calls and a manual clock."""

from __future__ import annotations

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.config import BrokerConfig
from minibroker.core.transaction_coordinator import EXHAUSTED_EPOCH, TxnState
from minibroker.protocol.errors import ErrorCode


def cluster(**configs: str) -> Cluster:
    c = Cluster(BrokerConfig(configs), ManualClock())
    c.create_topic("t", 1, 1)
    return c


def test_idle_transactional_id_expires():
    c = cluster(**{"transactional.id.expiration.ms": "1000",
                   "transaction.remove.expired.transaction.cleanup.interval.ms": "100"})
    txns = c.transactions
    assert txns.init_producer_id("tx", 60000, -1, -1)[0] is ErrorCode.NONE
    c.clock.advance(999)
    c.tick()
    assert "tx" in txns.transactions
    c.clock.advance(200)
    c.tick()
    assert "tx" not in txns.transactions


def test_open_transaction_never_expires_but_times_out():
    c = cluster(**{"transactional.id.expiration.ms": "1000",
                   "transaction.abort.timed.out.transaction.cleanup.interval.ms": "100"})
    txns = c.transactions
    _, pid, epoch = txns.init_producer_id("tx", 5000, -1, -1)
    assert txns.add_partitions("tx", pid, epoch, [("t", 0)]) is ErrorCode.NONE
    c.clock.advance(4000)
    c.tick()
    assert txns.transactions["tx"].state is TxnState.ONGOING
    c.clock.advance(1100)
    c.tick()
    assert txns.transactions["tx"].state is TxnState.COMPLETE_ABORT
    assert txns.transactions["tx"].producer_epoch == epoch + 1  # fenced
    assert txns.end_txn("tx", pid, epoch, committed=True) is ErrorCode.PRODUCER_FENCED


def test_exhausted_epoch_rotates_the_producer_id():
    c = cluster()
    txns = c.transactions
    _, pid, _ = txns.init_producer_id("tx", 60000, -1, -1)
    txns.transactions["tx"].producer_epoch = EXHAUSTED_EPOCH
    error, new_pid, new_epoch = txns.init_producer_id("tx", 60000, -1, -1)
    assert (error, new_epoch) == (ErrorCode.NONE, 0) and new_pid != pid
    # the old instance presenting its exhausted (pid, epoch) is accepted as the retry it is
    assert txns.init_producer_id("tx", 60000, pid, EXHAUSTED_EPOCH)[0] is ErrorCode.NONE


def test_retried_init_with_the_previous_epoch_returns_the_current_one():
    c = cluster()
    txns = c.transactions
    _, pid, epoch = txns.init_producer_id("tx", 60000, -1, -1)
    _, _, bumped = txns.init_producer_id("tx", 60000, pid, epoch)
    assert bumped == epoch + 1
    assert txns.init_producer_id("tx", 60000, pid, epoch) == (ErrorCode.NONE, pid, bumped)
    assert txns.init_producer_id("tx", 60000, pid, epoch + 7)[0] is ErrorCode.PRODUCER_FENCED
