"""A PySpark data source for Kafka topics on any Kafka-protocol broker (Spark 4's Python data source API).

Options and rows follow Spark's built-in Kafka source, so a job moves to the
built-in connector by changing the format name from "kafka-wire" to "kafka":

    from minibroker.spark import KafkaDataSource
    spark.dataSource.register(KafkaDataSource)
    df = spark.read.format("kafka-wire").option("kafka.bootstrap.servers", "127.0.0.1:9092")
        .option("subscribe", "events").load()

See docs/spark.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .source import FORMAT, KafkaDataSource


def register(spark: Any) -> str:
    """Register the data source with a SparkSession; returns its format name."""
    from .source import FORMAT, KafkaDataSource

    spark.dataSource.register(KafkaDataSource)
    return FORMAT


def __getattr__(name: str) -> Any:
    # pyspark is imported on first use: the package's pyspark-free parts (options, the audit's report) and their
    # tests import without the `spark` extra
    if name in ("FORMAT", "KafkaDataSource"):
        from . import source

        return getattr(source, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["FORMAT", "KafkaDataSource", "register"]
