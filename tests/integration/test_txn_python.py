"""Transactions through confluent-kafka (librdkafka), aiokafka and kafka-python against a real broker process.

For each client: a transactional producer commits one transaction and aborts another (whose records reached the
broker first); a second producer with the same transactional id fences the first and aborts its open
transaction; and an exactly-once consume-transform-produce loop (a read_committed group consumer without auto
commit, plus a transactional producer that sends the consumed offsets in the same transaction) copies an input
topic, aborting one transaction and "crashing" in another (a new producer with the same transactional id and a new
consumer take over while the old transaction is still open). The results are read back with a confluent-kafka
consumer (assign, no group) in read_committed and read_uncommitted mode.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka import TopicPartition as AioTopicPartition
from aiokafka.errors import KafkaError as AioKafkaError
from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KpTopicPartition
from kafka.errors import KafkaError as KpKafkaError
from kafka.structs import OffsetAndMetadata as KpOffsetAndMetadata

from minibroker.protocol.messages import DescribeTransactionsRequest
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic, wait_until

#: Upper bound on any single wait.
WAIT = 30.0

#: Records in the input topic of the consume-transform-produce tests, over PARTITIONS partitions.
TOTAL = 45
PARTITIONS = 3

#: The loop aborts its ABORT_AT-th transaction and "crashes" in its CRASH_AT-th.
ABORT_AT = 2
CRASH_AT = 4


# -- shared helpers ---------------------------------------------------------------------------------------------

def create_topics(broker: Any, *topics: str, partitions: int = PARTITIONS) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    futures = admin.create_topics([NewTopic(t, partitions, 1) for t in topics], operation_timeout=10)
    for future in futures.values():
        future.result(timeout=WAIT)


def produce_plain(broker: Any, topic: str, count: int, partitions: int = PARTITIONS) -> None:
    """Non-transactional records value b"v-I" (I = 0..count-1), record i to partition i % partitions."""
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "acks": "all", "linger.ms": 5})
    for i in range(count):
        producer.produce(topic, value=f"v-{i}".encode(), partition=i % partitions)
    assert producer.flush(WAIT) == 0


def read_all(broker: Any, topic: str, isolation: str, partitions: int = PARTITIONS) -> list[Any]:
    """Every record of the topic visible at `isolation` ("read_committed" / "read_uncommitted")."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": unique_topic("reader"),
                         "isolation.level": isolation, "enable.partition.eof": True, "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        at_end: set[int] = set()
        messages = []
        deadline = time.monotonic() + WAIT
        while len(at_end) < partitions:
            assert time.monotonic() < deadline, f"{topic}: partitions {sorted(at_end)} reached their end, not all"
            message = consumer.poll(0.2)
            if message is None:
                continue
            error = message.error()
            if error is not None:
                assert error.code() == KafkaError._PARTITION_EOF, error
                at_end.add(int(message.partition() or 0))
                continue
            messages.append(message)
        return messages
    finally:
        consumer.close()


def values(messages: list[Any]) -> list[str]:
    """The record values ("NAME-I"), sorted by NAME, then by the number I."""
    def order(value: str) -> tuple[str, int]:
        name, number = value.rsplit("-", 1)
        return name, int(number)
    return sorted((m.value().decode() for m in messages), key=order)


def group_offsets(broker: Any, group: str) -> dict[int, int]:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})  # keep a reference while the future runs
    result = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(timeout=WAIT)
    return {tp.partition: tp.offset for tp in result.topic_partitions}


