"""Spark batch read of a Kafka topic through minibroker.spark, beside a plain read with the project's client.

Usage: .venv/bin/python bench/spark_read.py [--records N] [--partitions N] [--rounds N] [--master local[2]]
Writes bench/results/spark_read.json (--output to change).

The topic (100-byte values, null keys, no headers) is written once to a fresh
broker process. Each round times, alternately:

- plain: `fetch_range` over every partition in one asyncio process, summing the
  value lengths (the records are decoded into columns, as the data source does);
- Spark: `spark.read.format("kafka-wire")...load().agg(count(*), sum(length(value)))`
  on a SparkSession already warmed up by one untimed read.

Both must see every record and the same total of value bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from minibroker.client import KafkaClient  # noqa: E402
from minibroker.client.consumer import EARLIEST, LATEST, fetch_range, list_offsets  # noqa: E402
from minibroker.protocol import records  # noqa: E402
from minibroker.protocol.messages import CreateTopicsRequest, ProduceRequest  # noqa: E402
from minibroker.testing.process import start_broker  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "spark_read.json"
TOPIC = "spark-read-bench"
VALUE_SIZE = 100
BATCH_RECORDS = 2000  # records per produced batch


def log(message: str) -> None:
    print(f"[spark_read] {message}", file=sys.stderr, flush=True)


async def create_and_fill(bootstrap: str, count: int, partitions: int) -> None:
    """Create the topic and write `count` records, spread evenly, with raw Produce requests of big batches."""
    client = KafkaClient(bootstrap)
    await client.start()
    node = next(iter(client.nodes))
    await client.request(node, CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
        name=TOPIC, num_partitions=partitions, replication_factor=1, assignments=[], configs=[])],
        timeout_ms=10_000, validate_only=False), 5)
    await client.refresh_metadata([TOPIC])
    now = int(time.time() * 1000)
    # a few distinct batches, sent round-robin: building batches costs more than sending them
    templates = [records.build_batch([(None, os.urandom(VALUE_SIZE)) for _ in range(BATCH_RECORDS)], timestamp=now)
                 for _ in range(8)]
    per_partition = [count // partitions + (1 if p < count % partitions else 0) for p in range(partitions)]
    pending = []
    for partition, total in enumerate(per_partition):
        sent = 0
        while sent < total:
            size = min(BATCH_RECORDS, total - sent)
            batch = templates[(sent // BATCH_RECORDS) % len(templates)]
            if size < BATCH_RECORDS:
                batch = records.build_batch([(None, os.urandom(VALUE_SIZE)) for _ in range(size)], timestamp=now)
            request = ProduceRequest(transactional_id=None, acks=1, timeout_ms=30_000, topic_data=[
                ProduceRequest.TopicProduceData(name=TOPIC, partition_data=[
                    ProduceRequest.TopicProduceData.PartitionProduceData(index=partition, records=batch)])])
            connection = await client.connection(client.leader(TOPIC, partition))
            future = connection.send(request, 9)
            assert future is not None
            pending.append(future)
            sent += size
            if len(pending) >= 32:
                for answer in await asyncio.gather(*pending):
                    code = answer.responses[0].partition_responses[0].error_code
                    if code:
                        raise RuntimeError(f"produce failed with error {code}")
                pending.clear()
    for answer in await asyncio.gather(*pending):
        if answer.responses[0].partition_responses[0].error_code:
            raise RuntimeError("produce failed")
    await client.close()


async def plain_read(bootstrap: str) -> tuple[int, int]:
    """(records, value bytes) of the whole topic, read with the project's client alone."""
    client = KafkaClient(bootstrap)
    await client.start()
    await client.refresh_metadata([TOPIC], allow_auto_topic_creation=False)
    partitions = [(TOPIC, p.partition) for p in client.topics[TOPIC].partitions]
    starts = await list_offsets(client, partitions, EARLIEST)
    ends = await list_offsets(client, partitions, LATEST)
    count = size = 0
    for topic, partition in partitions:
        async for columns in fetch_range(client, topic, partition, starts[(topic, partition)],
                                         ends[(topic, partition)], include_headers=False):
            count += len(columns)
            size += sum(map(len, columns.values))  # type: ignore[arg-type]
    await client.close()
    return count, size


def spark_session(master: str) -> Any:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(master).appName("spark_read bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
             .config("spark.sql.shuffle.partitions", "2")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def spark_read(spark: Any, bootstrap: str, options: dict[str, str]) -> tuple[int, int]:
    from pyspark.sql import functions as F

    reader = spark.read.format("kafka-wire").option("kafka.bootstrap.servers", bootstrap).option("subscribe", TOPIC)
    for key, value in options.items():
        reader = reader.option(key, value)
    row = reader.load().agg(F.count(F.lit(1)).alias("n"), F.sum(F.length("value")).alias("bytes")).first()
    return int(row["n"]), int(row["bytes"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--min-partitions", type=int, default=0,
                        help="minPartitions option (0: one input partition per Kafka partition)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()

    from minibroker.spark import register

    broker = start_broker()
    try:
        log(f"writing {args.records:,} records of {VALUE_SIZE} bytes to {args.partitions} partition(s)")
        started = time.perf_counter()
        asyncio.run(create_and_fill(broker.bootstrap_servers, args.records, args.partitions))
        log(f"written in {time.perf_counter() - started:.1f} s")
        spark = spark_session(args.master)
        register(spark)
        options = {"minPartitions": str(args.min_partitions)} if args.min_partitions else {}
        log("warming Spark up (one untimed read)")
        spark_read(spark, broker.bootstrap_servers, options)
        plain_times: list[float] = []
        spark_times: list[float] = []
        for round_number in range(args.rounds):
            started = time.perf_counter()
            plain = asyncio.run(plain_read(broker.bootstrap_servers))
            plain_times.append(time.perf_counter() - started)
            started = time.perf_counter()
            via_spark = spark_read(spark, broker.bootstrap_servers, options)
            spark_times.append(time.perf_counter() - started)
            if plain[0] != args.records or via_spark != plain:
                raise RuntimeError(f"reads disagree: plain {plain}, spark {via_spark}, expected {args.records}")
            log(f"round {round_number + 1}: plain {plain_times[-1]:.2f} s, spark {spark_times[-1]:.2f} s")
        spark.stop()
    finally:
        broker.stop()

    plain_rate = args.records / statistics.median(plain_times)
    spark_rate = args.records / statistics.median(spark_times)
    result = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "records": args.records, "value_bytes": VALUE_SIZE, "partitions": args.partitions,
        "master": args.master, "min_partitions": args.min_partitions or None, "rounds": args.rounds,
        "plain_seconds": plain_times, "spark_seconds": spark_times,
        "plain_rows_per_s": round(plain_rate), "spark_rows_per_s": round(spark_rate),
        "spark_over_plain": round(spark_rate / plain_rate, 3),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"| read | rows/s (median of {args.rounds}) |\n|---|---|")
    print(f"| plain client (one process) | {plain_rate:,.0f} |")
    print(f"| Spark {args.master} | {spark_rate:,.0f} |")
    print(f"Spark / plain = {spark_rate / plain_rate:.2f}; written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
