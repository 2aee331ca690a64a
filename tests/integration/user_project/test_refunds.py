"""Refunds are handled by an asyncio service, with aiokafka."""

import asyncio

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer


async def test_aiokafka_producer_and_consumer_group(kafka_broker, kafka_topic):
    producer = AIOKafkaProducer(bootstrap_servers=kafka_broker.bootstrap_servers)
    await producer.start()
    try:
        await producer.send_and_wait(kafka_topic, b"refund order-3")
    finally:
        await producer.stop()

    consumer = AIOKafkaConsumer(kafka_topic, bootstrap_servers=kafka_broker.bootstrap_servers,
                                group_id=f"refunds-{kafka_topic}", auto_offset_reset="earliest")
    await consumer.start()
    try:
        record = await asyncio.wait_for(consumer.getone(), timeout=30)
    finally:
        await consumer.stop()
    assert record.value == b"refund order-3"