def check_exactly_once(broker: Any, sink: str, group: str) -> None:
    """The output holds a copy of every input record exactly once; the group committed the end of the input."""
    committed = read_all(broker, sink, "read_committed")
    copies = Counter(m.key().decode() for m in committed)
    expected = {f"{p}:{o}" for p in range(PARTITIONS) for o in range(TOTAL // PARTITIONS)}
    assert set(copies) == expected, f"missing {sorted(expected - set(copies))}, extra {sorted(set(copies) - expected)}"
    assert set(copies.values()) == {1}, f"duplicated: {sorted(k for k, n in copies.items() if n > 1)}"
    assert sorted(m.value().decode() for m in committed) == sorted(f"copy-v-{i}" for i in range(TOTAL))
    # the aborted and the abandoned transactions did reach the broker
    assert len(read_all(broker, sink, "read_uncommitted")) > TOTAL
    assert group_offsets(broker, group) == {p: TOTAL // PARTITIONS for p in range(PARTITIONS)}


class CopyState:
    """Bookkeeping of a consume-transform-produce run: transaction count and what happened."""

    def __init__(self) -> None:
        self.txn = 0
        self.events: list[str] = []
        self.deadline = time.monotonic() + 60

    def check_deadline(self) -> None:
        assert time.monotonic() < self.deadline, f"the copy loop did not finish in time: {self.events}"


# -- confluent-kafka --------------------------------------------------------------------------------------------

CF_FENCED = {KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH}


def transaction_state(broker: Any, txn_id: str) -> str:
    """The coordinator's state of a transactional id (DescribeTransactions)."""
    with WireClient(broker.host, broker.port) as wire:
        answer = wire.request(DescribeTransactionsRequest(transactional_ids=[txn_id]), 0)
    return str(answer.transaction_states[0].transaction_state)


def cf_producer(broker: Any, txn_id: str, **config: Any) -> Producer:
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "transactional.id": txn_id, "linger.ms": 5,
                         **config})
    producer.init_transactions(WAIT)
    return producer


def test_confluent_commit_and_abort(broker: Any) -> None:
    topic = unique_topic("cft-commit")
    create_topics(broker, topic)
    producer = cf_producer(broker, unique_topic("cft-commit-txn"))
    producer.begin_transaction()
    for i in range(9):
        producer.produce(topic, value=f"c-{i}".encode(), partition=i % PARTITIONS)
    producer.commit_transaction(WAIT)

    producer.begin_transaction()
    delivered: list[Any] = []
    for i in range(5):
        producer.produce(topic, value=f"a-{i}".encode(), partition=i % PARTITIONS,
                         on_delivery=lambda err, msg: delivered.append((err, msg.offset())))
    assert producer.flush(WAIT) == 0
    assert len(delivered) == 5 and all(err is None for err, _ in delivered), delivered
    producer.abort_transaction(WAIT)

    assert values(read_all(broker, topic, "read_committed")) == [f"c-{i}" for i in range(9)]
    assert values(read_all(broker, topic, "read_uncommitted")) == [f"a-{i}" for i in range(5)] + \
        [f"c-{i}" for i in range(9)]


def test_confluent_fencing(broker: Any) -> None:
    topic = unique_topic("cft-fence")
    txn_id = unique_topic("cft-fence-txn")
    create_topics(broker, topic)
    first = cf_producer(broker, txn_id)
    first.begin_transaction()
    for i in range(4):
        first.produce(topic, value=f"old-{i}".encode(), partition=i % PARTITIONS)
    assert first.flush(WAIT) == 0

    second = cf_producer(broker, txn_id)  # fences `first` and aborts its transaction
    with pytest.raises(KafkaException) as caught:
        first.commit_transaction(WAIT)
    error = caught.value.args[0]
    assert error.code() in CF_FENCED and error.fatal(), error

    second.begin_transaction()
    for i in range(3):
        second.produce(topic, value=f"new-{i}".encode(), partition=i % PARTITIONS)
    second.commit_transaction(WAIT)
    assert values(read_all(broker, topic, "read_committed")) == ["new-0", "new-1", "new-2"]
    assert len(read_all(broker, topic, "read_uncommitted")) == 7


def test_confluent_consume_transform_produce(broker: Any) -> None:
    """send_offsets_to_transaction with the consumer's group metadata; one abort, one abandoned transaction."""
    source, sink = unique_topic("cft-eos-in"), unique_topic("cft-eos-out")
    group, txn_id = unique_topic("cft-eos-group"), unique_topic("cft-eos-txn")
    create_topics(broker, source, sink)
    produce_plain(broker, source, TOTAL)

    def new_consumer() -> Consumer:
        consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group,
                             "isolation.level": "read_committed", "enable.auto.commit": False,
                             "auto.offset.reset": "earliest", "heartbeat.interval.ms": 300})
        consumer.subscribe([source])
        return consumer

    state = CopyState()
    producer = cf_producer(broker, txn_id)
    consumer = new_consumer()
    try:
        while True:
            state.check_deadline()
            batch = consumer.consume(num_messages=7, timeout=0.5)
            for message in batch:
                assert message.error() is None, message.error()
            if not batch:
                assignment = consumer.assignment()
                if len(assignment) == PARTITIONS and \
                        sum(tp.offset for tp in consumer.position(assignment)) == TOTAL:
                    break
                continue
            state.txn += 1
            producer.begin_transaction()
            for m in batch:
                producer.produce(sink, key=f"{m.partition()}:{m.offset()}".encode(),
                                 value=b"copy-" + (m.value() or b""), partition=int(m.partition() or 0))
            producer.send_offsets_to_transaction(consumer.position(consumer.assignment()),
                                                 consumer.consumer_group_metadata(), WAIT)
            if state.txn == ABORT_AT:
                assert producer.flush(WAIT) == 0
                producer.abort_transaction(WAIT)
                for tp in consumer.committed(consumer.assignment(), timeout=WAIT):
                    consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else 0))
                state.events.append("aborted")
            elif state.txn == CRASH_AT:
                # "crash": the transaction stays open; a new producer (same transactional id) and consumer take over
                assert producer.flush(WAIT) == 0
                consumer.close()
                old, producer = producer, cf_producer(broker, txn_id)
                with pytest.raises(KafkaException) as caught:
                    old.commit_transaction(WAIT)
                assert caught.value.args[0].code() in CF_FENCED, caught.value
                consumer = new_consumer()
                state.events.append("crashed")
            else:
                producer.commit_transaction(WAIT)
                state.events.append("committed")
    finally:
        consumer.close()
    assert state.events.count("aborted") == state.events.count("crashed") == 1, state.events
    check_exactly_once(broker, sink, group)


