"""Spark jobs built on the data source: `python -m minibroker.spark.jobs.audit` (exactly-once audit)."""
