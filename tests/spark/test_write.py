"""Batch writes: columns to records, Kafka's key partitioning, and what a retried or failed task leaves behind."""

from __future__ import annotations

from collections import Counter

import pytest

from minibroker.client.consumer import READ_COMMITTED
from minibroker.client.partitioner import key_partition
from minibroker.spark.source import FORMAT
from tests.helpers import unique_topic
from tests.spark.helpers import create_topic, latest_offsets, read_all

ROWS = 2000


def writer(frame, broker, **options: str):
    out = frame.write.format(FORMAT).mode("append").option("kafka.bootstrap.servers", broker.bootstrap_servers)
    for key, value in options.items():
        out = out.option(key, value)
    return out


def test_write_then_read_back_with_topic_partition_and_headers_columns(spark, broker):
    first, second = unique_topic("spark-w1"), unique_topic("spark-w2")
    create_topic(broker.bootstrap_servers, first, partitions=3)
    create_topic(broker.bootstrap_servers, second, partitions=1)
    frame = spark.sql(f"""
        SELECT CAST(id AS STRING) AS key, CONCAT('v', id) AS value,
               IF(id % 2 = 0, '{first}', '{second}') AS topic,
               IF(id % 2 = 0, CAST(id % 3 AS INT), NULL) AS partition,
               ARRAY(NAMED_STRUCT('key', 'id', 'value', CAST(CAST(id AS STRING) AS BINARY))) AS headers
        FROM range(100)""")
    writer(frame, broker).save()
    written = read_all(broker.bootstrap_servers, first, READ_COMMITTED)
    assert sorted(r["value"] for r in written) == sorted(f"v{i}".encode() for i in range(0, 100, 2))
    for record in written:
        number = int(record["key"])
        assert record["partition"] == number % 3  # the partition column wins
        assert record["headers"] == [("id", str(number).encode())]
    assert sorted(int(r["key"]) for r in read_all(broker.bootstrap_servers, second, READ_COMMITTED)) == \
        list(range(1, 100, 2))
    # and the data source reads back what it wrote
    back = spark.read.format(FORMAT).option("kafka.bootstrap.servers", broker.bootstrap_servers) \
        .option("subscribe", f"{first},{second}").option("kafka.isolation.level", "read_committed").load()
    assert back.count() == 100


def test_topic_option_overrides_and_keys_pick_partitions_as_kafka_does(spark, broker):
    topic = unique_topic("spark-keys")
    create_topic(broker.bootstrap_servers, topic, partitions=4)
    frame = spark.sql("SELECT CONCAT('key-', id) AS key, CAST(CAST(id AS STRING) AS BINARY) AS value, "
                      "'ignored' AS topic FROM range(60)")
    writer(frame, broker, topic=topic).save()
    written = read_all(broker.bootstrap_servers, topic, READ_COMMITTED)
    assert len(written) == 60
    assert all(r["partition"] == key_partition(r["key"], 4) for r in written)
    assert len({r["partition"] for r in written}) > 1


def test_a_missing_value_column_is_refused(spark, broker):
    frame = spark.sql("SELECT CAST(id AS STRING) AS key FROM range(3)")
    with pytest.raises(Exception, match="Required attribute 'value' not found"):
        writer(frame, broker, topic=unique_topic("spark-bad")).save()


def number(record) -> int:
    return int(record["value"].split(b":")[0])


def _failing_first_attempt(always: bool = False):
    """A mapInArrow function that passes its rows on, then fails the task's first attempt (or every attempt)."""

    def fail(batches):
        from pyspark import TaskContext

        yield from batches
        if always or TaskContext.get().attemptNumber() == 0:
            raise RuntimeError("injected task failure")

    return fail


@pytest.fixture
def small_arrow_batches(spark):
    """Spark hands the writer rows in Arrow batches of 100 (default 10,000), so a task's first rows are
    sent before its failure rather than held back in a batch that never fills."""
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "100")
    yield
    spark.conf.unset("spark.sql.execution.arrow.maxRecordsPerBatch")


def _numbers(spark, fail):
    frame = spark.range(0, ROWS, numPartitions=2) \
        .selectExpr("CONCAT(CAST(id AS STRING), ':', REPEAT('x', 200)) AS value")
    return frame.mapInArrow(fail, frame.schema)


def test_exactly_once_a_retried_task_leaves_each_row_once_for_read_committed(spark, broker, small_arrow_batches):
    topic = unique_topic("spark-eos")
    create_topic(broker.bootstrap_servers, topic, partitions=2)
    writer(_numbers(spark, _failing_first_attempt()), broker, topic=topic).save()
    committed = Counter(number(r) for r in read_all(broker.bootstrap_servers, topic, READ_COMMITTED))
    assert committed == Counter(range(ROWS))  # each row exactly once
    everything = read_all(broker.bootstrap_servers, topic)
    # the failed first attempts did write: their records are there, aborted, for read_uncommitted
    assert len(everything) > ROWS
    servers = broker.bootstrap_servers
    assert latest_offsets(servers, topic, READ_COMMITTED) == latest_offsets(servers, topic)


def test_at_least_once_without_transactions_a_retried_task_writes_its_rows_again(spark, broker, small_arrow_batches):
    topic = unique_topic("spark-alo")
    create_topic(broker.bootstrap_servers, topic, partitions=2)
    writer(_numbers(spark, _failing_first_attempt()), broker, topic=topic, transactional="false").save()
    seen = Counter(number(r) for r in read_all(broker.bootstrap_servers, topic, READ_COMMITTED))
    assert set(seen) == set(range(ROWS))  # nothing lost
    assert sum(seen.values()) > ROWS  # the retried tasks' rows are there twice
    assert max(seen.values()) == 2


def test_a_failed_job_leaves_nothing_committed_and_no_transaction_open(spark, broker, small_arrow_batches):
    topic = unique_topic("spark-failed")
    create_topic(broker.bootstrap_servers, topic, partitions=2)
    with pytest.raises(Exception, match="injected task failure"):
        writer(_numbers(spark, _failing_first_attempt(always=True)), broker, topic=topic).save()
    assert read_all(broker.bootstrap_servers, topic, READ_COMMITTED) == []
    assert len(read_all(broker.bootstrap_servers, topic)) > 0  # the attempts wrote, and were aborted
    # the driver aborted what the last attempts left open: read_committed is not held back
    servers = broker.bootstrap_servers
    assert latest_offsets(servers, topic, READ_COMMITTED) == latest_offsets(servers, topic)


def test_overwrite_mode_is_refused_as_by_spark_kafka_sink(spark, broker):
    frame = spark.sql("SELECT 'v' AS value")
    with pytest.raises(Exception, match="Overwrite is not allowed"):
        frame.write.format(FORMAT).mode("overwrite").option("kafka.bootstrap.servers", broker.bootstrap_servers) \
            .option("topic", unique_topic("spark-overwrite")).save()
