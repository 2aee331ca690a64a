"""Batch and streaming writes: one producer per Spark task; by default one Kafka transaction per task.

Exactly-once: task `i` of a write uses transactional.id `<prefix>-<i>`, sends
its rows inside a transaction and leaves it open, handing (transactional id,
producer id, epoch) to the driver in its commit message. Only when every task
has succeeded does the driver commit the transactions (EndTxn); when the job
fails it aborts them. A retried task attempt calls InitProducerId with the
same transactional id, which fences the failed attempt and aborts whatever it
had written, so read_committed consumers see each row once. With
`transactional=false` the writer uses the plain idempotent producer: a
retried task writes its rows again (at-least-once).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import ArrayType, BinaryType, IntegerType, LongType, StringType, StructType

from ..client import Producer
from ..client.transactions import TransactionHandle, end_transaction, init_producer_id, ongoing_transactions
from .kafka import SyncClient, new_event_loop
from .options import OptionError, SinkOptions

Header = tuple[str, bytes | None]
ABORT_TIMEOUT_S = 10.0  # a failing task's own abort
# the driver's abort ends once no transaction of the job was seen open for this long: on a busy machine a late
# task attempt (its Python worker starting) opened one more than 3 s after the last was fenced
ABORT_QUIET_S = 10.0
ABORT_POLL_S = 0.25


@dataclass
class KafkaCommitMessage(WriterCommitMessage):
    """What one task wrote, and the transaction the driver must end (None when it wrote nothing)."""

    partition_id: int
    attempt: int
    records: int
    transaction: TransactionHandle | None


def check_schema(schema: StructType, options: SinkOptions) -> None:
    """Refuse a DataFrame the Kafka sink cannot write, with Spark's rules for its columns."""
    types = {field.name: field.dataType for field in schema.fields}
    if "value" not in types:
        raise OptionError("Required attribute 'value' not found")
    for name in ("key", "value"):
        if name in types and not isinstance(types[name], (BinaryType, StringType)):
            raise OptionError(f"{name} attribute type must be a string or binary, not {types[name].simpleString()}")
    if options.topic is None and "topic" not in types:
        raise OptionError("topic option required when no 'topic' attribute is present")
    if "topic" in types and not isinstance(types["topic"], StringType):
        raise OptionError("Topic type must be a string")
    if "partition" in types and not isinstance(types["partition"], (IntegerType, LongType)):
        raise OptionError("partition attribute type must be an int")
    if "headers" in types:
        headers = types["headers"]
        if not (isinstance(headers, ArrayType) and isinstance(headers.elementType, StructType)
                and [f.name for f in headers.elementType.fields] == ["key", "value"]):
            raise OptionError("headers attribute type must be array<struct<key:string,value:binary>>")


def _as_bytes(values: list[Any]) -> list[bytes | None]:
    return [v.encode() if isinstance(v, str) else v for v in values]


class _TaskWriter:
    """Writes one task's Arrow batches through one producer on a private event loop."""

    def __init__(self, options: SinkOptions, transactional_id: str | None) -> None:
        self.options = options
        self.loop = new_event_loop()
        self.producer = Producer(
            options.bootstrap_servers, linger_ms=options.linger_ms, batch_size=options.batch_size,
            compression=options.compression, max_in_flight_requests_per_connection=options.max_in_flight,
            transactional_id=transactional_id, transaction_timeout_ms=options.transaction_timeout_ms,
            client_id=f"minibroker-spark-{transactional_id or 'writer'}", security=options.security)
        self.records = 0

    def run(self, awaitable: Any) -> Any:
        return self.loop.run_until_complete(awaitable)

    async def write_batch(self, batch: pa.RecordBatch) -> None:
        names = batch.schema.names
        count = batch.num_rows
        values = _as_bytes(batch.column("value").to_pylist())
        keys = _as_bytes(batch.column("key").to_pylist()) if "key" in names else [None] * count
        if self.options.topic is not None:
            topics = [self.options.topic] * count
        else:
            topics = batch.column("topic").to_pylist()
        partitions = batch.column("partition").to_pylist() if "partition" in names else [None] * count
        headers = batch.column("headers").to_pylist() if "headers" in names else [None] * count
        futures = []
        for key, value, topic, partition, record_headers in zip(keys, values, topics, partitions, headers,
                                                               strict=True):
            if topic is None:
                raise OptionError("Null topic present in the data. Use the topic option for setting a topic.")
            # no partition column value: the producer picks one as Kafka's does (murmur2 of the key, else sticky)
            pairs: list[Header] = [(h["key"], h["value"]) for h in record_headers or ()]
            futures.append(await self.producer.send(topic, value, key=key, partition=partition, headers=pairs))
        # one round trip per Arrow batch: bounded memory, and an error surfaces in the task that caused it
        await self.producer.flush()
        for future in futures:
            if future.exception() is not None:
                raise future.exception()  # type: ignore[misc]
        self.records += count

    def write_all(self, batches: Iterator[pa.RecordBatch]) -> TransactionHandle | None:
        """Send every batch; the open transaction's handle (None when not transactional or nothing sent)."""
        transactional = self.producer.transactional_id is not None
        try:
            self.run(self.producer.start())
            if transactional:
                self.producer.begin_transaction()
            for batch in batches:
                if batch.num_rows:
                    self.run(self.write_batch(batch))
            if not transactional or not self.records:
                return None
            self.run(self.producer.flush_transaction())
            return self.producer.transaction_handle()
        except BaseException:
            if transactional and self.producer.producer_id >= 0:
                # the task fails (its input failed, or Kafka refused): abort now rather than leave the
                # transaction open, holding back read_committed readers, until a retry or the driver fences it
                with contextlib.suppress(Exception):
                    self.run(asyncio.wait_for(self.producer.abort_transaction(), ABORT_TIMEOUT_S))
            raise
        finally:
            # close() flushes but never ends the transaction: the driver commits or aborts it
            self.run(self.producer.close())
            self.loop.close()


