"""Transactional ids, their producer ids and epochs, and the commit/abort protocol (transactions V1 and V2).

Kafka's coordinator persists each step to `__transaction_state` and sends
WriteTxnMarkers to partition leaders. Here every partition is in the same
process, so PrepareCommit/PrepareAbort write their markers at once and end
in CompleteCommit/CompleteAbort before the request returns.

Which rules apply follows the request, as Kafka's
TransactionVersion.transactionVersionFor* decide it, whatever level of
`transaction.version` the cluster finalized (a client reads that level to
choose its request versions): EndTxn v5, Produce v12 and TxnOffsetCommit v5
are a transactions V2 client (KIP-890 part 2, TV_2). Such a Produce or
TxnOffsetCommit adds its partition or group to the transaction itself, and
EndTxn v5 bumps the producer epoch at every commit or abort, writes the
markers with the bumped epoch, answers the new producer id and epoch (a new
producer id once the epoch is exhausted), and tells a retry by its epoch
(TransactionCoordinator.endTransaction, TransactionMetadata.prepareAbortOrCommit
and prepareComplete). Earlier versions keep the V1 rules (explicit
AddPartitionsToTxn and AddOffsetsToTxn, EndTxn without an epoch bump).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from ..protocol.errors import ErrorCode
from .clock import Clock
from .config import BrokerConfig
from .transitions import PreviousStates

EXHAUSTED_EPOCH = 32766  # Short.MAX_VALUE - 1: the next InitProducerId (or TV2 EndTxn) rotates the producer id
#: Kafka's TransactionVersion levels as a request shows them: TV_0 for V1 clients, TV_2 bumps the epoch at every end.
TV_0, TV_2 = 0, 2
COORDINATOR_EPOCH = 0  # one coordinator that never moves


class TxnState(Enum):
    """Kafka's transaction states, named as DescribeTransactions and ListTransactions show them."""

    EMPTY = "Empty"
    ONGOING = "Ongoing"
    PREPARE_COMMIT = "PrepareCommit"
    PREPARE_ABORT = "PrepareAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"
    DEAD = "Dead"
    PREPARE_EPOCH_FENCE = "PrepareEpochFence"


_IDLE = (TxnState.EMPTY, TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT)

# Kafka's TransactionState.validPreviousStates: each state and the states it may be entered from
_T = TxnState
TRANSITIONS: PreviousStates[TxnState] = PreviousStates("transaction", {
    _T.EMPTY: frozenset({_T.EMPTY, _T.COMPLETE_COMMIT, _T.COMPLETE_ABORT}),
    _T.ONGOING: frozenset({_T.ONGOING, _T.EMPTY, _T.COMPLETE_COMMIT, _T.COMPLETE_ABORT}),
    _T.PREPARE_COMMIT: frozenset({_T.ONGOING}),
    _T.PREPARE_ABORT: frozenset({_T.ONGOING, _T.PREPARE_EPOCH_FENCE, _T.EMPTY, _T.COMPLETE_COMMIT,
                                 _T.COMPLETE_ABORT}),
    _T.COMPLETE_COMMIT: frozenset({_T.PREPARE_COMMIT}),
    _T.COMPLETE_ABORT: frozenset({_T.PREPARE_ABORT}),
    _T.DEAD: frozenset({_T.EMPTY, _T.COMPLETE_ABORT, _T.COMPLETE_COMMIT}),
    _T.PREPARE_EPOCH_FENCE: frozenset({_T.ONGOING}),
})


@dataclass(eq=False)
class TransactionMetadata:
    """One transactional id: its producer id and epoch, state and the partitions of its open transaction."""

    transactional_id: str
    producer_id: int
    producer_epoch: int = -1
    last_producer_id: int = -1
    last_producer_epoch: int = -1
    timeout_ms: int = 60000
    state: TxnState = TxnState.EMPTY  # changed by `transition_to` only
    partitions: set[tuple[str, int]] = field(default_factory=set)
    groups: set[str] = field(default_factory=set)
    start_timestamp_ms: int = -1
    last_update_ms: int = 0
    client_transaction_version: int = TV_0  # of the request that last added to the transaction

    def transition_to(self, state: TxnState) -> None:
        """Enter `state`; IllegalTransition unless Kafka's table allows it from the current one."""
        self.state = TRANSITIONS.check(self.state, state)


class TransactionMarkerWriter(Protocol):
    """What ending a transaction writes to: partition logs and group offsets (Kafka's WriteTxnMarkers)."""

    def write_txn_marker(self, topic: str, partition: int, producer_id: int, producer_epoch: int,
                         committed: bool, coordinator_epoch: int) -> None:
        """Append a COMMIT or ABORT marker to the partition and settle its open transaction; nothing if it is gone."""

    def complete_txn_offsets(self, group_id: str, producer_id: int, committed: bool) -> None:
        """The offsets the producer's transaction committed for the group become visible, or are dropped."""


