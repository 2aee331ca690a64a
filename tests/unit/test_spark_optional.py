"""pyspark is an optional extra: the package's pyspark-free parts import without it, so `pytest tests/unit` runs
on an install without `minibroker[spark]`."""

from __future__ import annotations

import subprocess
import sys

# an interpreter in which pyspark and pyarrow cannot be imported, whatever is installed
WITHOUT_SPARK = """
import sys
class NoSpark:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pyspark", "pyarrow"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoSpark())
"""


def run_without_spark(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT_SPARK + code], capture_output=True, text=True, timeout=120)


def test_the_spark_options_import_without_pyspark() -> None:
    done = run_without_spark("from minibroker.spark.options import SourceOptions; print(SourceOptions.__name__)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "SourceOptions"


def test_the_data_source_itself_still_needs_pyspark() -> None:
    done = run_without_spark("from minibroker.spark import KafkaDataSource")
    assert done.returncode == 1
    assert "No module named 'pyarrow'" in done.stderr or "No module named 'pyspark" in done.stderr
