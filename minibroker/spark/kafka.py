"""What the readers and writers share: a private event loop, partition discovery, offset resolution, range reads.

Spark calls the data source from plain (synchronous) Python workers. Each
worker runs the project's asyncio client on an event loop of its own,
created where it is used and never pickled.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from typing import TypeVar

import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from ..client import KafkaClient
from ..client.consumer import EARLIEST, LATEST, RecordColumns, fetch_range, list_offsets
from ..client.security import ClientSecurity
from .arrow import to_record_batch
from .options import OffsetJson, OptionError, SourceOptions, TopicPartition

T = TypeVar("T")


def new_event_loop() -> asyncio.AbstractEventLoop:
    try:
        import uvloop

        return uvloop.new_event_loop()
    except ImportError:  # pragma: no cover - uvloop is a dependency of minibroker
        return asyncio.new_event_loop()


class SyncClient:
    """A KafkaClient on a private event loop, driven from synchronous code."""

    def __init__(self, bootstrap_servers: str, client_id: str = "minibroker-spark",
                 security: ClientSecurity | None = None) -> None:
        self.loop = new_event_loop()
        self.client = KafkaClient(bootstrap_servers, client_id, security)
        try:
            self.run(self.client.start())
        except BaseException:
            self.close()
            raise

    def run(self, awaitable: Awaitable[T]) -> T:
        return self.loop.run_until_complete(awaitable)

    def call(self, function: Callable[[KafkaClient], Awaitable[T]]) -> T:
        return self.run(function(self.client))

    def close(self) -> None:
        try:
            self.run(self.client.close())
        finally:
            self.loop.close()


class KafkaInputPartition(InputPartition):
    """One Spark input partition: the offsets [start, end) of one Kafka partition."""

    def __init__(self, topic: str, partition: int, start: int, end: int) -> None:
        super().__init__((topic, partition, start, end))
        self.topic = topic
        self.partition = partition
        self.start = start
        self.end = end


async def discover_partitions(client: KafkaClient, options: SourceOptions) -> list[TopicPartition]:
    """The Kafka partitions that `subscribe`, `subscribePattern` or `assign` name, as the cluster has them now."""
    if options.assign is not None:
        await client.refresh_metadata(sorted(options.assign), allow_auto_topic_creation=False)
        missing = [(t, p) for t, parts in options.assign.items() for p in parts
                   if t not in client.topics or p >= len(client.topics[t].partitions)]
        if missing:
            raise OptionError(f"assign names partitions the cluster does not have: {missing}")
        return [(t, p) for t, parts in sorted(options.assign.items()) for p in parts]
    if options.subscribe is not None:
        client.topics.clear()
        await client.refresh_metadata(list(options.subscribe), allow_auto_topic_creation=False)
        topics = [t for t in options.subscribe if t in client.topics]
    else:
        client.topics.clear()
        await client.refresh_metadata(None, allow_auto_topic_creation=False)
        pattern = re.compile(options.subscribe_pattern or "")
        topics = sorted(t for t in client.topics if pattern.fullmatch(t))
    return [(t, p.partition) for t in sorted(set(topics)) for p in client.topics[t].partitions]


async def resolve_offsets(client: KafkaClient, partitions: list[TopicPartition], spec: str | OffsetJson,
                          isolation_level: int, option: str) -> dict[TopicPartition, int]:
    """Concrete offsets for `spec` (earliest, latest, or JSON with -2/-1) of each partition."""
    if not partitions:
        return {}
    if isinstance(spec, str):
        return await list_offsets(client, partitions, EARLIEST if spec == "earliest" else LATEST, isolation_level)
    wanted: dict[TopicPartition, int] = {}
    for topic, parts in spec.items():
        for partition, offset in parts.items():
            wanted[(topic, int(partition))] = offset
    missing = [tp for tp in partitions if tp not in wanted]
    if missing:
        raise OptionError(f"{option} must give an offset for every partition; missing: "
                          + ", ".join(f"{t}-{p}" for t, p in missing))
    out = {tp: wanted[tp] for tp in partitions if wanted[tp] >= 0}
    for special in (EARLIEST, LATEST):
        chosen = [tp for tp in partitions if wanted[tp] == special]
        if chosen:
            out.update(await list_offsets(client, chosen, special, isolation_level))
    return out


def plan_ranges(starts: dict[TopicPartition, int], ends: dict[TopicPartition, int],
                min_partitions: int | None) -> list[KafkaInputPartition]:
    """One input partition per Kafka partition with records to read, split further to reach `minPartitions`."""
    ranges = [(tp, starts[tp], ends[tp]) for tp in sorted(ends) if tp in starts and ends[tp] > starts[tp]]
    total = sum(end - start for _, start, end in ranges)
    out = []
    for (topic, partition), start, end in ranges:
        size = end - start
        # as Spark's Kafka source: pieces in proportion to each partition's share of the records
        pieces = 1 if not min_partitions or min_partitions <= len(ranges) else \
            max(round(size / total * min_partitions), 1)
        for index in range(pieces):
            low = start + size * index // pieces
            high = start + size * (index + 1) // pieces
            if high > low:
                out.append(KafkaInputPartition(topic, partition, low, high))
    return out


def read_range(options: SourceOptions, part: KafkaInputPartition, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """The records of one input partition as Arrow batches."""
    sync = SyncClient(options.bootstrap_servers, security=options.security)
    records: AsyncGenerator[RecordColumns, None] = fetch_range(
        sync.client, part.topic, part.partition, part.start, part.end, isolation_level=options.isolation_level,
        include_headers="headers" in schema.names, max_bytes=options.fetch_max_bytes,
        max_records=options.max_records_per_batch, fail_on_data_loss=options.fail_on_data_loss,
        poll_timeout_ms=options.poll_timeout_ms)
    try:
        while True:
            try:
                columns = sync.run(records.__anext__())
            except StopAsyncIteration:
                break
            yield to_record_batch(columns, part.topic, part.partition, schema)
    finally:
        sync.run(records.aclose())
        sync.close()

