"""Exactly-once audit: duplicates, gaps and order violations of stamped records, per producer and partition.

Producers stamp each record with two headers (`minibroker.client.stamping`):
`audit.producer`, the producer's name, and `audit.sequence`, its number
0, 1, 2, ... in the order that producer sent it. Sequences count per
producer over everything it wrote, whatever topic and partition each
record went to. Over the audited topics:

- duplicate: a copy of a (producer, sequence) seen before. Copies are
  ordered by (topic, partition, offset); every copy after the first is
  counted, in the partition where it lies.
- gap: a sequence missing between the lowest and highest sequence seen of
  that producer (from 0 with --from-zero). Each run of missing sequences
  is counted in the partition that holds the sequence just before it.
  Records lost after a producer's last surviving record cannot be seen
  without knowing how many it sent.
- order violation: in one partition, in offset order, a record whose
  sequence is lower than that of the previous record of the same producer
  (duplicates left out). Records of one producer sent to one partition must
  be stored in the order they were sent.

Records without a valid stamp are counted and reported, not judged.
The job exits 1 when it finds any duplicate, gap or order violation, 0 otherwise.

    python -m minibroker.spark.jobs.audit --bootstrap-servers HOST:PORT --topics a,b [--master local[*]]
    spark-submit minibroker/spark/jobs/audit.py --bootstrap-servers HOST:PORT --topics a,b
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from minibroker.client.stamping import PRODUCER_HEADER, SEQUENCE_HEADER
from minibroker.spark import FORMAT, register

EXIT_CLEAN, EXIT_FOUND = 0, 1


@dataclass
class PartitionFindings:
    """One producer's records in one partition, and what is wrong with them."""

    producer: str
    topic: str
    partition: int
    records: int
    min_sequence: int
    max_sequence: int
    duplicates: int = 0
    gaps: int = 0  # missing sequences counted here
    gap_ranges: int = 0
    order_violations: int = 0


@dataclass
class AuditReport:
    """The audit of a set of topics."""

    topics: list[str]
    isolation_level: str
    records: int
    unstamped: int
    producers: int
    partitions: list[PartitionFindings] = field(default_factory=list)
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def duplicates(self) -> int:
        return sum(p.duplicates for p in self.partitions)

    @property
    def gaps(self) -> int:
        return sum(p.gaps for p in self.partitions)

    @property
    def gap_ranges(self) -> int:
        return sum(p.gap_ranges for p in self.partitions)

    @property
    def order_violations(self) -> int:
        return sum(p.order_violations for p in self.partitions)

    @property
    def clean(self) -> bool:
        return not (self.duplicates or self.gaps or self.order_violations)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(duplicates=self.duplicates, gaps=self.gaps, gap_ranges=self.gap_ranges,
                   order_violations=self.order_violations, clean=self.clean)
        return out

    def render(self) -> str:
        """A readable report: a table per producer and partition, totals, a verdict and a few examples."""
        lines = [f"Exactly-once audit of {', '.join(self.topics)} ({self.isolation_level}): "
                 f"{self.records:,} records, {self.records - self.unstamped:,} stamped by {self.producers} "
                 f"producer(s), {self.unstamped:,} without a stamp", ""]
        header = ("producer", "topic", "partition", "records", "sequences", "duplicates", "missing", "order violations")
        rows = [header] + [(p.producer, p.topic, str(p.partition), f"{p.records:,}",
                            f"{p.min_sequence}..{p.max_sequence}", f"{p.duplicates:,}",
                            f"{p.gaps:,}" + (f" in {p.gap_ranges:,} gap(s)" if p.gap_ranges else ""),
                            f"{p.order_violations:,}") for p in self.partitions]
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        for index, row in enumerate(rows):
            lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
            if index == 0:
                lines.append("  ".join("-" * width for width in widths))
        lines.append("")
        verdict = "PASS" if self.clean else "FAIL"
        lines.append(f"{verdict}: {self.duplicates:,} duplicate(s), {self.gaps:,} missing sequence(s) in "
                     f"{self.gap_ranges:,} gap(s), {self.order_violations:,} order violation(s)")
        for kind, examples in self.examples.items():
            for example in examples:
                lines.append(f"  {kind}: " + ", ".join(f"{k}={v}" for k, v in example.items()))
        return "\n".join(lines)


