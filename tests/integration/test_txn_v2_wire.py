"""Transactions V2 (KIP-890 part 2) at the wire level: Produce v12 and TxnOffsetCommit v5 add to the transaction,
EndTxn v5 bumps the epoch, and a V1 client still works, as Kafka 4.3.1 answers them (scenario txn_v2)."""

from __future__ import annotations

from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    ApiVersionsRequest,
    DescribeTransactionsRequest,
    EndTxnRequest,
    OffsetFetchRequest,
    TxnOffsetCommitRequest,
)
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic
from tests.integration.test_txn_wire import TxnProducer, batch_offsets, fetch_partition, latest
from tests.integration.test_wire_protocol import create_topic


class V2Producer(TxnProducer):
    """A TV2 client: no AddPartitionsToTxn, and the epoch EndTxn v5 answers is the one to use next."""

    def end_v2(self, commit: bool) -> tuple[int, int, int]:
        response = self.wire.request(EndTxnRequest(transactional_id=self.transactional_id,
                                                   producer_id=self.producer_id, producer_epoch=self.epoch,
                                                   committed=commit), 5)
        if response.error_code == 0:
            self.producer_id, self.epoch, self.sequence = response.producer_id, response.producer_epoch, 0
        return response.error_code, response.producer_id, response.producer_epoch

    def commit_offsets(self, group: str, offset: int, version: int = 5) -> int:
        topic = TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
        request = TxnOffsetCommitRequest(
            transactional_id=self.transactional_id, group_id=group, producer_id=self.producer_id,
            producer_epoch=self.epoch, generation_id=-1, member_id="", group_instance_id=None,
            topics=[topic(name=self.topic, partitions=[topic.TxnOffsetCommitRequestPartition(
                partition_index=0, committed_offset=offset, committed_leader_epoch=-1, committed_metadata="")])])
        return self.wire.request(request, version).topics[0].partitions[0].error_code


def describe(wire: WireClient, transactional_id: str):
    request = DescribeTransactionsRequest(transactional_ids=[transactional_id])
    return wire.request(request, 0).transaction_states[0]


def committed_offset(wire: WireClient, group: str, topic: str) -> int:
    request = OffsetFetchRequest(group_id=group, topics=[OffsetFetchRequest.OffsetFetchRequestTopic(
        name=topic, partition_indexes=[0])], require_stable=True)
    return wire.request(request, 7).topics[0].partitions[0].committed_offset


def test_the_node_finalizes_transaction_version_2_and_serves_the_v2_requests(wire):
    answer = wire.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 3)
    assert {(f.name, f.max_version_level) for f in answer.finalized_features} >= {("transaction.version", 2)}
    ranges = {key.api_key: key.max_version for key in answer.api_keys}
    assert (ranges[0] >= 12, ranges[26], ranges[28]) == (True, 5, 5)


def test_produce_v12_and_txn_offset_commit_v5_join_the_transaction_and_end_txn_v5_bumps(wire):
    topic, group = unique_topic("tv2"), unique_topic("tv2-group")
    create_topic(wire, topic)
    producer = V2Producer(wire, unique_topic("tv2-tx"), topic)
    assert producer.init(5) == 0 and producer.epoch == 0
    pid = producer.producer_id
    assert producer.send(2, version=12).error_code == 0  # offsets 0-1, no AddPartitionsToTxn
    assert producer.commit_offsets(group, 2) == 0  # no AddOffsetsToTxn
    state = describe(wire, producer.transactional_id)
    assert (state.transaction_state, [(t.topic, list(t.partitions)) for t in state.topics]) == \
        ("Ongoing", [(topic, [0])])
    assert committed_offset(wire, group, topic) == -1  # not before the commit
    assert producer.end_v2(commit=True) == (0, pid, 1)
    assert committed_offset(wire, group, topic) == 2
    part = fetch_partition(wire, topic, isolation=1)
    assert batch_offsets(part.records) == [(0, 1, False), (2, 2, True)]
    marker = records.read_header(part.records[records.split_batches(part.records)[1][0]:])
    assert (marker.producer_id, marker.producer_epoch) == (pid, 1)  # the bumped epoch
    # the next transaction at the new epoch, aborted: read_committed skips it
    assert producer.send(1, version=12).base_offset == 3
    assert producer.end_v2(commit=False) == (0, pid, 2)
    part = fetch_partition(wire, topic, isolation=1)
    assert [(t.producer_id, t.first_offset) for t in part.aborted_transactions] == [(pid, 3)]
    assert latest(wire, topic, 1) == 5


def test_refusals_name_kafkas_codes(wire):
    topic = unique_topic("tv2-refused")
    create_topic(wire, topic)
    producer = V2Producer(wire, unique_topic("tv2-tx"), topic)
    producer.init(5)
    group = unique_topic("tv2-group")
    producer.epoch = 1  # a future epoch
    assert producer.send(version=12).error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    assert producer.commit_offsets(group, 1) == ErrorCode.INVALID_PRODUCER_EPOCH
    assert producer.end_v2(commit=True)[0] == ErrorCode.PRODUCER_FENCED
    producer.epoch, producer.producer_id = 0, producer.producer_id + 1000  # an unknown producer id
    assert producer.send(version=12).error_code == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert producer.commit_offsets(group, 1) == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    producer.producer_id -= 1000
    assert producer.send(version=12).error_code == 0
    assert producer.end_v2(commit=True)[0] == 0
    producer.epoch, producer.sequence = 0, 1  # the ended transaction's epoch
    assert producer.send(version=12).error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    assert producer.end_v2(commit=False)[0] == ErrorCode.INVALID_TXN_STATE  # a retry, of the other result
    assert producer.end_v2(commit=True) == (0, producer.producer_id, 1)  # the retry of the commit
    # a nothing-added partition under V1's verification (Produce v11) is abortable, as Kafka answers
    assert producer.send(version=11).error_code == ErrorCode.TRANSACTION_ABORTABLE
    assert describe(wire, producer.transactional_id).transaction_state == "CompleteCommit"


def test_a_producer_moves_from_v1_to_v2_between_transactions(wire):
    topic = unique_topic("tv1-tv2")
    create_topic(wire, topic)
    producer = V2Producer(wire, unique_topic("tv12-tx"), topic)
    producer.init(5)
    assert producer.add() == 0 and producer.send(1, version=11).error_code == 0
    assert producer.end(commit=True, version=4) == 0  # V1: the epoch stays
    assert producer.end(commit=True, version=4) == 0  # V1's retry
    assert producer.end_v2(commit=True)[0] == ErrorCode.INVALID_TXN_STATE  # nothing open at this epoch
    assert producer.send(1, version=12).error_code == 0
    assert producer.end_v2(commit=True) == (0, producer.producer_id, 1)
    assert latest(wire, topic, 1) == 4
