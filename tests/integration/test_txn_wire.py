"""Transaction coordinator rules and the LSO / aborted-transaction arithmetic, at the wire level."""

from __future__ import annotations

import time

from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    AddOffsetsToTxnRequest,
    AddPartitionsToTxnRequest,
    DescribeTransactionsRequest,
    EndTxnRequest,
    FetchRequest,
    InitProducerIdRequest,
    ListOffsetsRequest,
    ListTransactionsRequest,
    OffsetFetchRequest,
    TxnOffsetCommitRequest,
)
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic, wait_until
from tests.integration.test_wire_protocol import create_topic, partition_response, produce_request


class TxnProducer:
    """A transactional producer driven request by request."""

    def __init__(self, wire: WireClient, transactional_id: str, topic: str, timeout_ms: int = 60000) -> None:
        self.wire = wire
        self.transactional_id = transactional_id
        self.topic = topic
        self.timeout_ms = timeout_ms
        self.sequence = 0
        self.producer_id, self.epoch = -1, -1

    def init(self, version: int = 4) -> int:
        response = self.wire.request(InitProducerIdRequest(transactional_id=self.transactional_id,
                                                           transaction_timeout_ms=self.timeout_ms), version)
        if response.error_code == 0:
            self.producer_id, self.epoch, self.sequence = response.producer_id, response.producer_epoch, 0
        return response.error_code

    def add(self, partition: int = 0, version: int = 3) -> int:
        request = AddPartitionsToTxnRequest(
            v3_and_below_transactional_id=self.transactional_id, v3_and_below_producer_id=self.producer_id,
            v3_and_below_producer_epoch=self.epoch, v3_and_below_topics=[
                AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name=self.topic, partitions=[partition])])
        response = self.wire.request(request, version)
        return response.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code

    def send(self, count: int = 1, version: int = 11, transactional: bool = True):
        batch = records.build_batch([(None, b"v")] * count, timestamp=int(time.time() * 1000),
                                    producer_id=self.producer_id, producer_epoch=self.epoch,
                                    base_sequence=self.sequence, transactional=transactional)
        request = produce_request(self.topic, batch, version=version)
        request.transactional_id = self.transactional_id
        response = partition_response(self.wire.request(request, version))
        if response.error_code == 0:
            self.sequence += count
        return response

    def end(self, commit: bool, version: int = 3) -> int:
        return self.wire.request(EndTxnRequest(transactional_id=self.transactional_id, producer_id=self.producer_id,
                                               producer_epoch=self.epoch, committed=commit), version).error_code


def fetch_partition(wire: WireClient, topic: str, isolation: int, offset: int = 0):
    request = FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=0, max_bytes=10_000_000, isolation_level=isolation,
                           topics=[FetchRequest.FetchTopic(topic=topic, partitions=[
                               FetchRequest.FetchTopic.FetchPartition(partition=0, fetch_offset=offset,
                                                                      partition_max_bytes=10_000_000)])])
    return wire.request(request, 11).responses[0].partitions[0]


def batch_offsets(data: bytes) -> list[tuple[int, int, bool]]:
    """(base offset, last offset, is control) of each batch."""
    out = []
    for start, end in records.split_batches(data):
        header = records.read_header(data[start:end])
        out.append((header.base_offset, header.last_offset, header.is_control))
    return out


def latest(wire: WireClient, topic: str, isolation: int) -> int:
    request = ListOffsetsRequest(replica_id=-1, isolation_level=isolation, topics=[ListOffsetsRequest.ListOffsetsTopic(
        name=topic, partitions=[ListOffsetsRequest.ListOffsetsTopic.ListOffsetsPartition(partition_index=0,
                                                                                      timestamp=-1)])])
    return wire.request(request, 7).topics[0].partitions[0].offset