class _KafkaWriterBase:
    """What batch and streaming writers share: schema checks, per-task transactions, ending them on the driver."""

    def __init__(self, raw_options: Any, schema: StructType) -> None:
        self.options = SinkOptions.parse(raw_options)
        check_schema(schema, self.options)
        # one prefix per write (or per streaming query run), the same in every task attempt and on the driver
        self.prefix = self.options.transactional_id_prefix or f"minibroker-spark-{uuid.uuid4().hex[:16]}"

    def transactional_id(self, partition_id: int) -> str:
        return f"{self.prefix}-{partition_id}"

    def write_task(self, batches: Iterator[pa.RecordBatch]) -> KafkaCommitMessage:
        from pyspark import TaskContext

        context = TaskContext.get()
        partition_id = context.partitionId() if context is not None else 0
        attempt = context.attemptNumber() if context is not None else 0
        transactional_id = self.transactional_id(partition_id) if self.options.transactional else None
        writer = _TaskWriter(self.options, transactional_id)
        handle = writer.write_all(batches)
        return KafkaCommitMessage(partition_id, attempt, writer.records, handle)

    def commit_all(self, messages: list[KafkaCommitMessage | None]) -> None:
        handles = [m.transaction for m in messages if m is not None and m.transaction is not None]
        if not handles:
            return
        sync = SyncClient(self.options.bootstrap_servers, security=self.options.security)
        try:
            for index, handle in enumerate(handles):
                try:
                    sync.run(end_transaction(sync.client, handle, commit=True))
                except Exception as exc:
                    for rest in handles[index + 1:]:
                        _quietly(sync, end_transaction(sync.client, rest, commit=False))
                    raise RuntimeError(
                        f"committing the Kafka transaction of {handle.transactional_id} failed after {index} of "
                        f"{len(handles)} task transactions were committed; the remaining ones were aborted") from exc
        finally:
            sync.close()

    def abort_all(self, messages: list[KafkaCommitMessage | None]) -> None:
        """Abort every task's transaction, including those of attempts still running or starting.

        Spark calls abort as soon as one task has failed for good, while other
        tasks (and late attempts) may still be running and open transactions
        after this point. So besides ending what the commit messages name,
        the driver watches the job's transactional ids for a grace period and
        fences any that has a transaction in progress, until none has for a
        while: no transaction of the job stays open to hold back read_committed
        readers until Kafka's transaction timeout.
        """
        if not self.options.transactional:
            return
        ids = [self.transactional_id(index) for index in range(len(messages))]
        sync = SyncClient(self.options.bootstrap_servers, security=self.options.security)
        try:
            for message in messages:
                if message is not None and message.transaction is not None:
                    _quietly(sync, end_transaction(sync.client, message.transaction, commit=False))
            deadline = time.monotonic() + self.options.abort_grace_ms / 1000
            quiet_since = time.monotonic()
            while time.monotonic() < deadline and time.monotonic() - quiet_since < ABORT_QUIET_S:
                try:
                    ongoing = sync.run(ongoing_transactions(sync.client, ids))
                except Exception:  # noqa: BLE001 - a broker without DescribeTransactions: fence them all once
                    ongoing, deadline = ids, 0.0
                for transactional_id in ongoing:
                    # InitProducerId bumps the epoch: the open transaction is aborted, its writer fenced
                    _quietly(sync, init_producer_id(sync.client, transactional_id,
                                                    self.options.transaction_timeout_ms))
                if ongoing:
                    quiet_since = time.monotonic()
                time.sleep(ABORT_POLL_S)
        finally:
            sync.close()


def _quietly(sync: SyncClient, awaitable: Any) -> None:
    """Best effort, for cleaning up after a failure that is already being reported."""
    try:
        sync.run(awaitable)
    except Exception:  # noqa: BLE001 - the original failure is the one to report
        pass


class KafkaBatchWriter(_KafkaWriterBase, DataSourceArrowWriter):
    """`df.write.format(...).save()`: one transaction per task, committed by the driver when all succeeded."""

    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaCommitMessage:  # type: ignore[override]
        return self.write_task(iterator)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:  # type: ignore[override]
        self.commit_all(messages)  # type: ignore[arg-type]

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:  # type: ignore[override]
        self.abort_all(messages)  # type: ignore[arg-type]


class KafkaStreamWriter(_KafkaWriterBase, DataSourceStreamArrowWriter):
    """`df.writeStream.format(...)`: each micro-batch is written as one transaction per task."""

    def write(self, iterator: Iterator[pa.RecordBatch]) -> KafkaCommitMessage:  # type: ignore[override]
        return self.write_task(iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # type: ignore[override]
        self.commit_all(messages)  # type: ignore[arg-type]

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:  # type: ignore[override]
        self.abort_all(messages)  # type: ignore[arg-type]


__all__ = ["KafkaBatchWriter", "KafkaCommitMessage", "KafkaStreamWriter"]
