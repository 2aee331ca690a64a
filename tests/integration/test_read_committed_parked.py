"""A read_committed consumer never sees an open transaction, even from a Fetch parked in a long poll.

Wire level: a Fetch waiting at offset 0 while another connection appends a transactional batch answers with
nothing and an unchanged LSO; a Fetch waiting when the transaction commits answers with the committed batch.
Real clients: read_committed consumers tail a topic while a transactional producer aborts every other
transaction; they receive the committed records only.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition as AioTopicPartition
from confluent_kafka import Consumer, Producer, TopicPartition

from minibroker.protocol import records
from minibroker.protocol.messages import FetchRequest
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic
from tests.integration.test_txn_wire import TxnProducer
from tests.integration.test_wire_protocol import create_topic

READ_COMMITTED = 1
FETCH_VERSION = 11


def fetch_frame(wire: WireClient, topic: str, offset: int, max_wait_ms: int) -> bytes:
    request = FetchRequest(replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=10_000_000,
                           isolation_level=READ_COMMITTED,
                           topics=[FetchRequest.FetchTopic(topic=topic, partitions=[
                               FetchRequest.FetchTopic.FetchPartition(partition=0, fetch_offset=offset,
                                                                      partition_max_bytes=10_000_000)])])
    return wire.encode_request(request, FETCH_VERSION)


def read_fetch_answer(wire: WireClient) -> Any:
    _correlation_id, response = wire.decode_response(wire.read_frame(), FetchRequest.API_KEY, FETCH_VERSION)
    return response.responses[0].partitions[0]


def test_parked_read_committed_fetch_does_not_answer_with_an_open_transaction(broker):
    topic = unique_topic("rc-parked")
    with WireClient(broker.host, broker.port) as consumer, WireClient(broker.host, broker.port) as producer_wire:
        create_topic(producer_wire, topic)
        producer = TxnProducer(producer_wire, unique_topic("rc-tx"), topic)
        assert producer.init() == 0 and producer.add() == 0
        consumer.send_raw(fetch_frame(consumer, topic, 0, max_wait_ms=1500))
        time.sleep(0.3)  # let the fetch park before the append (generous; the answer must not depend on it)

        assert producer.send(3).error_code == 0

        answer = read_fetch_answer(consumer)  # at its deadline, not woken by the open transaction
        assert (answer.records, answer.high_watermark, answer.last_stable_offset) == (b"", 3, 0)

        consumer.send_raw(fetch_frame(consumer, topic, 0, max_wait_ms=30000))
        time.sleep(0.3)  # let the fetch park before the commit (generous; the answer must not depend on it)
        assert producer.end(commit=True) == 0

        answer = read_fetch_answer(consumer)  # woken by the COMMIT marker
        assert answer.last_stable_offset == 4 and answer.high_watermark == 4
        batches = [records.read_header(answer.records[s:e]) for s, e in records.split_batches(answer.records)]
        assert [(b.base_offset, b.is_control) for b in batches] == [(0, False), (3, True)]


TRANSACTIONS = 10  # odd-numbered ones abort
PER_TRANSACTION = 5


def produce_committing_and_aborting(bootstrap: str, topic: str) -> list[str]:
    """Run TRANSACTIONS transactions, aborting every other one after its records reached the broker."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": unique_topic("rc-tx"),
                         "linger.ms": 0})
    producer.init_transactions(30)
    committed = []
    for txn in range(TRANSACTIONS):
        producer.begin_transaction()
        values = [f"t{txn}-r{i}" for i in range(PER_TRANSACTION)]
        for value in values:
            producer.produce(topic, value.encode(), partition=0)
        producer.flush(30)  # the records are on the broker while the transaction is open
        time.sleep(0.05)  # leave the consumers' fetches parked on the open transaction for a moment
        if txn % 2:
            producer.abort_transaction(30)
        else:
            producer.commit_transaction(30)
            committed.extend(values)
    return committed


def test_real_read_committed_consumers_never_see_aborted_records(broker):
    topic = unique_topic("rc-clients")
    with WireClient(broker.host, broker.port) as wire:
        create_topic(wire, topic)
    confluent = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": unique_topic("g"),
                          "isolation.level": "read_committed", "enable.auto.commit": False,
                          "fetch.wait.max.ms": 500})
    confluent.assign([TopicPartition(topic, 0, 0)])
    seen_confluent: list[str] = []
    seen_aiokafka: list[str] = []

    async def run() -> list[str]:
        aio = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap_servers, isolation_level="read_committed",
                               fetch_max_wait_ms=500, enable_auto_commit=False)
        await aio.start()
        try:
            aio.assign([AioTopicPartition(topic, 0)])
            await aio.seek_to_beginning()
            producing = asyncio.get_running_loop().run_in_executor(
                None, produce_committing_and_aborting, broker.bootstrap_servers, topic)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                batch = await aio.getmany(timeout_ms=100)
                seen_aiokafka.extend(m.value.decode() for msgs in batch.values() for m in msgs)
                message = confluent.poll(0)  # librdkafka fetches in its own thread
                while message is not None:
                    if not message.error():
                        seen_confluent.append(message.value().decode())
                    message = confluent.poll(0)
                if producing.done() and len(seen_aiokafka) >= TRANSACTIONS // 2 * PER_TRANSACTION \
                        and len(seen_confluent) >= TRANSACTIONS // 2 * PER_TRANSACTION:
                    break
            return await producing
        finally:
            await aio.stop()

    try:
        committed = asyncio.run(run())
    finally:
        confluent.close()
    assert seen_aiokafka == committed
    assert seen_confluent == committed
