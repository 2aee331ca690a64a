"""Real idempotent producers against a KIP-758 latest-append broker, through injected faults.

The Java producer (kafka-clients, at most 5 in flight) and confluent-kafka (librdkafka) send through dropped
connections, answers delayed past the request timeout and answers failed after the append (the client retries
a batch the broker already has); every record is read back exactly once, in order. A latest-append broker
answers a retry of a batch older than the producer's latest DUPLICATE_SEQUENCE_NUMBER, without an offset:
what each client then reports to the application is pinned here.
"""

from __future__ import annotations

import logging
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from minibroker.protocol.errors import ErrorCode
from minibroker.testing.embedded import BrokerThread
from tests.helpers import unique_topic
from tests.integration.clients import CLIENT_TIMEOUT, ClientRun

PARTITIONS = 3
COUNT = 3000
REQUEST_TIMEOUT_MS = 500
IN_FLIGHT = 5


@pytest.fixture(scope="module")
def broker() -> Iterator[BrokerThread]:
    with BrokerThread(config={"producer.state.mode": "latest-append"}) as started:
        yield started


@pytest.fixture
def control(broker: BrokerThread) -> Iterator[Any]:
    yield broker.control
    broker.control.clear()


def add_chaos(control: Any, topic: str) -> None:
    """The faults of the project's exactly-once tests, for ever on this topic's Produce requests."""
    control.inject_error("produce", error_code=ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, count=None, every=7,
                         topic=topic, after_append=True)
    control.drop("produce", count=None, every=11, topic=topic)
    control.delay("produce", delay_ms=REQUEST_TIMEOUT_MS + 200, count=None, every=17, topic=topic)


def assert_every_fault_fired(control: Any) -> None:
    fired = {rule["action"]: rule["fired"] for rule in control.status()["rules"]}
    assert set(fired) == {"error", "drop", "delay"} and all(fired.values()), fired


def read_back(broker: BrokerThread, topic: str, partitions: int) -> dict[int, list[tuple[int, bytes]]]:
    """Every record of the topic as (offset, key) per partition, read with confluent-kafka's consumer."""
    consumer = Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "unused",
                         "enable.auto.commit": False})
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)}
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        stored: dict[int, list[tuple[int, bytes]]] = {p: [] for p in range(partitions)}
        deadline = time.monotonic() + 30
        while sum(map(len, stored.values())) < sum(ends.values()) and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is not None:
                assert message.error() is None, message.error()
                partition, offset, key = message.partition(), message.offset(), message.key()
                assert partition is not None and offset is not None and key is not None
                stored[partition].append((offset, key))
    finally:
        consumer.close()
    assert {p: len(rows) for p, rows in stored.items()} == ends
    return stored


def assert_exactly_once_in_order(stored: dict[int, list[tuple[int, int]]], count: int) -> None:
    """Each record number once in the whole topic, and increasing within each partition."""
    numbers = sorted(number for rows in stored.values() for _offset, number in rows)
    assert numbers == list(range(count)), "records lost or duplicated"
    for partition, rows in stored.items():
        in_partition = [number for _offset, number in rows]
        assert in_partition == sorted(in_partition), f"partition {partition} out of order"


def assert_acks_match_the_log(acks: dict[int, tuple[int, int | None]],
                              stored: dict[int, list[tuple[int, int]]]) -> int:
    """Every reported offset holds the record it was reported for; returns how many came without one."""
    where = {(partition, offset): number for partition, rows in stored.items() for offset, number in rows}
    without = 0
    for number, (partition, offset) in acks.items():
        if offset is None or offset < 0:
            without += 1
        else:
            assert where[(partition, offset)] == number, f"record {number} acknowledged at {partition}/{offset}"
    return without


# -- exactly once through faults --------------------------------------------------------------------------------


