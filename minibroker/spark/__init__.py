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

from typing import Any

from .source import FORMAT, KafkaDataSource


def register(spark: Any) -> str:
    """Register the data source with a SparkSession; returns its format name."""
    spark.dataSource.register(KafkaDataSource)
    return FORMAT


__all__ = ["FORMAT", "KafkaDataSource", "register"]
