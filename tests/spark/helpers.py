"""Writing and reading test topics with the project's client, independently of Spark; and the one way the Spark
tests open the Kafka source."""

from __future__ import annotations

import asyncio
from typing import Any

from minibroker.client import KafkaClient, Producer
from minibroker.client.consumer import EARLIEST, LATEST, READ_UNCOMMITTED, fetch_range, list_offsets
from minibroker.protocol.messages import CreateTopicsRequest

Record = tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]


async def _create(bootstrap: str, topic: str, partitions: int) -> None:
    client = KafkaClient(bootstrap)
    await client.start()
    try:
        response = await client.request(next(iter(client.nodes)), CreateTopicsRequest(topics=[
            CreateTopicsRequest.CreatableTopic(name=topic, num_partitions=partitions, replication_factor=1,
                                               assignments=[], configs=[])], timeout_ms=10_000,
            validate_only=False), 5)
        assert response.topics[0].error_code == 0, response
    finally:
        await client.close()


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    asyncio.run(_create(bootstrap, topic, partitions))


async def _produce(bootstrap: str, topic: str, by_partition: dict[int, list[Record]]) -> None:
    async with Producer(bootstrap, linger_ms=1) as producer:
        futures = []
        for partition, items in by_partition.items():
            for key, value, headers in items:
                futures.append(await producer.send(topic, value, key=key, partition=partition, headers=headers))
        await producer.flush()
        for future in futures:
            future.result()


def produce(bootstrap: str, topic: str, by_partition: dict[int, list[Record]]) -> None:
    """Write records to chosen partitions, in order, and wait for every acknowledgement."""
    asyncio.run(_produce(bootstrap, topic, by_partition))


async def _read_all(bootstrap: str, topic: str, isolation_level: int) -> list[dict[str, Any]]:
    client = KafkaClient(bootstrap)
    await client.start()
    try:
        await client.refresh_metadata([topic], allow_auto_topic_creation=False)
        partitions = [(topic, p.partition) for p in client.topics[topic].partitions]
        starts = await list_offsets(client, partitions, EARLIEST)
        ends = await list_offsets(client, partitions, LATEST, isolation_level)
        rows = []
        for _, partition in partitions:
            async for columns in fetch_range(client, topic, partition, starts[(topic, partition)],
                                             ends[(topic, partition)], isolation_level=isolation_level):
                assert columns.headers is not None
                for index in range(len(columns)):
                    rows.append({"partition": partition, "offset": columns.offsets[index],
                                 "key": columns.keys[index], "value": columns.values[index],
                                 "headers": columns.headers[index]})
        return rows
    finally:
        await client.close()


def read_all(bootstrap: str, topic: str, isolation_level: int = READ_UNCOMMITTED) -> list[dict[str, Any]]:
    """Every record of `topic` read with the project's client (not Spark), partition by partition."""
    return asyncio.run(_read_all(bootstrap, topic, isolation_level))


async def _offsets(bootstrap: str, topic: str, isolation_level: int) -> dict[int, int]:
    client = KafkaClient(bootstrap)
    await client.start()
    try:
        await client.refresh_metadata([topic], allow_auto_topic_creation=False)
        partitions = [(topic, p.partition) for p in client.topics[topic].partitions]
        return {p: o for (_, p), o in (await list_offsets(client, partitions, LATEST, isolation_level)).items()}
    finally:
        await client.close()


def latest_offsets(bootstrap: str, topic: str, isolation_level: int = READ_UNCOMMITTED) -> dict[int, int]:
    """The latest offset of each partition (the LSO under read_committed)."""
    return asyncio.run(_offsets(bootstrap, topic, isolation_level))


def kafka_source(builder: Any, broker: Any, topic: str, **options: str) -> Any:
    """`spark.read` or `spark.readStream` (the `builder`) loaded from the project's Kafka source, subscribed to
    `topic` on `broker`, with `options`."""
    from minibroker.spark.source import FORMAT  # here: the client helpers above work without pyspark

    frame = builder.format(FORMAT).option("kafka.bootstrap.servers", broker.bootstrap_servers) \
        .option("subscribe", topic)
    for key, value in options.items():
        frame = frame.option(key, value)
    return frame.load()