class TransactionCoordinator:
    """Every transactional id of the cluster. Sans-IO: time comes from `clock`."""

    def __init__(self, markers: TransactionMarkerWriter, config: BrokerConfig, clock: Clock,
                 new_producer_id: Callable[[], int]) -> None:
        self.markers = markers
        self.config = config
        self.clock = clock
        self.new_producer_id = new_producer_id
        self.transactions: dict[str, TransactionMetadata] = {}
        self.by_producer_id: dict[int, TransactionMetadata] = {}
        self._next_timeout_check = 0
        self._next_expiry_check = 0

    # -- InitProducerId -----------------------------------------------------------------------

    def transaction(self, transactional_id: str) -> TransactionMetadata | None:
        """The transactional id's state, None when the coordinator has none."""
        return self.transactions.get(transactional_id)

    def init_producer_id(self, transactional_id: str, timeout_ms: int, expected_producer_id: int,
                         expected_epoch: int) -> tuple[ErrorCode, int, int]:
        """(error, producer id, epoch) for a transactional producer, fencing older instances."""
        if (expected_producer_id == -1) != (expected_epoch == -1) or not transactional_id:
            return ErrorCode.INVALID_REQUEST, -1, -1
        if not 0 < timeout_ms <= self.config["transaction.max.timeout.ms"]:
            return ErrorCode.INVALID_TRANSACTION_TIMEOUT, -1, -1
        now = self.clock.now_ms()
        txn = self.transactions.get(transactional_id)
        if txn is None:
            txn = TransactionMetadata(transactional_id, self.new_producer_id(), last_update_ms=now)
            self.transactions[transactional_id] = txn
            self.by_producer_id[txn.producer_id] = txn
        if expected_producer_id != -1 and not self._expectation_acceptable(txn, expected_producer_id,
                                                                          expected_epoch):
            return ErrorCode.PRODUCER_FENCED, -1, -1
        if txn.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            return ErrorCode.CONCURRENT_TRANSACTIONS, -1, -1
        if txn.state is TxnState.ONGOING:
            # Fence the running instance: bump the epoch and abort its transaction. The caller retries.
            txn.producer_epoch += 1
            self._end(txn, committed=False)
            return ErrorCode.CONCURRENT_TRANSACTIONS, -1, -1
        if txn.producer_epoch >= EXHAUSTED_EPOCH and expected_epoch in (-1, txn.producer_epoch):
            self._rotate_producer_id(txn)
        elif expected_epoch == -1 or expected_epoch == txn.producer_epoch or txn.producer_epoch == -1:
            txn.last_producer_epoch = txn.producer_epoch if expected_epoch != -1 else -1
            txn.producer_epoch += 1
        elif expected_epoch != txn.last_producer_epoch:
            return ErrorCode.PRODUCER_FENCED, -1, -1
        # else: a retry of the bump we already made returns the current epoch unchanged
        txn.timeout_ms = timeout_ms
        txn.transition_to(TxnState.EMPTY)
        txn.partitions.clear()
        txn.groups.clear()
        txn.start_timestamp_ms = -1
        txn.last_update_ms = now
        return ErrorCode.NONE, txn.producer_id, txn.producer_epoch

    @staticmethod
    def _expectation_acceptable(txn: TransactionMetadata, producer_id: int, epoch: int) -> bool:
        if txn.producer_epoch == -1 or producer_id == txn.producer_id:
            return True
        return producer_id == txn.last_producer_id and epoch >= EXHAUSTED_EPOCH

    def _rotate_producer_id(self, txn: TransactionMetadata) -> None:
        self.by_producer_id.pop(txn.producer_id, None)
        txn.last_producer_id, txn.last_producer_epoch = txn.producer_id, txn.producer_epoch
        txn.producer_id, txn.producer_epoch = self.new_producer_id(), 0
        self.by_producer_id[txn.producer_id] = txn

    # -- the transaction itself -----------------------------------------------------------------

    def _check_producer(self, transactional_id: str, producer_id: int, epoch: int
                        ) -> tuple[ErrorCode, TransactionMetadata | None]:
        txn = self.transactions.get(transactional_id)
        if txn is None or txn.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING, None
        if txn.producer_epoch != epoch:
            return ErrorCode.PRODUCER_FENCED, None
        return ErrorCode.NONE, txn

    def add_partitions(self, transactional_id: str, producer_id: int, epoch: int,
                       partitions: list[tuple[str, int]], client_transaction_version: int = TV_0) -> ErrorCode:
        """AddPartitionsToTxn, or a TV2 Produce's implicit add: the partitions join the open transaction (opening
        it if needed)."""
        error, txn = self._open(transactional_id, producer_id, epoch, client_transaction_version)
        if txn is not None:
            txn.partitions.update(partitions)
        return error

    def add_offsets(self, transactional_id: str, producer_id: int, epoch: int, group_id: str,
                    client_transaction_version: int = TV_0) -> ErrorCode:
        """AddOffsetsToTxn, or a TV2 TxnOffsetCommit's implicit add: the group's offsets partition joins the
        transaction."""
        error, txn = self._open(transactional_id, producer_id, epoch, client_transaction_version)
        if txn is not None:
            txn.groups.add(group_id)
        return error

    def _open(self, transactional_id: str, producer_id: int, epoch: int, client_transaction_version: int
              ) -> tuple[ErrorCode, TransactionMetadata | None]:
        """The producer's transaction, opened (Ongoing) if it was not; an error when the producer may not add."""
        error, txn = self._check_producer(transactional_id, producer_id, epoch)
        if txn is None:
            return error, None
        if txn.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            return ErrorCode.CONCURRENT_TRANSACTIONS, None
        now = self.clock.now_ms()
        if txn.state is not TxnState.ONGOING:
            txn.transition_to(TxnState.ONGOING)
            txn.start_timestamp_ms = now
            txn.partitions.clear()
            txn.groups.clear()
        txn.client_transaction_version = client_transaction_version
        txn.last_update_ms = now
        return ErrorCode.NONE, txn

    def verify_partition(self, transactional_id: str | None, producer_id: int, epoch: int, topic: str,
                         partition: int) -> ErrorCode:
        """KIP-890 part 1: is this partition in the producer's open transaction? (TV1 verify-only)."""
        txn = self.transactions.get(transactional_id or "")
        if txn is None or txn.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if txn.producer_epoch != epoch:
            return ErrorCode.PRODUCER_FENCED
        if txn.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if txn.state is not TxnState.ONGOING or (topic, partition) not in txn.partitions:
            return ErrorCode.TRANSACTION_ABORTABLE
        return ErrorCode.NONE

    def group_in_transaction(self, transactional_id: str, producer_id: int, epoch: int,
                             group_id: str) -> ErrorCode:
        """TxnOffsetCommit's check: the producer is current and its transaction holds the group."""
        error, txn = self._check_producer(transactional_id, producer_id, epoch)
        if txn is None:
            return error
        if txn.state is not TxnState.ONGOING or group_id not in txn.groups:
            return ErrorCode.INVALID_TXN_STATE
        return ErrorCode.NONE

    def end_txn(self, transactional_id: str, producer_id: int, epoch: int, committed: bool) -> ErrorCode:
        """EndTxn (V1): commit or abort the open transaction; retries of a finished one succeed."""
        error, txn = self._check_producer(transactional_id, producer_id, epoch)
        if txn is None:
            return error
        if txn.state is TxnState.ONGOING:
            self._end(txn, committed)
            return ErrorCode.NONE
        if txn.state is TxnState.COMPLETE_COMMIT:
            return ErrorCode.NONE if committed else ErrorCode.INVALID_TXN_STATE
        if txn.state is TxnState.COMPLETE_ABORT:
            return ErrorCode.INVALID_TXN_STATE if committed else ErrorCode.NONE
        if txn.state is TxnState.PREPARE_COMMIT:
            return ErrorCode.CONCURRENT_TRANSACTIONS if committed else ErrorCode.INVALID_TXN_STATE
        if txn.state is TxnState.PREPARE_ABORT:
            return ErrorCode.INVALID_TXN_STATE if committed else ErrorCode.CONCURRENT_TRANSACTIONS
        return ErrorCode.INVALID_TXN_STATE

    def end_txn_v2(self, transactional_id: str, producer_id: int, epoch: int, committed: bool
                   ) -> tuple[ErrorCode, int, int]:
        """EndTxn v5 (TV2): (error, producer id, epoch). Every commit or abort bumps the epoch; a retry is told by
        the epoch it carries (one below the current, or the exhausted one of the previous producer id) and
        answered with the current producer id and epoch; an abort needs no open transaction."""
        txn = self.transactions.get(transactional_id)
        if txn is None:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING, -1, -1
        retry_on_overflow = (txn.last_producer_id == producer_id and epoch == EXHAUSTED_EPOCH
                             and txn.producer_epoch == 0)
        retry_on_bump = txn.producer_epoch == epoch + 1
        if txn.state in (TxnState.PREPARE_COMMIT, TxnState.PREPARE_ABORT):
            valid_epoch = retry_on_bump
        elif txn.state in (TxnState.COMPLETE_COMMIT, TxnState.COMPLETE_ABORT):
            valid_epoch = retry_on_bump or retry_on_overflow or epoch == txn.producer_epoch
        else:
            valid_epoch = epoch == txn.producer_epoch
        retry = retry_on_bump or retry_on_overflow
        if txn.producer_id != producer_id and not retry_on_overflow:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING, -1, -1
        if not valid_epoch:
            return ErrorCode.PRODUCER_FENCED, -1, -1
        state = txn.state
        if state is TxnState.ONGOING:
            self._end(txn, committed, bump=True)
        elif state is TxnState.COMPLETE_COMMIT and committed or state is TxnState.COMPLETE_ABORT and not committed:
            if not retry:
                if committed:
                    return ErrorCode.INVALID_TXN_STATE, -1, -1
                self._end(txn, committed, bump=True)
        elif state in (TxnState.COMPLETE_COMMIT, TxnState.EMPTY) and not committed and not retry:
            # V2 may abort without a transaction (an abortable error before anything was added): only the bump
            self._end(txn, committed, bump=True)
        elif state is TxnState.PREPARE_COMMIT and committed or state is TxnState.PREPARE_ABORT and not committed:
            return ErrorCode.CONCURRENT_TRANSACTIONS, -1, -1
        else:
            return ErrorCode.INVALID_TXN_STATE, -1, -1
        return ErrorCode.NONE, txn.producer_id, txn.producer_epoch

    def _end(self, txn: TransactionMetadata, committed: bool, bump: bool = False) -> None:
        """Prepare, write a marker to every partition, settle the group offsets, complete. With `bump` (TV2) the
        markers carry the next epoch, and an exhausted epoch moves the transactional id to a new producer id."""
        now = self.clock.now_ms()
        next_producer_id = -1
        if bump:
            if txn.producer_epoch >= EXHAUSTED_EPOCH:
                next_producer_id = self.new_producer_id()
            txn.last_producer_epoch = txn.producer_epoch
            txn.producer_epoch += 1
            if txn.state is not TxnState.ONGOING:
                txn.start_timestamp_ms = now  # Kafka's noPartitionAdded: the abort starts and ends now
        txn.transition_to(TxnState.PREPARE_COMMIT if committed else TxnState.PREPARE_ABORT)
        for topic, index in sorted(txn.partitions):
            self.markers.write_txn_marker(topic, index, txn.producer_id, txn.producer_epoch, committed,
                                          COORDINATOR_EPOCH)
        for group_id in sorted(txn.groups):
            self.markers.complete_txn_offsets(group_id, txn.producer_id, committed)
        if next_producer_id != -1:
            # prepareComplete: the client sees MAX-1 then 0, so the last epoch stays MAX-1
            self.by_producer_id.pop(txn.producer_id, None)
            txn.last_producer_id, txn.producer_id, txn.producer_epoch = txn.producer_id, next_producer_id, 0
            self.by_producer_id[next_producer_id] = txn
        txn.transition_to(TxnState.COMPLETE_COMMIT if committed else TxnState.COMPLETE_ABORT)
        txn.partitions.clear()
        txn.groups.clear()
        txn.last_update_ms = now

    # -- time ---------------------------------------------------------------------------------

    def tick(self) -> None:
        """Abort timed-out transactions (fencing their producer) and expire idle transactional ids."""
        now = self.clock.now_ms()
        if now >= self._next_timeout_check:
            self._next_timeout_check = now + self.config["transaction.abort.timed.out.transaction.cleanup.interval.ms"]
            for txn in list(self.transactions.values()):
                if txn.state is TxnState.ONGOING and txn.start_timestamp_ms + txn.timeout_ms < now:
                    txn.transition_to(TxnState.PREPARE_EPOCH_FENCE)
                    txn.producer_epoch += 1
                    self._end(txn, committed=False)
        if now >= self._next_expiry_check:
            self._next_expiry_check = now + self.config["transaction.remove.expired.transaction.cleanup.interval.ms"]
            expiration = self.config["transactional.id.expiration.ms"]
            for txn in list(self.transactions.values()):
                if txn.state in _IDLE and txn.last_update_ms <= now - expiration:
                    txn.transition_to(TxnState.DEAD)
                    del self.transactions[txn.transactional_id]
                    self.by_producer_id.pop(txn.producer_id, None)

    # -- admin ----------------------------------------------------------------------------------

    def list(self, states: set[str], producer_ids: set[int], min_duration_ms: int,
             id_pattern: str | None) -> list[TransactionMetadata]:
        """ListTransactions with Kafka's filters (states, producer ids, running longer than, id regex)."""
        now = self.clock.now_ms()
        pattern = re.compile(id_pattern) if id_pattern else None
        found = []
        for txn in self.transactions.values():
            if states and txn.state.value not in states:
                continue
            if producer_ids and txn.producer_id not in producer_ids:
                continue
            if min_duration_ms >= 0 and (txn.state is not TxnState.ONGOING
                                         or now - txn.start_timestamp_ms < min_duration_ms):
                continue
            if pattern is not None and not pattern.fullmatch(txn.transactional_id):
                continue
            found.append(txn)
        return found
