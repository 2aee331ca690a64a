"""Orders go through a topic with the two synchronous clients."""

import time

from confluent_kafka import Consumer, Producer
from kafka import KafkaConsumer, KafkaProducer


def test_confluent_kafka_producer_and_consumer_group(kafka_broker, kafka_topic):
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers})
    for number in range(3):
        producer.produce(kafka_topic, key=b"order-%d" % number, value=b"placed")
    assert producer.flush(30) == 0

    consumer = Consumer({
        "bootstrap.servers": kafka_broker.bootstrap_servers,
        "group.id": f"billing-{kafka_topic}",
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    })
    consumer.subscribe([kafka_topic])
    keys = []
    try:
        deadline = time.monotonic() + 30
        while len(keys) < 3 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                continue
            assert message.error() is None, message.error()
            keys.append(message.key())
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    assert keys == [b"order-0", b"order-1", b"order-2"]


def test_kafka_python_producer_and_consumer(kafka_broker, kafka_topic):
    producer = KafkaProducer(bootstrap_servers=kafka_broker.bootstrap_servers)
    try:
        producer.send(kafka_topic, key=b"order-7", value=b"shipped").get(timeout=30)
    finally:
        producer.close()

    consumer = KafkaConsumer(kafka_topic, bootstrap_servers=kafka_broker.bootstrap_servers,
                             auto_offset_reset="earliest")
    records = []
    try:
        deadline = time.monotonic() + 30
        while not records and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                records.extend(batch)
    finally:
        consumer.close()
    assert [(record.key, record.value) for record in records] == [(b"order-7", b"shipped")]
