"""One client application run against one broker; prints what the application saw as one JSON line.

    python transcript_app.py CLIENT SCENARIO BOOTSTRAP TOPIC GROUP TXN

CLIENT is confluent-kafka, kafka-python or aiokafka; SCENARIO one of SCENARIOS below (not every client runs
every one). Records, offsets and exceptions are printed by name, never by id or time, so that the two brokers'
runs compare equal when the brokers behave alike (tests/differential/test_client_transcripts.py).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

TIMEOUT_S = 60.0


def confluent(scenario: str, bootstrap: str, topic: str, group: str, txn: str) -> dict[str, Any]:
    from confluent_kafka import Consumer, KafkaException, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    base: dict[str, str | int | float | bool] = {"bootstrap.servers": bootstrap, "client.id": "transcript"}
    seen: dict[str, Any] = {}

    def read(isolation: str, want: int) -> list[list[Any]]:
        consumer = Consumer({**base, "group.id": group, "auto.offset.reset": "earliest",
                             "isolation.level": isolation, "enable.auto.commit": False})
        consumer.subscribe([topic])
        records: list[list[Any]] = []
        deadline = time.monotonic() + TIMEOUT_S
        while len(records) < want and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and not message.error():
                records.append([message.partition(), message.offset(), (message.value() or b"").decode()])
        consumer.commit(asynchronous=False)
        seen["committed"] = [[tp.partition, tp.offset] for tp in consumer.committed(consumer.assignment(), 30)]
        consumer.close()
        return sorted(records)

    admin = AdminClient(base)
    if scenario == "admin":
        result = admin.create_topics([NewTopic(topic, 2, 1)])
        result[topic].result(TIMEOUT_S)
        try:
            admin.create_topics([NewTopic(topic, 2, 1)])[topic].result(TIMEOUT_S)
        except KafkaException as exc:
            seen["create_again"] = exc.args[0].name()
        described = admin.describe_topics(__import__("confluent_kafka").TopicCollection([topic]))[topic].result(30)
        seen["described"] = [len(described.partitions), [len(p.replicas) for p in described.partitions]]
        admin.delete_topics([topic])[topic].result(TIMEOUT_S)
        return seen
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(TIMEOUT_S)
    if scenario == "produce_consume_group":
        producer = Producer({**base, "enable.idempotence": False, "acks": "all"})
        for index in range(5):
            producer.produce(topic, f"v{index}".encode())
        seen["unflushed"] = producer.flush(TIMEOUT_S)
        seen["records"] = read("read_uncommitted", 5)
    elif scenario == "idempotent":
        producer = Producer({**base, "enable.idempotence": True})
        for index in range(5):
            producer.produce(topic, f"v{index}".encode())
        seen["unflushed"] = producer.flush(TIMEOUT_S)
        seen["records"] = read("read_uncommitted", 5)
    elif scenario == "transactional":
        producer = Producer({**base, "transactional.id": txn})
        producer.init_transactions(TIMEOUT_S)
        for outcome in ("commit", "abort", "commit"):
            producer.begin_transaction()
            producer.produce(topic, outcome.encode())
            producer.flush(TIMEOUT_S)
            if outcome == "commit":
                producer.commit_transaction(TIMEOUT_S)
            else:
                producer.abort_transaction(TIMEOUT_S)
        seen["records"] = read("read_committed", 2)
    return seen


def kafka_python(scenario: str, bootstrap: str, topic: str, group: str, txn: str) -> dict[str, Any]:
    from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
    from kafka.admin import NewTopic
    from kafka.errors import KafkaError

    seen: dict[str, Any] = {}
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="transcript")
    if scenario == "admin":
        admin.create_topics([NewTopic(topic, 2, 1)])
        try:
            admin.create_topics([NewTopic(topic, 2, 1)])
        except KafkaError as exc:
            seen["create_again"] = type(exc).__name__
        described = admin.describe_topics([topic])
        seen["described"] = [[t["error_code"], len(t["partitions"])] for t in described]
        admin.delete_topics([topic])
        admin.close()
        return seen
    admin.create_topics([NewTopic(topic, 1, 1)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=bootstrap, client_id="transcript", acks="all",
                             enable_idempotence=scenario == "idempotent")
    offsets = [producer.send(topic, f"v{index}".encode()).get(TIMEOUT_S).offset for index in range(5)]
    producer.close()
    seen["offsets"] = offsets
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, client_id="transcript", group_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False)
    records: list[list[Any]] = []
    deadline = time.monotonic() + TIMEOUT_S
    while len(records) < 5 and time.monotonic() < deadline:
        for batch in consumer.poll(500).values():
            records += [[r.partition, r.offset, r.value.decode()] for r in batch]
    consumer.commit()
    seen["records"] = sorted(records)
    seen["committed"] = consumer.committed(TopicPartition(topic, 0))
    consumer.close()
    return seen


def aiokafka(scenario: str, bootstrap: str, topic: str, group: str, txn: str) -> dict[str, Any]:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    async def run() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, client_id="transcript")
        await admin.start()
        await admin.create_topics([NewTopic(topic, 1, 1)])
        await admin.close()
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, client_id="transcript", acks="all",
                                    enable_idempotence=scenario == "idempotent")
        await producer.start()
        try:
            seen["offsets"] = [(await producer.send_and_wait(topic, f"v{i}".encode())).offset for i in range(5)]
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, client_id="transcript", group_id=group,
                                    auto_offset_reset="earliest", enable_auto_commit=False)
        await consumer.start()
        try:
            records: list[list[Any]] = []
            deadline = time.monotonic() + TIMEOUT_S
            while len(records) < 5 and time.monotonic() < deadline:
                for batch in (await consumer.getmany(timeout_ms=500)).values():
                    records += [[r.partition, r.offset, r.value.decode()] for r in batch]
            await consumer.commit()
            seen["records"] = sorted(records)
            seen["committed"] = await consumer.committed(TopicPartition(topic, 0))
        finally:
            await consumer.stop()
        return seen

    return asyncio.run(run())


CLIENTS = {"confluent-kafka": confluent, "kafka-python": kafka_python, "aiokafka": aiokafka}
SCENARIOS = {
    "confluent-kafka": ("produce_consume_group", "idempotent", "transactional", "admin"),
    "kafka-python": ("produce_consume_group", "idempotent", "admin"),
    "aiokafka": ("produce_consume_group", "idempotent"),
}

if __name__ == "__main__":
    client, scenario, bootstrap, topic, group, txn = sys.argv[1:7]
    try:
        outcome: dict[str, Any] = {"seen": CLIENTS[client](scenario, bootstrap, topic, group, txn)}
    except Exception as exc:  # what the application sees: the exception's type
        outcome = {"exception": type(exc).__name__, "message": str(exc)}
    print(json.dumps(outcome, default=str), flush=True)
