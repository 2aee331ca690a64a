"""The Kafka data source: batch and streaming reads, batch and streaming writes."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
    InputPartition,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from ..client.consumer import EARLIEST, list_offsets
from .arrow import arrow_schema, kafka_schema
from .kafka import KafkaInputPartition, SyncClient, discover_partitions, plan_ranges, read_range, resolve_offsets
from .options import (
    OffsetJson,
    OptionError,
    SourceOptions,
    TopicPartition,
    include_headers,
    offsets_from_json,
    offsets_to_json,
)

FORMAT = "kafka-wire"


class KafkaBatchReader(DataSourceReader):
    """Batch read: offsets resolved once at planning, one input partition per Kafka partition and range."""

    def __init__(self, options: SourceOptions, schema: StructType) -> None:
        self.options = options
        self.schema = schema

    def partitions(self) -> Sequence[InputPartition]:
        sync = SyncClient(self.options.bootstrap_servers, security=self.options.security)
        try:
            partitions = sync.call(lambda c: discover_partitions(c, self.options))
            starts = sync.call(lambda c: resolve_offsets(c, partitions, self.options.starting_offsets,
                                                         self.options.isolation_level, "startingOffsets"))
            ends = sync.call(lambda c: resolve_offsets(c, partitions, self.options.ending_offsets,
                                                       self.options.isolation_level, "endingOffsets"))
        finally:
            sync.close()
        return plan_ranges(starts, ends, self.options.min_partitions)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        if not isinstance(partition, KafkaInputPartition):
            return iter(())  # Spark plans one empty partition when there is nothing to read
        return read_range(self.options, partition, arrow_schema(self.schema))


class KafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Streaming read: offsets are Spark's per-partition JSON, kept in the query's checkpoint.

    Spark asks for the latest offsets (capped by maxOffsetsPerTrigger, and by
    the offsets seen when an availableNow query started), records the range
    of each micro-batch in its offset log before reading it, and restarts a
    stopped query from the last range it committed.
    """

    def __init__(self, options: SourceOptions, schema: StructType) -> None:
        self.options = options
        self.schema = schema
        self._target: dict[TopicPartition, int] | None = None
        self._latest: OffsetJson | None = None
        self._sync: SyncClient | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_sync"] = None  # the event loop and connections stay in the process that made them
        return state

    def _client(self) -> SyncClient:
        if self._sync is None:
            self._sync = SyncClient(self.options.bootstrap_servers, security=self.options.security)
        return self._sync

    def _latest_offsets(self) -> dict[TopicPartition, int]:
        sync = self._client()
        partitions = sync.call(lambda c: discover_partitions(c, self.options))
        return sync.call(lambda c: resolve_offsets(c, partitions, "latest", self.options.isolation_level,
                                                   "latest"))

    def initialOffset(self) -> dict:
        sync = self._client()
        partitions = sync.call(lambda c: discover_partitions(c, self.options))
        starts = sync.call(lambda c: resolve_offsets(c, partitions, self.options.starting_offsets,
                                                     self.options.isolation_level, "startingOffsets"))
        return offsets_to_json(starts)

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self._latest_offsets()

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_offsets_per_trigger:
            return ReadMaxRows(self.options.max_offsets_per_trigger)
        return ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        begin = offsets_from_json(start)
        latest = self._latest_offsets()
        if self._target is not None:  # availableNow: nothing written after the query started
            latest = {tp: min(offset, self._target[tp]) for tp, offset in latest.items() if tp in self._target}
        new = [tp for tp in latest if tp not in begin]
        if new:  # partitions that appeared since: read from their beginning, as Spark does
            begin.update(self._client().call(lambda c: list_offsets(c, new, EARLIEST, self.options.isolation_level)))
        end = {tp: max(offset, latest.get(tp, offset)) for tp, offset in begin.items()}
        if isinstance(limit, ReadMaxRows):
            end = _rate_limit(begin, end, limit.max_rows)
        self._latest = offsets_to_json(latest)
        return offsets_to_json(end)

    def reportLatestOffset(self) -> dict | None:
        return self._latest

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        begin = offsets_from_json(start)
        finish = offsets_from_json(end)
        new = [tp for tp in finish if tp not in begin]
        if new:
            begin.update(self._client().call(lambda c: list_offsets(c, new, EARLIEST, self.options.isolation_level)))
        return plan_ranges(begin, finish, self.options.min_partitions)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]
        assert isinstance(partition, KafkaInputPartition)
        return read_range(self.options, partition, arrow_schema(self.schema))

    def commit(self, end: dict) -> None:
        """Nothing to do: the offsets live in Spark's checkpoint, not in Kafka (as with Spark's source)."""

    def stop(self) -> None:
        if self._sync is not None:
            self._sync.close()
            self._sync = None


def _rate_limit(begin: dict[TopicPartition, int], end: dict[TopicPartition, int],
                max_rows: int) -> dict[TopicPartition, int]:
    """At most about `max_rows` records, shared in proportion to what each partition has (Spark's rule)."""
    sizes = {tp: end[tp] - begin[tp] for tp in end}
    total = sum(sizes.values())
    if total <= max_rows:
        return end
    limited = {}
    for tp, size in sizes.items():
        share = max_rows * size / total
        # a partition with a share under one record still advances by one, so none starves
        step = min(size, int(share) if share >= 1 else (1 if size else 0))
        limited[tp] = begin[tp] + step
    return limited


class KafkaDataSource(DataSource):
    """Reads and writes Kafka topics on any Kafka-protocol broker, with Spark's Kafka options and schema.

    Register it once per session, then use its format name::

        spark.dataSource.register(KafkaDataSource)
        spark.read.format("kafka-wire").option("kafka.bootstrap.servers", "host:9092")
            .option("subscribe", "events").load()
    """

    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        return kafka_schema(include_headers(self.options))

    def reader(self, schema: StructType) -> DataSourceReader:
        return KafkaBatchReader(SourceOptions.parse(self.options, streaming=False), schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return KafkaStreamReader(SourceOptions.parse(self.options, streaming=True), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        from .sink import KafkaBatchWriter

        if overwrite:  # as Spark's Kafka sink: a topic is appended to, never replaced
            raise OptionError("Save mode Overwrite is not allowed for Kafka; use append")
        return KafkaBatchWriter(self.options, schema)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        from .sink import KafkaStreamWriter

        return KafkaStreamWriter(self.options, schema)


__all__ = ["FORMAT", "KafkaBatchReader", "KafkaDataSource", "KafkaStreamReader"]
