"""One SparkSession for all Spark tests: local, 2 cores, listening on 127.0.0.1 only, no UI.

pyspark is an optional extra (`minibroker[spark]`): without it these tests
are skipped on a developer machine and fail under CI, where a skip would hide
a broken install step.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.clients import in_ci

try:
    import pyarrow  # noqa: F401
    import pyspark  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    if in_ci():
        raise RuntimeError(f"CI is set and pyspark/pyarrow are missing ({exc}); install minibroker[spark]") from exc
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The shared session, with the data source registered (format "kafka-wire")."""
    # workers run the same interpreter, so they import minibroker from this environment
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    from pyspark.sql import SparkSession

    from minibroker.spark import register

    session = (SparkSession.builder
               # 2 cores; a failed task is tried up to 4 times (local mode's default is once) so the
               # exactly-once tests can watch Spark retry a task
               .master("local[2,4]")
               .appName("minibroker-spark-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    register(session)
    yield session
    session.stop()