def test_confluent_transaction_timeout(broker_factory: Any) -> None:
    """transaction.timeout.ms=1000: the coordinator aborts the transaction and fences the producer; commit fails."""
    broker = broker_factory("transaction.abort.timed.out.transaction.cleanup.interval.ms=200")
    topic = unique_topic("cft-timeout")
    create_topics(broker, topic)
    txn_id = unique_topic("cft-timeout-txn")
    producer = cf_producer(broker, txn_id, **{"transaction.timeout.ms": 1000, "message.timeout.ms": 1000})
    producer.begin_transaction()
    for i in range(4):
        producer.produce(topic, value=f"late-{i}".encode(), partition=i % PARTITIONS)
    assert producer.flush(WAIT) == 0
    wait_until(lambda: transaction_state(broker, txn_id) != "Ongoing", WAIT,
               "the coordinator aborted the timed-out transaction", interval=0.1)
    with pytest.raises(KafkaException) as caught:
        producer.commit_transaction(WAIT)
    assert caught.value.args[0].code() in CF_FENCED, caught.value
    assert read_all(broker, topic, "read_committed") == []
    assert len(read_all(broker, topic, "read_uncommitted")) == 4


# -- aiokafka ---------------------------------------------------------------------------------------------------

async def aio_producer(broker: Any, txn_id: str) -> AIOKafkaProducer:
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap_servers, transactional_id=txn_id,
                                enable_idempotence=True, request_timeout_ms=20000)
    await producer.start()
    return producer


async def test_aiokafka_commit_and_abort(broker: Any) -> None:
    topic = unique_topic("aiot-commit")
    create_topics(broker, topic)
    producer = await aio_producer(broker, unique_topic("aiot-commit-txn"))
    try:
        async with producer.transaction():
            for i in range(9):
                await producer.send(topic, f"c-{i}".encode(), partition=i % PARTITIONS)
        await producer.begin_transaction()
        for i in range(5):
            metadata = await producer.send_and_wait(topic, f"a-{i}".encode(), partition=i % PARTITIONS)
            assert metadata.offset >= 0
        await producer.abort_transaction()
    finally:
        await producer.stop()
    assert values(read_all(broker, topic, "read_committed")) == [f"c-{i}" for i in range(9)]
    assert len(read_all(broker, topic, "read_uncommitted")) == 14


