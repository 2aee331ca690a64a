"""confluent-kafka, kafka-python and aiokafka against a real broker process."""

from __future__ import annotations

import asyncio
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    ConfigResource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    ResourceType,
)
from kafka import KafkaConsumer, KafkaProducer
from kafka import TopicPartition as KafkaTopicPartition
from kafka.admin import KafkaAdminClient
from kafka.admin import NewTopic as KafkaNewTopic

from tests.helpers import unique_topic

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
COUNT = 2000


def expected_values(count: int = COUNT) -> list[bytes]:
    return [f"value-{i}".encode() * 5 for i in range(count)]


def read_back_confluent(bootstrap: str, topic: str, partition: int = 0, count: int = COUNT) -> list[bytes]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False,
                         "auto.offset.reset": "earliest"})
    consumer.assign([TopicPartition(topic, partition, 0)])
    values: list[bytes] = []
    deadline = time.monotonic() + 30
    try:
        while len(values) < count and time.monotonic() < deadline:
            message = consumer.poll(1.0)
            if message is None:
                continue
            assert message.error() is None, message.error()
            values.append(message.value())
    finally:
        consumer.close()
    return values


# -- producers ------------------------------------------------------------------

@pytest.mark.parametrize("codec", CODECS)
def test_confluent_idempotent_produce_reads_back_in_order(broker, codec):
    topic = unique_topic(f"cf-{codec}")
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True, "acks": "all",
                         "compression.type": codec, "linger.ms": 5})
    errors: list[object] = []
    offsets: list[int] = []

    def delivered(error, message):
        if error is not None:
            errors.append(error)
        else:
            offsets.append(message.offset())

    for value in expected_values():
        producer.produce(topic, value=value, key=b"same-key", on_delivery=delivered)
    assert producer.flush(30) == 0
    assert errors == []
    assert sorted(offsets) == list(range(COUNT))
    assert read_back_confluent(broker.bootstrap_servers, topic) == expected_values()


@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_idempotent_produce_reads_back_in_order(broker, codec):
    topic = unique_topic(f"kp-{codec}")
    producer = KafkaProducer(bootstrap_servers=broker.bootstrap_servers, enable_idempotence=True, acks="all",
                             compression_type=None if codec == "none" else codec, linger_ms=5)
    futures = [producer.send(topic, value=value, partition=0) for value in expected_values()]
    producer.flush(30)
    offsets = [future.get(timeout=30).offset for future in futures]
    producer.close()
    assert offsets == list(range(COUNT))
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, group_id=None, consumer_timeout_ms=5000,
                             enable_auto_commit=False)
    consumer.assign([KafkaTopicPartition(topic, 0)])
    consumer.seek_to_beginning()
    values = [message.value for message in consumer]
    consumer.close()
    assert values == expected_values()


@pytest.mark.parametrize("codec", CODECS)
async def test_aiokafka_idempotent_produce_reads_back_in_order(broker, codec):
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
    from aiokafka.structs import TopicPartition as AioTopicPartition

    topic = unique_topic(f"aio-{codec}")
    producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap_servers, enable_idempotence=True, acks="all",
                                compression_type=None if codec == "none" else codec, linger_ms=5)
    await producer.start()
    try:
        futures = [await producer.send(topic, value=value, partition=0) for value in expected_values()]
        metadata = await asyncio.gather(*futures)
    finally:
        await producer.stop()
    assert [m.offset for m in metadata] == list(range(COUNT))
    consumer = AIOKafkaConsumer(bootstrap_servers=broker.bootstrap_servers, group_id=None, enable_auto_commit=False)
    await consumer.start()
    try:
        partition = AioTopicPartition(topic, 0)
        consumer.assign([partition])
        await consumer.seek_to_beginning(partition)
        values: list[bytes] = []
        while len(values) < COUNT:
            batch = await consumer.getmany(partition, timeout_ms=5000)
            if not batch:
                break
            values.extend(record.value for record in batch[partition])
    finally:
        await consumer.stop()
    assert values == expected_values()


