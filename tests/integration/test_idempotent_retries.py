"""Idempotent producers retrying through dropped and delayed Produce responses: exactly once, in order."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from kafka import KafkaProducer

from minibroker.testing.process import start_broker
from tests.helpers import unique_topic

PARTITIONS = 3
COUNT = 6000


@pytest.fixture(scope="module", params=["produce:drop:every=9", "produce:delay=1500:every=15"])
def faulty_broker(request):
    process = start_broker("num.partitions=3", extra_args=("--fault", request.param))
    yield process
    process.stop()


def read_partitions(bootstrap: str, topic: str, expected: int) -> dict[int, list[bytes]]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    seen: dict[int, list[bytes]] = {p: [] for p in range(PARTITIONS)}
    total = idle = 0
    try:
        while total < expected and idle < 10:
            message = consumer.poll(1.0)
            if message is None:
                idle += 1
                continue
            assert message.error() is None, message.error()
            seen[message.partition()].append(message.value())
            total += 1
        # anything beyond the expected count would be a duplicate: look for it briefly
        extra = consumer.poll(1.0)
        assert extra is None, f"unexpected extra record {extra.value()!r}"
    finally:
        consumer.close()
    return seen


def expected_by_partition() -> dict[int, list[bytes]]:
    return {p: [f"p{p}-{i}".encode() for i in range(COUNT // PARTITIONS)] for p in range(PARTITIONS)}


def test_confluent_idempotent_producer_survives_faults_exactly_once(faulty_broker):
    topic = unique_topic("cf-faults")
    producer = Producer({
        "bootstrap.servers": faulty_broker.bootstrap_servers, "enable.idempotence": True, "acks": "all",
        "linger.ms": 2, "batch.num.messages": 50, "max.in.flight.requests.per.connection": 5,
        "message.timeout.ms": 60000, "retry.backoff.ms": 50, "request.timeout.ms": 1000,
    })
    errors: list[object] = []
    for i in range(COUNT // PARTITIONS):
        for p in range(PARTITIONS):
            producer.produce(topic, value=f"p{p}-{i}".encode(), partition=p,
                             on_delivery=lambda err, _msg: errors.append(err) if err else None)
        producer.poll(0)
    assert producer.flush(90) == 0
    assert errors == []
    assert read_partitions(faulty_broker.bootstrap_servers, topic, COUNT) == expected_by_partition()
    assert "fault injection" in faulty_broker.log_text()


def test_kafka_python_idempotent_producer_survives_faults_exactly_once(faulty_broker):
    topic = unique_topic("kp-faults")
    producer = KafkaProducer(bootstrap_servers=faulty_broker.bootstrap_servers, enable_idempotence=True, acks="all",
                             linger_ms=2, batch_size=2000, max_in_flight_requests_per_connection=5,
                             retry_backoff_ms=50, delivery_timeout_ms=90000, request_timeout_ms=1000)
    futures = []
    for i in range(COUNT // PARTITIONS):
        for p in range(PARTITIONS):
            futures.append(producer.send(topic, value=f"p{p}-{i}".encode(), partition=p))
    producer.flush(90)
    for future in futures:
        future.get(timeout=30)
    producer.close()
    assert read_partitions(faulty_broker.bootstrap_servers, topic, COUNT) == expected_by_partition()
    assert "fault injection" in faulty_broker.log_text()