@pytest.mark.java
def test_java_idempotent_producer_through_faults_reads_back_exactly_once_in_order(broker, control, java):
    topic = broker.create_topic(unique_topic("k758-java"), PARTITIONS)
    add_chaos(control, topic)
    run = java.run(broker, "ProduceRecords", topic, COUNT, f"max.in.flight.requests.per.connection={IN_FLIGHT}",
                   "linger.ms=2", "batch.size=2000", f"request.timeout.ms={REQUEST_TIMEOUT_MS}",
                   "retry.backoff.ms=20", "delivery.timeout.ms=60000").check()
    assert_every_fault_fired(control)
    control.clear()
    lines = [line for line in run.lines() if "i" in line]
    assert all("error" not in line for line in lines), run.describe()
    acks = {line["i"]: (line["partition"], line["offset"]) for line in lines}
    assert len(acks) == len(lines) == COUNT
    stored = {p: [(offset, int(key.decode().removeprefix("key-"))) for offset, key in rows]
              for p, rows in read_back(broker, topic, PARTITIONS).items()}
    assert_exactly_once_in_order(stored, COUNT)
    assert_acks_match_the_log(acks, stored)
    # the only offset Java reports without one is -1: a retry answered DUPLICATE_SEQUENCE_NUMBER
    assert all(offset >= -1 for _partition, offset in acks.values())


def test_confluent_idempotent_producer_through_faults_reads_back_exactly_once_in_order(broker, control):
    topic = broker.create_topic(unique_topic("k758-cf"), PARTITIONS)
    add_chaos(control, topic)
    producer = Producer({
        "bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True, "acks": "all",
        "linger.ms": 2, "batch.num.messages": 50, "max.in.flight.requests.per.connection": IN_FLIGHT,
        "message.timeout.ms": 60000, "retry.backoff.ms": 20, "request.timeout.ms": REQUEST_TIMEOUT_MS,
    })
    acks: dict[int, tuple[int, int | None]] = {}
    errors: list[Any] = []

    def delivered(err: Any, message: Any) -> None:
        if err is not None:
            errors.append(err)
        else:
            acks[int(message.key())] = (message.partition(), message.offset())

    for number in range(COUNT):
        producer.produce(topic, key=str(number).encode(), value=b"v", partition=number % PARTITIONS,
                         on_delivery=delivered)
        producer.poll(0)
    assert producer.flush(60) == 0
    assert_every_fault_fired(control)
    control.clear()
    assert errors == []
    assert len(acks) == COUNT
    stored = {p: [(offset, int(key)) for offset, key in rows]
              for p, rows in read_back(broker, topic, PARTITIONS).items()}
    assert_exactly_once_in_order(stored, COUNT)
    assert_acks_match_the_log(acks, stored)  # None: librdkafka was told no offset


# -- what a client reports for DUPLICATE_SEQUENCE_NUMBER ----------------------------------------------------
#
# Five one-record batches are in flight at once (their answers held), and the first `failed` of them are
# answered NOT_ENOUGH_REPLICAS_AFTER_APPEND after being appended. A retry of any but the last is then older
# than the producer's latest batch: DUPLICATE_SEQUENCE_NUMBER, no offset.


def hold_five_in_flight(broker: BrokerThread, topic: str, failed: int) -> None:
    """The first `failed` Produce requests to the topic are appended, then answered with an error; answers wait."""
    broker.control.inject_error("produce", error_code=ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, count=failed,
                                topic=topic, after_append=True)
    broker.control.hold(topic, 0)


def release_when_five_in_flight(broker: BrokerThread, topic: str, pump: Any) -> None:
    deadline = time.monotonic() + 30
    while broker.control.in_flight(topic, 0)["current"] < IN_FLIGHT:
        assert time.monotonic() < deadline, broker.control.in_flight(topic, 0)
        pump()
    assert broker.control.release(topic, 0) == 1  # the first answer; the other requests wait behind it