def _header_value(name: str) -> Column:
    # the last non-null value of the header wins, as in stamping.read_stamp
    return F.expr(f"try_element_at(filter(headers, h -> h.key = '{name}' AND h.value IS NOT NULL), -1).value")


def audit(df: DataFrame, topics: list[str], isolation_level: str = "read_committed", from_zero: bool = False,
          examples: int = 5) -> AuditReport:
    """Audit a DataFrame of Kafka rows with headers (Spark's Kafka schema, includeHeaders=true)."""
    seq_text = _header_value(SEQUENCE_HEADER).cast("string")
    rows = df.select(
        "topic", "partition", "offset",
        _header_value(PRODUCER_HEADER).cast("string").alias("producer"),
        F.when(seq_text.rlike("^[0-9]{1,18}$"), seq_text.cast("long")).alias("sequence"),
    ).persist()
    try:
        totals = rows.agg(F.count(F.lit(1)).alias("records"),
                          F.count(F.when(F.col("producer").isNull() | F.col("sequence").isNull(), 1))
                          .alias("unstamped"),
                          F.countDistinct(F.when(F.col("sequence").isNotNull(), F.col("producer")))
                          .alias("producers")).collect()[0]
        stamped = rows.where(F.col("producer").isNotNull() & F.col("sequence").isNotNull())
        # duplicates: every copy of a (producer, sequence) after the first in (topic, partition, offset) order
        by_copy = Window.partitionBy("producer", "sequence").orderBy("topic", "partition", "offset")
        flagged = stamped.withColumn("copy", F.row_number().over(by_copy))
        firsts = flagged.where(F.col("copy") == 1)
        # order: in each partition, offset order, a sequence below the previous one of the same producer
        by_offset = Window.partitionBy("producer", "topic", "partition").orderBy("offset")
        ordered = firsts.withColumn("previous", F.lag("sequence").over(by_offset)) \
            .withColumn("violation", F.col("sequence") < F.col("previous"))
        # gaps: sequences missing between neighbours in sequence order, charged to the partition before the gap
        by_sequence = Window.partitionBy("producer").orderBy("sequence")
        neighbours = firsts.select(
            "producer", "sequence", "topic", "partition", "offset",
            F.lag("sequence").over(by_sequence).alias("before"),
            F.lag("topic").over(by_sequence).alias("before_topic"),
            F.lag("partition").over(by_sequence).alias("before_partition"),
            F.lag("offset").over(by_sequence).alias("before_offset"))
        if from_zero:
            # a producer's first records missing: charged to the partition of its lowest sequence seen
            neighbours = neighbours.select(
                "producer", "sequence", "topic", "partition", "offset",
                F.coalesce("before", F.lit(-1)).alias("before"),
                F.coalesce("before_topic", "topic").alias("before_topic"),
                F.coalesce("before_partition", "partition").alias("before_partition"),
                "before_offset")
        gaps = neighbours.where(F.col("sequence") - F.col("before") > 1)

        per_partition = flagged.groupBy("producer", "topic", "partition").agg(
            F.count(F.lit(1)).alias("records"), F.min("sequence").alias("min_sequence"),
            F.max("sequence").alias("max_sequence"), F.count(F.when(F.col("copy") > 1, 1)).alias("duplicates"))
        violations = ordered.groupBy("producer", "topic", "partition").agg(
            F.count(F.when(F.col("violation"), 1)).alias("order_violations"))
        missing = gaps.groupBy(F.col("producer"), F.col("before_topic").alias("topic"),
                               F.col("before_partition").alias("partition")).agg(
            F.sum(F.col("sequence") - F.col("before") - 1).alias("gaps"), F.count(F.lit(1)).alias("gap_ranges"))
        keys = ["producer", "topic", "partition"]
        summary = per_partition.join(violations, keys, "left").join(missing, keys, "left") \
            .orderBy(*keys).collect()
        findings = [PartitionFindings(
            producer=r["producer"], topic=r["topic"], partition=r["partition"], records=r["records"],
            min_sequence=r["min_sequence"], max_sequence=r["max_sequence"], duplicates=r["duplicates"],
            gaps=int(r["gaps"] or 0), gap_ranges=int(r["gap_ranges"] or 0),
            order_violations=int(r["order_violations"] or 0)) for r in summary]

        found: dict[str, list[dict[str, Any]]] = {}
        if examples > 0 and any(f.duplicates for f in findings):
            found["duplicate"] = [
                {"producer": r["producer"], "sequence": r["sequence"], "at": f"{r['topic']}-{r['partition']}@"
                 f"{r['offset']}", "copy": r["copy"]}
                for r in flagged.where(F.col("copy") > 1).orderBy("producer", "sequence", "copy")
                .limit(examples).collect()]
        if examples > 0 and any(f.gaps for f in findings):
            found["gap"] = [
                {"producer": r["producer"], "missing": f"{r['before'] + 1}..{r['sequence'] - 1}",
                 "after": f"{r['before_topic']}-{r['before_partition']}@{r['before_offset']}"}
                for r in gaps.orderBy("producer", "sequence").limit(examples).collect()]
        if examples > 0 and any(f.order_violations for f in findings):
            found["order violation"] = [
                {"producer": r["producer"], "at": f"{r['topic']}-{r['partition']}@{r['offset']}",
                 "sequence": r["sequence"], "previous": r["previous"]}
                for r in ordered.where(F.col("violation")).orderBy("producer", "topic", "partition", "offset")
                .limit(examples).collect()]
        return AuditReport(topics=topics, isolation_level=isolation_level, records=totals["records"],
                           unstamped=totals["unstamped"], producers=totals["producers"], partitions=findings,
                           examples=found)
    finally:
        rows.unpersist()