async def test_aiokafka_fencing(broker: Any) -> None:
    topic = unique_topic("aiot-fence")
    txn_id = unique_topic("aiot-fence-txn")
    create_topics(broker, topic)
    first = await aio_producer(broker, txn_id)
    second = None
    try:
        await first.begin_transaction()
        for i in range(4):
            await first.send_and_wait(topic, f"old-{i}".encode(), partition=i % PARTITIONS)
        second = await aio_producer(broker, txn_id)  # fences `first` and aborts its transaction
        with pytest.raises(AioKafkaError) as caught:
            await first.commit_transaction()
        assert type(caught.value).__name__ in ("ProducerFenced", "ProducerFencedError", "InvalidProducerEpoch"), \
            repr(caught.value)
        async with second.transaction():
            for i in range(3):
                await second.send(topic, f"new-{i}".encode(), partition=i % PARTITIONS)
    finally:
        await first.stop()
        if second is not None:
            await second.stop()
    assert values(read_all(broker, topic, "read_committed")) == ["new-0", "new-1", "new-2"]


async def test_aiokafka_consume_transform_produce(broker: Any) -> None:
    """send_offsets_to_transaction(offsets, group_id) (aiokafka sends no group metadata); abort and abandon once."""
    source, sink = unique_topic("aiot-eos-in"), unique_topic("aiot-eos-out")
    group, txn_id = unique_topic("aiot-eos-group"), unique_topic("aiot-eos-txn")
    create_topics(broker, source, sink)
    produce_plain(broker, source, TOTAL)

    async def new_consumer() -> AIOKafkaConsumer:
        consumer = AIOKafkaConsumer(source, bootstrap_servers=broker.bootstrap_servers, group_id=group,
                                    isolation_level="read_committed", enable_auto_commit=False,
                                    auto_offset_reset="earliest", heartbeat_interval_ms=300)
        await consumer.start()
        return consumer

    state = CopyState()
    producer = await aio_producer(broker, txn_id)
    consumer = await new_consumer()
    old_producers = []
    try:
        while True:
            state.check_deadline()
            batches = await consumer.getmany(timeout_ms=500, max_records=7)
            if not batches:
                assignment = consumer.assignment()
                if len(assignment) == PARTITIONS and \
                        sum([await consumer.position(tp) for tp in assignment]) == TOTAL:
                    break
                continue
            state.txn += 1
            await producer.begin_transaction()
            offsets = {}
            for tp, messages in batches.items():
                for m in messages:
                    await producer.send(sink, b"copy-" + m.value, key=f"{m.partition}:{m.offset}".encode(),
                                        partition=m.partition)
                offsets[tp] = messages[-1].offset + 1
            await producer.send_offsets_to_transaction(offsets, group)
            if state.txn == ABORT_AT:
                await producer.flush()
                await producer.abort_transaction()
                for tp in consumer.assignment():
                    committed = await consumer.committed(tp)
                    consumer.seek(tp, committed if committed is not None else 0)
                state.events.append("aborted")
            elif state.txn == CRASH_AT:
                await producer.flush()
                await consumer.stop()
                old_producers.append(producer)
                producer = await aio_producer(broker, txn_id)
                with pytest.raises(AioKafkaError):
                    await old_producers[-1].commit_transaction()
                consumer = await new_consumer()
                state.events.append("crashed")
            else:
                await producer.commit_transaction()
                state.events.append("committed")
    finally:
        await consumer.stop()
        await producer.stop()
        for old in old_producers:
            await old.stop()
    assert state.events.count("aborted") == state.events.count("crashed") == 1, state.events
    check_exactly_once(broker, sink, group)


