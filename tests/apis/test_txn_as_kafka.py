"""The transaction APIs answered as Apache Kafka 4.3.1 answers them (found by tests/differential).

With transaction.partition.verification.enable (Kafka's default), a TxnOffsetCommit is verified against the
transaction coordinator before the group coordinator sees it, and AddPartitionsToTxnManager turns the
coordinator's PRODUCER_FENCED into INVALID_PRODUCER_EPOCH at every version.
"""

from __future__ import annotations

from typing import Any

import pytest

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.config import BrokerConfig
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import AddOffsetsToTxnRequest, InitProducerIdRequest, TxnOffsetCommitRequest
from tests.apis.authz import NOW, call

TXN, GROUP = "tx-1", "g-1"
_Topic = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
_Partition = _Topic.TxnOffsetCommitRequestPartition


def cluster_in_transaction(verification: bool) -> tuple[Cluster, int]:
    """A cluster whose producer TXN (epoch 0) has GROUP in its open transaction; its producer id."""
    c = Cluster(BrokerConfig({"node.id": 1, "transaction.partition.verification.enable": verification}),
                clock=ManualClock(NOW))
    c.create_topic("t", 1, 1)
    init = call(c, InitProducerIdRequest(transactional_id=TXN, transaction_timeout_ms=60000), 4)
    assert (init.error_code, init.producer_epoch) == (0, 0)
    added = call(c, AddOffsetsToTxnRequest(transactional_id=TXN, producer_id=init.producer_id, producer_epoch=0,
                                           group_id=GROUP), 3)
    assert added.error_code == 0
    return c, init.producer_id


def commit(producer_id: int, epoch: int) -> Any:
    return TxnOffsetCommitRequest(
        transactional_id=TXN, group_id=GROUP, producer_id=producer_id, producer_epoch=epoch, generation_id=-1,
        member_id="", group_instance_id=None,
        topics=[_Topic(name="t", partitions=[
            _Partition(partition_index=0, committed_offset=1, committed_leader_epoch=-1, committed_metadata="")])])


@pytest.mark.parametrize("version", [0, 3, 4])
def test_txn_offset_commit_with_a_newer_epoch_is_invalid_producer_epoch_when_verified(version: int) -> None:
    c, producer_id = cluster_in_transaction(verification=True)
    [topic] = call(c, commit(producer_id, 4), version).topics
    assert [p.error_code for p in topic.partitions] == [ErrorCode.INVALID_PRODUCER_EPOCH]


def test_txn_offset_commit_with_a_newer_epoch_is_producer_fenced_unverified_from_v3() -> None:
    c, producer_id = cluster_in_transaction(verification=False)
    [topic] = call(c, commit(producer_id, 4), 3).topics
    assert [p.error_code for p in topic.partitions] == [ErrorCode.PRODUCER_FENCED]