def test_topic_is_auto_created_on_first_produce(broker):
    topic = unique_topic("auto")
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True})
    producer.produce(topic, value=b"hello")
    assert producer.flush(15) == 0
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    assert topic in admin.list_topics(timeout=10).topics
    assert read_back_confluent(broker.bootstrap_servers, topic, count=1) == [b"hello"]


# -- admin ----------------------------------------------------------------------

def test_confluent_admin_create_describe_grow_and_delete_topic(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    topic = unique_topic("admin")
    futures = admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1,
                                            config={"retention.ms": "123456"})])
    futures[topic].result(10)
    metadata = admin.list_topics(topic, timeout=10).topics[topic]
    assert len(metadata.partitions) == 2

    resource = ConfigResource(ResourceType.TOPIC, topic)
    configs = admin.describe_configs([resource])[resource].result(10)
    assert configs["retention.ms"].value == "123456"
    assert configs["retention.ms"].source == 1  # DYNAMIC_TOPIC_CONFIG
    assert configs["producer.state.batches.to.retain"].value == "5"
    assert configs["producer.state.batches.to.retain"].source == 5  # DEFAULT_CONFIG

    admin.create_partitions([NewPartitions(topic, 5)])[topic].result(10)
    assert len(admin.list_topics(topic, timeout=10).topics[topic].partitions) == 5
    with pytest.raises(Exception, match="INVALID_PARTITIONS"):
        admin.create_partitions([NewPartitions(topic, 3)])[topic].result(10)

    admin.delete_topics([topic])[topic].result(10)
    assert topic not in admin.list_topics(timeout=10).topics


def test_confluent_admin_refuses_invalid_topic_name_and_duplicate(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    with pytest.raises(Exception, match="TOPIC_EXCEPTION,val=17.*Topic name is invalid"):
        admin.create_topics([NewTopic("no spaces allowed", 1, 1)])["no spaces allowed"].result(10)
    topic = unique_topic("dup")
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)
    with pytest.raises(Exception, match="TOPIC_ALREADY_EXISTS"):
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)


def test_delete_records_and_list_offsets_by_timestamp(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    topic = unique_topic("offsets")
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(10)
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "enable.idempotence": True, "linger.ms": 0})
    base = int(time.time() * 1000) - 100_000
    for i in range(10):
        producer.produce(topic, value=f"r{i}".encode(), timestamp=base + i * 1000)
        producer.flush(10)  # one batch per record, so timestamps map to batches
    tp = TopicPartition(topic, 0)

    def offset_for(spec: OffsetSpec) -> int:
        return admin.list_offsets({tp: spec})[tp].result(10).offset

    assert offset_for(OffsetSpec.earliest()) == 0
    assert offset_for(OffsetSpec.latest()) == 10
    assert offset_for(OffsetSpec.for_timestamp(base + 3500)) == 4
    assert offset_for(OffsetSpec.for_timestamp(base + 3000)) == 3
    assert offset_for(OffsetSpec.for_timestamp(base + 999_999)) == -1
    assert offset_for(OffsetSpec.max_timestamp()) == 9

    result = admin.delete_records([TopicPartition(topic, 0, 6)])[tp].result(10)
    assert result.low_watermark == 6
    assert offset_for(OffsetSpec.earliest()) == 6
    assert read_back_confluent(broker.bootstrap_servers, topic, count=4) == [b"r6", b"r7", b"r8", b"r9"]


def test_kafka_python_admin_create_describe_delete(broker):
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap_servers)
    topic = unique_topic("kp-admin")
    try:
        admin.create_topics([KafkaNewTopic(topic, 3, 1, topic_configs={"producer.state.batches.to.retain": "20"})])
        assert topic in admin.list_topics()
        described = admin.describe_topics([topic])
        assert len(described[0]["partitions"]) == 3
        admin.delete_topics([topic])
        assert topic not in admin.list_topics()
    finally:
        admin.close()