def stored_keys(broker: BrokerThread, topic: str) -> list[tuple[int, bytes]]:
    return read_back(broker, topic, 1)[0]


@pytest.mark.java
@pytest.mark.parametrize(("failed", "expected"), [
    # the first batch's retry follows four appended batches; Java reports it last
    (1, [(1, 1), (2, 2), (3, 3), (4, 4), (0, -1)]),
    # all five are retried: four duplicates, then the latest, which gets its offset
    (5, [(0, -1), (1, -1), (2, -1), (3, -1), (4, 4)]),
])
def test_java_reports_a_duplicate_sequence_number_retry_as_success_with_offset_minus_one(broker, control, java,
                                                                                          failed, expected):
    topic = broker.create_topic(unique_topic("k758-java-dup"), 1)
    hold_five_in_flight(broker, topic, failed)
    command = ["java", *java.JVM_OPTS, "-cp", java.classpath, "ProduceRecords", broker.bootstrap_servers, topic,
               str(IN_FLIGHT), "partition=0", "batch.size=1", "linger.ms=0",  # one record per batch
               f"max.in.flight.requests.per.connection={IN_FLIGHT}", "retry.backoff.ms=10"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        release_when_five_in_flight(broker, topic, lambda: time.sleep(0.01))
        stdout, stderr = process.communicate(timeout=CLIENT_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    run = ClientRun(command, process.returncode, stdout, stderr).check()
    lines = [line for line in run.lines() if "i" in line]
    assert [(line["i"], line["offset"]) for line in lines] == expected, run.describe()
    assert stderr.count("Error: NOT_ENOUGH_REPLICAS_AFTER_APPEND") == failed
    assert stored_keys(broker, topic) == [(i, f"key-{i}".encode()) for i in range(IN_FLIGHT)]


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.mark.parametrize(("failed", "expected", "duplicates", "implicit_acks"), [
    # librdkafka never retries the failed batch: a later success acknowledges it ("implicitly acked")
    (1, [None, 1, 2, 3, 4], 0, 1),
    # all five retried: four DUPLICATE_SEQUENCE_NUMBER answers taken as successes, then the latest's offset
    (5, [None, None, None, None, 4], 4, 0),
])
def test_confluent_reports_a_duplicate_sequence_number_retry_as_success_without_offset(broker, control, failed,
                                                                                        expected, duplicates,
                                                                                        implicit_acks):
    topic = broker.create_topic(unique_topic("k758-cf-dup"), 1)
    librdkafka_log = logging.getLogger(f"librdkafka.{topic}")
    librdkafka_log.setLevel(logging.DEBUG)
    librdkafka_log.propagate = False
    lines = _Lines()
    librdkafka_log.addHandler(lines)
    producer = Producer({
        "bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True, "linger.ms": 0,
        "batch.num.messages": 1, "max.in.flight.requests.per.connection": IN_FLIGHT, "retry.backoff.ms": 10,
        "debug": "eos,msg", "logger": librdkafka_log,
    })
    reports: list[tuple[Any, bytes | None, int | None]] = []
    hold_five_in_flight(broker, topic, failed)
    for number in range(IN_FLIGHT):
        producer.produce(topic, key=f"key-{number}".encode(), partition=0,
                         on_delivery=lambda err, message: reports.append((err, message.key(), message.offset())))
    release_when_five_in_flight(broker, topic, lambda: producer.poll(0.01))
    assert producer.flush(30) == 0
    assert [(err, key) for err, key, _offset in reports] == [(None, f"key-{i}".encode()) for i in range(IN_FLIGHT)]
    assert [offset for _err, _key, offset in reports] == expected
    assert sum("failed due to duplicate sequence number" in line for line in lines.lines) == duplicates
    assert sum("implicitly acked by subsequent batch success" in line for line in lines.lines) == implicit_acks
    assert stored_keys(broker, topic) == [(i, f"key-{i}".encode()) for i in range(IN_FLIGHT)]
