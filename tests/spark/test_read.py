"""Batch reads through the data source: rows, offsets options, input partitions, isolation levels."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from minibroker.client import Producer
from minibroker.spark.source import FORMAT
from tests.helpers import unique_topic
from tests.spark.helpers import create_topic, kafka_source, produce


@pytest.fixture(scope="module")
def known_topic(broker):
    """Two partitions: 0 holds k0..k5 with headers, 1 holds three records with a null key and a null value."""
    topic = unique_topic("spark-known")
    create_topic(broker.bootstrap_servers, topic, partitions=2)
    produce(broker.bootstrap_servers, topic, {
        0: [(f"k{i}".encode(), f"value-{i}".encode(), [("n", str(i).encode()), ("empty", None)]) for i in range(6)],
        1: [(None, b"a", []), (b"b", None, []), (b"c", b"c", [])],
    })
    return topic


def test_batch_read_returns_every_record_with_spark_kafka_columns(spark, broker, known_topic):
    started_ms = int(time.time() * 1000) - 60_000
    frame = kafka_source(spark.read, broker, known_topic, includeHeaders="true")
    assert frame.columns == ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"]
    rows = sorted(frame.collect(), key=lambda r: (r.partition, r.offset))
    assert [(r.partition, r.offset) for r in rows] == [(0, i) for i in range(6)] + [(1, 0), (1, 1), (1, 2)]
    assert [(r.key, r.value) for r in rows[:6]] == [(f"k{i}".encode(), f"value-{i}".encode()) for i in range(6)]
    assert [(r.key, r.value) for r in rows[6:]] == [(None, b"a"), (b"b", None), (b"c", b"c")]
    assert [[(h.key, h.value) for h in r.headers] for r in rows[:2]] == [
        [("n", b"0"), ("empty", None)], [("n", b"1"), ("empty", None)]]
    assert rows[6].headers == []
    assert {r.topic for r in rows} == {known_topic}
    assert {r.timestampType for r in rows} == {0}  # CreateTime
    assert all(r.timestamp.timestamp() * 1000 >= started_ms for r in rows)


def test_without_include_headers_there_is_no_headers_column(spark, broker, known_topic):
    frame = kafka_source(spark.read, broker, known_topic)
    assert "headers" not in frame.columns
    assert frame.count() == 9


def test_one_input_partition_per_kafka_partition_and_min_partitions_splits_ranges(spark, broker, known_topic):
    assert kafka_source(spark.read, broker, known_topic).rdd.getNumPartitions() == 2
    split = kafka_source(spark.read, broker, known_topic, minPartitions="5")
    assert split.rdd.getNumPartitions() >= 5
    whole = kafka_source(spark.read, broker, known_topic).select("partition", "offset").collect()
    assert sorted((r.partition, r.offset) for r in split.select("partition", "offset").collect()) == \
        sorted((r.partition, r.offset) for r in whole)


def test_starting_and_ending_offsets_json_select_a_range(spark, broker, known_topic):
    frame = kafka_source(spark.read, broker, known_topic,
                         startingOffsets=json.dumps({known_topic: {"0": 2, "1": -2}}),
                         endingOffsets=json.dumps({known_topic: {"0": 4, "1": -1}}))
    assert sorted((r.partition, r.offset) for r in frame.collect()) == [(0, 2), (0, 3), (1, 0), (1, 1), (1, 2)]


def test_offsets_json_must_name_every_partition(spark, broker, known_topic):
    with pytest.raises(Exception, match="missing"):
        kafka_source(spark.read, broker, known_topic, startingOffsets=json.dumps({known_topic: {"0": 0}})).collect()


def test_batch_refuses_latest_as_starting_offsets(spark, broker, known_topic):
    with pytest.raises(Exception, match="startingOffsets latest"):
        kafka_source(spark.read, broker, known_topic, startingOffsets="latest").collect()


def test_subscribe_pattern_and_assign(spark, broker, known_topic):
    by_pattern = spark.read.format(FORMAT).option("kafka.bootstrap.servers", broker.bootstrap_servers) \
        .option("subscribePattern", known_topic.replace("-", ".")).load()
    assert by_pattern.count() == 9
    assigned = spark.read.format(FORMAT).option("kafka.bootstrap.servers", broker.bootstrap_servers) \
        .option("assign", json.dumps({known_topic: [1]})).load()
    rows = assigned.collect()
    assert sorted(r.offset for r in rows) == [0, 1, 2] and {r.partition for r in rows} == {1}


def test_empty_topic_reads_no_rows(spark, broker):
    topic = unique_topic("spark-empty")
    create_topic(broker.bootstrap_servers, topic, partitions=3)
    assert kafka_source(spark.read, broker, topic).count() == 0


async def _transactions(bootstrap: str, topic: str) -> None:
    """Committed c0..c2, aborted a0..a2, committed c3 (partition 0), with control records between them."""
    producer = Producer(bootstrap, transactional_id=unique_topic("spark-txn"), linger_ms=1)
    await producer.start()
    try:
        for values, commit in (([b"c0", b"c1", b"c2"], True), ([b"a0", b"a1", b"a2"], False), ([b"c3"], True)):
            producer.begin_transaction()
            for value in values:
                await producer.send(topic, value, partition=0)
            if commit:
                await producer.commit_transaction()
            else:
                await producer.abort_transaction()
    finally:
        await producer.close()


def test_isolation_level_read_committed_drops_aborted_records_and_markers(spark, broker):
    topic = unique_topic("spark-txn")
    create_topic(broker.bootstrap_servers, topic)
    asyncio.run(_transactions(broker.bootstrap_servers, topic))
    committed = kafka_source(spark.read, broker, topic, **{"kafka.isolation.level": "read_committed"})
    assert sorted(r.value for r in committed.collect()) == [b"c0", b"c1", b"c2", b"c3"]
    uncommitted = kafka_source(spark.read, broker, topic)
    # control records (markers) are never rows; aborted data is visible to read_uncommitted
    assert sorted(r.value for r in uncommitted.collect()) == [b"a0", b"a1", b"a2", b"c0", b"c1", b"c2", b"c3"]
