"""The README's Spark section is true as written: its example, run as a script by the virtualenv's Python without
the virtualenv activated and without PYSPARK_PYTHON, reads a topic (the workers import minibroker too)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka import Producer

from minibroker.testing import BrokerThread
from tests.integration.clients import missing

README = Path(__file__).resolve().parents[2] / "README.md"

pytestmark = pytest.mark.timeout(600)  # a JVM and Python workers on a busy machine


def example() -> str:
    text = README.read_text()
    section = text[text.index("## Spark"):text.index("## Testing aids")]
    (script,) = re.findall(r"```python\n(.*?)```", section, re.S)
    return script


def not_activated_environment() -> dict[str, str]:
    """This environment as a shell without the virtualenv activated has it: no VIRTUAL_ENV, its bin/ off PATH."""
    bin_dir = str(Path(sys.executable).parent)
    path = [entry for entry in os.environ.get("PATH", "").split(os.pathsep) if entry and entry != bin_dir]
    dropped = ("PYSPARK_", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "SPARK_HOME")
    env = {key: value for key, value in os.environ.items() if not key.startswith(dropped)}
    return {**env, "PATH": os.pathsep.join(path), "SPARK_LOCAL_IP": "127.0.0.1"}


def test_the_spark_example_reads_a_topic_from_a_not_activated_virtualenv(tmp_path: Path) -> None:
    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        missing("the 'java' executable")
    env = not_activated_environment()
    with BrokerThread() as broker:
        producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
        for number in range(3):
            producer.produce("events", b"event-%d" % number)
        assert producer.flush(30) == 0
        script = tmp_path / "example.py"
        script.write_text(example().replace("127.0.0.1:9092", broker.bootstrap_servers))
        done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=480)
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.strip().splitlines()[-1] == "3"