async def test_aiokafka_read_committed_consumer(broker: Any) -> None:
    """aiokafka's own read_committed consumer skips an aborted transaction and stops at the last stable offset."""
    topic = unique_topic("aiot-read")
    create_topics(broker, topic, partitions=1)
    producer = await aio_producer(broker, unique_topic("aiot-read-txn"))
    consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap_servers, isolation_level="read_committed",
                                enable_auto_commit=False)
    await consumer.start()
    try:
        async with producer.transaction():
            await producer.send(topic, b"c-0", partition=0)
        await producer.begin_transaction()
        await producer.send_and_wait(topic, b"a-0", partition=0)
        await producer.abort_transaction()
        async with producer.transaction():
            await producer.send(topic, b"c-1", partition=0)
        await producer.begin_transaction()  # left open: its record is past the last stable offset
        await producer.send_and_wait(topic, b"open-0", partition=0)

        tp = AioTopicPartition(topic, 0)
        consumer.assign([tp])
        consumer.seek(tp, 0)
        got: list[bytes] = []
        deadline = time.monotonic() + WAIT
        while len(got) < 2 and time.monotonic() < deadline:
            for messages in (await consumer.getmany(timeout_ms=200)).values():
                got += [m.value for m in messages]
        # the wait is the behaviour: nothing past the last stable offset arrives in this time (no condition to poll)
        await asyncio.sleep(0.5)
        for messages in (await consumer.getmany(timeout_ms=300)).values():
            got += [m.value for m in messages]
        assert got == [b"c-0", b"c-1"]
        await producer.commit_transaction()
        deadline = time.monotonic() + WAIT
        while len(got) < 3 and time.monotonic() < deadline:
            for messages in (await consumer.getmany(timeout_ms=200)).values():
                got += [m.value for m in messages]
        assert got == [b"c-0", b"c-1", b"open-0"]
    finally:
        await consumer.stop()
        await producer.stop()


# -- kafka-python -----------------------------------------------------------------------------------------------

def kp_producer(broker: Any, txn_id: str) -> KafkaProducer:
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, transactional_id=txn_id, linger_ms=5,
                             request_timeout_ms=20000, max_block_ms=30000)
    producer.init_transactions()
    return producer


@pytest.fixture
def kp_closing() -> Iterator[list[Any]]:
    """kafka-python clients a test created; each is closed afterwards."""
    clients: list[Any] = []
    yield clients
    for client in clients:
        client.close(timeout=5) if isinstance(client, KafkaProducer) else client.close()


def test_kafka_python_commit_and_abort(broker: Any, kp_closing: list[Any]) -> None:
    topic = unique_topic("kpt-commit")
    create_topics(broker, topic)
    producer = kp_producer(broker, unique_topic("kpt-commit-txn"))
    kp_closing.append(producer)
    producer.begin_transaction()
    for i in range(9):
        producer.send(topic, f"c-{i}".encode(), partition=i % PARTITIONS)
    producer.commit_transaction()
    producer.begin_transaction()
    futures = [producer.send(topic, f"a-{i}".encode(), partition=i % PARTITIONS) for i in range(5)]
    producer.flush()
    assert all(f.get(timeout=WAIT).offset >= 0 for f in futures)
    producer.abort_transaction()
    assert values(read_all(broker, topic, "read_committed")) == [f"c-{i}" for i in range(9)]
    assert len(read_all(broker, topic, "read_uncommitted")) == 14


def test_kafka_python_fencing(broker: Any, kp_closing: list[Any]) -> None:
    topic = unique_topic("kpt-fence")
    txn_id = unique_topic("kpt-fence-txn")
    create_topics(broker, topic)
    first = kp_producer(broker, txn_id)
    kp_closing.append(first)
    first.begin_transaction()
    for i in range(4):
        first.send(topic, f"old-{i}".encode(), partition=i % PARTITIONS)
    first.flush()
    second = kp_producer(broker, txn_id)  # fences `first` and aborts its transaction
    kp_closing.append(second)
    with pytest.raises(KpKafkaError) as caught:
        first.commit_transaction()
    assert type(caught.value).__name__ in ("ProducerFencedError", "InvalidProducerEpochError"), repr(caught.value)
    second.begin_transaction()
    for i in range(3):
        second.send(topic, f"new-{i}".encode(), partition=i % PARTITIONS)
    second.commit_transaction()
    assert values(read_all(broker, topic, "read_committed")) == ["new-0", "new-1", "new-2"]