def test_two_interleaved_producers_lso_and_aborted_list(wire):
    topic = unique_topic("txn-lso")
    create_topic(wire, topic)
    a = TxnProducer(wire, unique_topic("tx-a"), topic)
    b = TxnProducer(wire, unique_topic("tx-b"), topic)
    assert a.init() == 0 and b.init() == 0
    assert a.add() == 0 and b.add() == 0
    assert a.send(2).base_offset == 0  # a: 0-1
    assert b.send(3).base_offset == 2  # b: 2-4
    assert a.send(1).base_offset == 5  # a: 5
    # both open: LSO is a's first offset; READ_COMMITTED sees nothing yet
    part = fetch_partition(wire, topic, isolation=1)
    assert (part.high_watermark, part.last_stable_offset, part.records) == (6, 0, b"")
    assert part.aborted_transactions == []
    assert latest(wire, topic, 1) == 0 and latest(wire, topic, 0) == 6
    assert a.end(commit=False) == 0  # ABORT marker at 6
    part = fetch_partition(wire, topic, isolation=1)
    assert part.last_stable_offset == 2  # b's open transaction now holds the LSO
    assert batch_offsets(part.records) == [(0, 1, False)]
    assert [(t.producer_id, t.first_offset) for t in part.aborted_transactions] == [(a.producer_id, 0)]
    assert b.end(commit=True) == 0  # COMMIT marker at 7
    part = fetch_partition(wire, topic, isolation=1)
    assert (part.last_stable_offset, part.high_watermark) == (8, 8)
    assert batch_offsets(part.records) == [(0, 1, False), (2, 4, False), (5, 5, False), (6, 6, True), (7, 7, True)]
    assert [(t.producer_id, t.first_offset) for t in part.aborted_transactions] == [(a.producer_id, 0)]
    # a fetch after the aborted transaction's marker is not told about it
    assert fetch_partition(wire, topic, isolation=1, offset=7).aborted_transactions == []
    # READ_UNCOMMITTED gets the same bytes and a null aborted list
    uncommitted = fetch_partition(wire, topic, isolation=0)
    assert uncommitted.aborted_transactions is None and uncommitted.last_stable_offset == 8


def test_markers_are_control_batches_with_kafka_layout(wire):
    topic = unique_topic("txn-marker")
    create_topic(wire, topic)
    producer = TxnProducer(wire, unique_topic("tx"), topic)
    producer.init()
    producer.add()
    producer.send()
    assert producer.end(commit=True) == 0
    data = fetch_partition(wire, topic, isolation=0).records
    start, end = records.split_batches(data)[1]
    marker = data[start:end]
    header = records.read_header(marker)
    assert header.is_control and header.is_transactional and header.base_sequence == -1
    assert (header.producer_id, header.producer_epoch, header.record_count) == (producer.producer_id, producer.epoch, 1)
    [record] = list(records.iter_records(marker))
    assert record.key == b"\x00\x00\x00\x01"  # version 0, COMMIT
    assert record.value == b"\x00\x00\x00\x00\x00\x00"  # version 0, coordinator epoch 0


def test_fencing_by_a_new_instance_aborts_the_open_transaction(wire):
    topic = unique_topic("txn-fence")
    create_topic(wire, topic)
    transactional_id = unique_topic("tx")
    old = TxnProducer(wire, transactional_id, topic)
    old.init()
    old.add()
    old.send(2)
    new = TxnProducer(wire, transactional_id, topic)
    assert new.init() == ErrorCode.CONCURRENT_TRANSACTIONS  # the open transaction is aborted first
    assert new.init() == 0
    assert new.producer_id == old.producer_id and new.epoch == old.epoch + 2
    assert old.end(commit=True) == ErrorCode.PRODUCER_FENCED
    assert old.end(commit=True, version=1) == ErrorCode.INVALID_PRODUCER_EPOCH  # before KIP-588
    assert old.add() == ErrorCode.PRODUCER_FENCED
    assert old.send().error_code == ErrorCode.INVALID_PRODUCER_EPOCH
    part = fetch_partition(wire, topic, isolation=1)
    assert [(t.producer_id, t.first_offset) for t in part.aborted_transactions] == [(old.producer_id, 0)]


def test_coordinator_refusals(wire):
    topic = unique_topic("txn-refuse")
    create_topic(wire, topic)
    producer = TxnProducer(wire, unique_topic("tx"), topic)
    assert TxnProducer(wire, "", topic).init() == ErrorCode.INVALID_REQUEST
    assert TxnProducer(wire, "tx-big", topic, timeout_ms=10_000_000).init() == ErrorCode.INVALID_TRANSACTION_TIMEOUT
    producer.init()
    assert producer.end(commit=True) == ErrorCode.INVALID_TXN_STATE  # nothing open
    refused = producer.send()  # transactional write to a partition never added
    assert refused.error_code == ErrorCode.TRANSACTION_ABORTABLE
    assert producer.send(version=10).error_code == ErrorCode.INVALID_TXN_STATE
    assert producer.send(version=10).error_message == "Partition was not added to the transaction"
    assert producer.add() == 0
    assert producer.send().error_code == 0  # opens the transaction on the partition
    assert producer.send(transactional=False).error_code == ErrorCode.INVALID_TXN_STATE  # plain batch inside it
    wrong = TxnProducer(wire, producer.transactional_id, topic)
    wrong.producer_id, wrong.epoch = producer.producer_id + 999, producer.epoch
    assert wrong.add() == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    assert wrong.end(commit=True) == ErrorCode.INVALID_PRODUCER_ID_MAPPING
    missing = AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=producer.transactional_id, v3_and_below_producer_id=producer.producer_id,
        v3_and_below_producer_epoch=producer.epoch, v3_and_below_topics=[
            AddPartitionsToTxnRequest.AddPartitionsToTxnTopic(name=topic, partitions=[0, 7])])
    codes = [p.partition_error_code for p in wire.request(missing, 3).results_by_topic_v3_and_below[0]
             .results_by_partition]
    assert codes == [ErrorCode.OPERATION_NOT_ATTEMPTED, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]
    assert producer.send().error_code == 0
    assert producer.end(commit=True) == 0
    assert producer.end(commit=True) == 0  # a retried commit succeeds
    assert producer.end(commit=False) == ErrorCode.INVALID_TXN_STATE


