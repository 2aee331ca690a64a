"""Streaming reads and writes: offsets in Spark's checkpoint, resuming, availableNow, maxOffsetsPerTrigger."""

from __future__ import annotations

from collections import Counter

from minibroker.client.consumer import READ_COMMITTED
from minibroker.spark.source import FORMAT
from tests.helpers import unique_topic
from tests.spark.helpers import create_topic, kafka_source, produce, read_all


def wave(name: str, count: int, partitions: int = 2) -> dict[int, list]:
    """`count` records named name-0, name-1, ..., spread over the partitions."""
    out: dict[int, list] = {p: [] for p in range(partitions)}
    for index in range(count):
        out[index % partitions].append((None, f"{name}-{index}".encode(), []))
    return out


def to_parquet(frame, path, checkpoint):
    return frame.selectExpr("CAST(value AS STRING) AS value", "partition", "offset").writeStream \
        .format("parquet").option("path", str(path)).option("checkpointLocation", str(checkpoint))


def test_stopped_query_resumes_from_its_checkpoint_without_loss_or_repeat(spark, broker, tmp_path):
    topic = unique_topic("spark-resume")
    create_topic(broker.bootstrap_servers, topic, partitions=2)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    produce(broker.bootstrap_servers, topic, wave("a", 40))

    def start():
        return to_parquet(kafka_source(spark.readStream, broker, topic, startingOffsets="earliest"), out, checkpoint) \
            .trigger(processingTime="200 milliseconds").start()

    query = start()
    query.processAllAvailable()
    produce(broker.bootstrap_servers, topic, wave("b", 30))
    query.processAllAvailable()
    query.stop()
    produce(broker.bootstrap_servers, topic, wave("c", 25))  # written while no query runs
    query = start()  # startingOffsets is ignored now: the checkpoint says where to go on
    query.processAllAvailable()
    produce(broker.bootstrap_servers, topic, wave("d", 5))
    query.processAllAvailable()
    query.stop()
    rows = spark.read.parquet(str(out)).collect()
    expected = [f"{name}-{i}" for name, count in (("a", 40), ("b", 30), ("c", 25), ("d", 5)) for i in range(count)]
    assert Counter(r.value for r in rows) == Counter(expected)  # every record, once
    assert len({(r.partition, r.offset) for r in rows}) == 100


def test_available_now_reads_what_is_there_and_a_rerun_only_what_is_new(spark, broker, tmp_path):
    topic = unique_topic("spark-now")
    create_topic(broker.bootstrap_servers, topic, partitions=2)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    produce(broker.bootstrap_servers, topic, wave("first", 50))
    frame = kafka_source(spark.readStream, broker, topic, startingOffsets="earliest")
    to_parquet(frame, out, checkpoint).trigger(availableNow=True).start().awaitTermination(120)
    assert sorted(r.value for r in spark.read.parquet(str(out)).collect()) == sorted(f"first-{i}" for i in range(50))
    produce(broker.bootstrap_servers, topic, wave("second", 20))
    to_parquet(frame, out, checkpoint).trigger(availableNow=True).start().awaitTermination(120)
    values = Counter(r.value for r in spark.read.parquet(str(out)).collect())
    assert values == Counter([f"first-{i}" for i in range(50)] + [f"second-{i}" for i in range(20)])


def test_max_offsets_per_trigger_splits_available_now_into_micro_batches(spark, broker, tmp_path):
    topic = unique_topic("spark-rate")
    create_topic(broker.bootstrap_servers, topic, partitions=2)
    produce(broker.bootstrap_servers, topic, wave("r", 100))
    sizes: list[int] = []
    seen: list[tuple[int, int]] = []

    def collect(batch, batch_id):
        rows = batch.select("partition", "offset").collect()
        sizes.append(len(rows))
        seen.extend((r.partition, r.offset) for r in rows)

    frame = kafka_source(spark.readStream, broker, topic, startingOffsets="earliest", maxOffsetsPerTrigger="30")
    frame.writeStream.foreachBatch(collect).option("checkpointLocation", str(tmp_path / "checkpoint")) \
        .trigger(availableNow=True).start().awaitTermination(120)
    assert sum(sizes) == 100 and len(set(seen)) == 100
    assert max(sizes) <= 30 and len([s for s in sizes if s]) >= 4


def test_latest_is_the_default_start_of_a_new_query(spark, broker, tmp_path):
    topic = unique_topic("spark-latest")
    create_topic(broker.bootstrap_servers, topic, partitions=2)
    produce(broker.bootstrap_servers, topic, wave("old", 10))
    out = tmp_path / "out"
    query = to_parquet(kafka_source(spark.readStream, broker, topic), out, tmp_path / "checkpoint") \
        .trigger(processingTime="200 milliseconds").start()
    query.processAllAvailable()
    produce(broker.bootstrap_servers, topic, wave("new", 6))
    query.processAllAvailable()
    query.stop()
    assert sorted(r.value for r in spark.read.parquet(str(out)).collect()) == sorted(f"new-{i}" for i in range(6))


def test_stream_write_copies_a_topic_exactly_once(spark, broker, tmp_path):
    source, target = unique_topic("spark-copy-in"), unique_topic("spark-copy-out")
    create_topic(broker.bootstrap_servers, source, partitions=2)
    create_topic(broker.bootstrap_servers, target, partitions=3)
    produce(broker.bootstrap_servers, source, wave("copy", 60))
    kafka_source(spark.readStream, broker, source, startingOffsets="earliest", maxOffsetsPerTrigger="25") \
        .selectExpr("key", "value").writeStream.format(FORMAT) \
        .option("kafka.bootstrap.servers", broker.bootstrap_servers).option("topic", target) \
        .option("checkpointLocation", str(tmp_path / "checkpoint")) \
        .trigger(availableNow=True).start().awaitTermination(120)
    copied = Counter(r["value"].decode() for r in read_all(broker.bootstrap_servers, target, READ_COMMITTED))
    assert copied == Counter(f"copy-{i}" for i in range(60))