def test_kafka_python_consume_transform_produce(broker: Any, kp_closing: list[Any]) -> None:
    """send_offsets_to_transaction with the consumer's group_metadata(); one abort, one abandoned transaction."""
    source, sink = unique_topic("kpt-eos-in"), unique_topic("kpt-eos-out")
    group, txn_id = unique_topic("kpt-eos-group"), unique_topic("kpt-eos-txn")
    create_topics(broker, source, sink)
    produce_plain(broker, source, TOTAL)

    def new_consumer() -> KafkaConsumer:
        consumer = KafkaConsumer(source, bootstrap_servers=broker.bootstrap_servers, group_id=group,
                                 isolation_level="read_committed", enable_auto_commit=False,
                                 auto_offset_reset="earliest", heartbeat_interval_ms=300, max_poll_records=7)
        kp_closing.append(consumer)
        return consumer

    state = CopyState()
    producer = kp_producer(broker, txn_id)
    kp_closing.append(producer)
    consumer = new_consumer()
    while True:
        state.check_deadline()
        batches = consumer.poll(timeout_ms=500)  # >= 500 ms: see the kafka-python join race in the brief
        if not batches:
            assignment = consumer.assignment()
            if len(assignment) == PARTITIONS and sum(consumer.position(tp) for tp in assignment) == TOTAL:
                break
            continue
        state.txn += 1
        producer.begin_transaction()
        offsets = {}
        for tp, messages in batches.items():
            for m in messages:
                producer.send(sink, b"copy-" + m.value, key=f"{m.partition}:{m.offset}".encode(),
                              partition=m.partition)
            offsets[KpTopicPartition(tp.topic, tp.partition)] = KpOffsetAndMetadata(messages[-1].offset + 1, "", -1)
        producer.send_offsets_to_transaction(offsets, consumer.group_metadata())
        if state.txn == ABORT_AT:
            producer.flush()
            producer.abort_transaction()
            for tp in consumer.assignment():
                committed = consumer.committed(tp)
                consumer.seek(tp, committed if committed is not None else 0)
            state.events.append("aborted")
        elif state.txn == CRASH_AT:
            producer.flush()
            consumer.close()
            old, producer = producer, kp_producer(broker, txn_id)
            kp_closing.append(producer)
            with pytest.raises(KpKafkaError):
                old.commit_transaction()
            consumer = new_consumer()
            state.events.append("crashed")
        else:
            producer.commit_transaction()
            state.events.append("committed")
    consumer.close()
    assert state.events.count("aborted") == state.events.count("crashed") == 1, state.events
    check_exactly_once(broker, sink, group)


def test_kafka_python_read_committed_consumer(broker: Any, kp_closing: list[Any]) -> None:
    """kafka-python's read_committed consumer skips an aborted transaction and stops at the last stable offset."""
    topic = unique_topic("kpt-read")
    create_topics(broker, topic, partitions=1)
    producer = kp_producer(broker, unique_topic("kpt-read-txn"))
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, isolation_level="read_committed",
                             enable_auto_commit=False)
    kp_closing += [producer, consumer]
    for value, commit in ((b"c-0", True), (b"a-0", False), (b"c-1", True), (b"open-0", None)):
        producer.begin_transaction()
        producer.send(topic, value, partition=0).get(timeout=WAIT)
        if commit is True:
            producer.commit_transaction()
        elif commit is False:
            producer.abort_transaction()
    tp = KpTopicPartition(topic, 0)
    consumer.assign([tp])
    consumer.seek(tp, 0)

    def poll_until(count: int) -> list[bytes]:
        got: list[bytes] = []
        deadline = time.monotonic() + WAIT
        while len(got) < count and time.monotonic() < deadline:
            got += [m.value for messages in consumer.poll(timeout_ms=500).values() for m in messages]
        return got

    first = poll_until(2)
    first += [m.value for messages in consumer.poll(timeout_ms=1000).values() for m in messages]
    assert first == [b"c-0", b"c-1"]
    producer.commit_transaction()  # the open transaction
    assert poll_until(1) == [b"open-0"]
