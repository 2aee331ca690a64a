"""The transaction coordinator writes through its narrow TransactionMarkerWriter, with no Cluster behind it."""

from __future__ import annotations

import itertools

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.config import BrokerConfig
from minibroker.core.transaction_coordinator import TransactionCoordinator, TransactionMarkerWriter, TxnState
from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode


class RecordingWriter:
    """A TransactionMarkerWriter that only notes what it is asked to write."""

    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []

    def write_txn_marker(self, topic: str, partition: int, producer_id: int, producer_epoch: int,
                         committed: bool, coordinator_epoch: int) -> None:
        self.calls.append(("marker", topic, partition, producer_id, producer_epoch, committed, coordinator_epoch))

    def complete_txn_offsets(self, group_id: str, producer_id: int, committed: bool) -> None:
        self.calls.append(("offsets", group_id, producer_id, committed))


def test_ending_a_transaction_writes_markers_then_settles_offsets_through_the_writer() -> None:
    writer = RecordingWriter()
    marker_writer: TransactionMarkerWriter = writer
    txns = TransactionCoordinator(marker_writer, BrokerConfig(), ManualClock(), itertools.count(7).__next__)
    _, pid, epoch = txns.init_producer_id("tx", 60000, -1, -1)
    assert txns.add_partitions("tx", pid, epoch, [("b", 1), ("a", 2), ("a", 0)]) is ErrorCode.NONE
    assert txns.add_offsets("tx", pid, epoch, "g") is ErrorCode.NONE
    assert txns.end_txn("tx", pid, epoch, committed=True) is ErrorCode.NONE
    assert writer.calls == [
        ("marker", "a", 0, pid, epoch, True, 0),
        ("marker", "a", 2, pid, epoch, True, 0),
        ("marker", "b", 1, pid, epoch, True, 0),
        ("offsets", "g", pid, True),
    ]
    assert txns.transactions["tx"].state is TxnState.COMPLETE_COMMIT


def test_cluster_writes_a_marker_to_its_partition_and_skips_a_deleted_topic() -> None:
    cluster = Cluster(BrokerConfig(), ManualClock())
    cluster.create_topic("t", 1, 1)
    _, pid, epoch = cluster.transactions.init_producer_id("tx", 60000, -1, -1)
    cluster.transactions.add_partitions("tx", pid, epoch, [("t", 0), ("gone", 0)])
    cluster.create_topic("gone", 1, 1)
    cluster.delete_topic("gone")
    assert cluster.transactions.end_txn("tx", pid, epoch, committed=False) is ErrorCode.NONE
    (marker,) = cluster.partition("t", 0).log.batches
    header = records.read_header(marker)
    assert header.is_control and header.producer_id == pid
    assert records.control_record_type(marker) == records.CONTROL_ABORT