def test_transactional_offsets_visible_only_on_commit(wire):
    topic = unique_topic("txn-offsets")
    create_topic(wire, topic)
    group = unique_topic("g")
    producer = TxnProducer(wire, unique_topic("tx"), topic)
    producer.init()

    def txn_commit(offset: int) -> int:
        request = TxnOffsetCommitRequest(
            transactional_id=producer.transactional_id, group_id=group, producer_id=producer.producer_id,
            producer_epoch=producer.epoch, topics=[TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic(
                name=topic, partitions=[TxnOffsetCommitRequest.TxnOffsetCommitRequestTopic
                                        .TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=offset,
                                                                         committed_metadata="")])])
        return wire.request(request, 3).topics[0].partitions[0].error_code

    def committed(require_stable: bool = False):
        request = OffsetFetchRequest(group_id=group, topics=[OffsetFetchRequest.OffsetFetchRequestTopic(
            name=topic, partition_indexes=[0])], require_stable=require_stable)
        return wire.request(request, 7).topics[0].partitions[0]

    assert txn_commit(5) == ErrorCode.INVALID_TXN_STATE  # the group was not added to a transaction
    add = AddOffsetsToTxnRequest(transactional_id=producer.transactional_id, producer_id=producer.producer_id,
                                 producer_epoch=producer.epoch, group_id=group)
    assert wire.request(add, 3).error_code == 0
    assert txn_commit(5) == 0
    assert committed().committed_offset == -1
    assert committed(require_stable=True).error_code == ErrorCode.UNSTABLE_OFFSET_COMMIT
    assert producer.end(commit=False) == 0
    assert committed().committed_offset == -1  # aborted: dropped
    assert wire.request(add, 3).error_code == 0
    assert txn_commit(9) == 0
    assert producer.end(commit=True) == 0
    assert committed(require_stable=True).committed_offset == 9


def test_describe_and_list_transactions(wire):
    topic = unique_topic("txn-admin")
    create_topic(wire, topic)
    producer = TxnProducer(wire, unique_topic("tx-admin"), topic)
    producer.init()
    producer.add()
    producer.send()
    state = wire.request(DescribeTransactionsRequest(transactional_ids=[producer.transactional_id, "nope"]), 0)
    first, missing = state.transaction_states
    assert (first.transaction_state, first.producer_id, first.producer_epoch) == (
        "Ongoing", producer.producer_id, producer.epoch)
    assert [(t.topic, t.partitions) for t in first.topics] == [(topic, [0])]
    assert missing.error_code == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
    listed = wire.request(ListTransactionsRequest(state_filters=["Ongoing", "Bogus"], producer_id_filters=[],
                                                  transactional_id_pattern="tx-admin-.*"), 2)
    assert producer.transactional_id in [t.transactional_id for t in listed.transaction_states]
    assert listed.unknown_state_filters == ["Bogus"]
    producer.end(commit=True)
    listed = wire.request(ListTransactionsRequest(state_filters=["Ongoing"], producer_id_filters=[]), 1)
    assert producer.transactional_id not in [t.transactional_id for t in listed.transaction_states]


def test_transaction_timeout_aborts_and_fences(broker_factory):
    broker = broker_factory("transaction.abort.timed.out.transaction.cleanup.interval.ms=100")
    with WireClient(broker.host, broker.port) as wire:
        topic = unique_topic("txn-timeout")
        create_topic(wire, topic)
        producer = TxnProducer(wire, unique_topic("tx"), topic, timeout_ms=300)
        producer.init()
        producer.add()
        producer.send(3)
        wait_until(lambda: fetch_partition(wire, topic, isolation=1).last_stable_offset == 4, 10,
                   "the timed-out transaction aborted", interval=0.1)
        part = fetch_partition(wire, topic, isolation=1)
        assert part.last_stable_offset == 4  # three records and the ABORT marker
        assert [t.first_offset for t in part.aborted_transactions] == [0]
        assert producer.end(commit=True) == ErrorCode.PRODUCER_FENCED