def read_topics(spark: SparkSession, bootstrap_servers: str, topics: list[str],
                isolation_level: str = "read_committed", source_format: str = FORMAT) -> DataFrame:
    """Every record of `topics`, with headers, through the project's data source (or Spark's own `kafka`)."""
    if source_format == FORMAT:
        register(spark)
    return (spark.read.format(source_format)
            .option("kafka.bootstrap.servers", bootstrap_servers)
            .option("subscribe", ",".join(topics))
            .option("startingOffsets", "earliest").option("endingOffsets", "latest")
            .option("includeHeaders", "true")
            .option("kafka.isolation.level", isolation_level)
            .load())


def session(master: str | None, app_name: str = "minibroker exactly-once audit") -> SparkSession:
    """The job's SparkSession: `master` if given, spark-submit's if any, else local[*] bound to 127.0.0.1."""
    builder = SparkSession.builder.appName(app_name)
    from pyspark import SparkConf

    chosen = master or SparkConf().get("spark.master", None) or "local[*]"
    builder = builder.master(chosen)
    if chosen.startswith("local"):
        # local workers run this interpreter, so they import minibroker from this environment
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        # and a local run listens on the loopback interface only
        builder = builder.config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1") \
            .config("spark.ui.enabled", "false")
    return builder.getOrCreate()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minibroker.spark.jobs.audit",
                                     description="Exactly-once audit of stamped Kafka records.")
    parser.add_argument("--bootstrap-servers", required=True, help="host:port[,host:port...]")
    parser.add_argument("--topics", required=True, help="comma-separated topics to audit")
    parser.add_argument("--master", default=None,
                        help="Spark master (default: the running session's, spark-submit's, else local[*])")
    parser.add_argument("--isolation-level", choices=("read_committed", "read_uncommitted"),
                        default="read_committed")
    parser.add_argument("--from-zero", action="store_true",
                        help="sequences start at 0: missing first records count as a gap")
    parser.add_argument("--examples", type=int, default=5, help="examples of each finding to print")
    parser.add_argument("--json", type=Path, default=None, help="also write the report as JSON here")
    parser.add_argument("--format", default=FORMAT, help=f"data source format ({FORMAT}, or Spark's kafka)")
    args = parser.parse_args(argv)
    topics = [t.strip() for t in args.topics.split(",") if t.strip()]

    # called from a running application (a notebook, a test), the job uses its session and leaves it running
    active = SparkSession.getActiveSession()
    spark = active or session(args.master)
    if active is None:
        spark.sparkContext.setLogLevel("WARN")
    try:
        frame = read_topics(spark, args.bootstrap_servers, topics, args.isolation_level, args.format)
        report = audit(frame, topics, args.isolation_level, from_zero=args.from_zero, examples=args.examples)
    finally:
        if active is None:
            spark.stop()
    print(report.render())
    if args.json is not None:
        args.json.write_text(json.dumps(report.to_json(), indent=2) + "\n")
    return EXIT_CLEAN if report.clean else EXIT_FOUND


if __name__ == "__main__":
    sys.exit(main())
