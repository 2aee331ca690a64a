"""Kafka 4.3.1's `kafka-features` (FeatureCommand, through the Java Admin's describeFeatures and
updateFeatures) against minibroker: describe, --dry-run, refusals, a real downgrade and upgrade.

The expected lines are what the same commands printed against Kafka 4.3.1 formatted with its defaults
(node id 1, as minibroker is started here, since refusals name the controller's id). The real changes
were not run against the shared Kafka: their wording ("was upgraded to") was seen there on a no-op upgrade.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from minibroker.testing.process import BrokerProcess, start_broker
from tests.differential.test_cli_tools import JVM_OPTS, TOOLS_LOG4J2, _build_runner
from tests.reference.launcher import ReferenceUnavailable, jar_dir

pytestmark = [pytest.mark.reference, pytest.mark.timeout(600)]

FEATURES = "org.apache.kafka.tools.FeatureCommand"
TOOL_TIMEOUT_S = 400.0
FAILED = "The update failed for all features since the following feature had an error: "


@pytest.fixture(scope="module")
def broker() -> Iterator[BrokerProcess]:
    process = start_broker("node.id=1", extra_args=("--feature", "transaction.version=1"))
    yield process
    process.stop()


def run_features(bootstrap: str, *commands: list[str]) -> list[tuple[int, str]]:
    """Each FeatureCommand invocation in one JVM (ToolRunner), in order: (exit code, stdout + stderr)."""
    try:
        jars = jar_dir()
    except ReferenceUnavailable as exc:
        pytest.skip(str(exc))
    args: list[str] = []
    for command in commands:
        args += [FEATURES, "--bootstrap-server", bootstrap, *command, ";"]
    with tempfile.TemporaryDirectory(prefix="features-tool-") as build:
        classpath = _build_runner(Path(build), jars)
        done = subprocess.run(["java", *JVM_OPTS, "-cp", classpath, f"-Dlog4j2.configurationFile={TOOLS_LOG4J2}",
                               "ToolRunner", *args], capture_output=True, text=True, timeout=TOOL_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(results) == len(commands), f"ToolRunner ended early ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return [(r["exit"], (r["out"] + r["err"]).strip()) for r in results]


def describe_levels(text: str) -> dict[str, tuple[str, str]]:
    """feature -> (FinalizedVersionLevel, Epoch) from `describe`."""
    rows = {}
    for line in text.splitlines():
        pairs = dict(part.split(": ", 1) for part in line.split("  ") if ": " in part)
        rows[pairs["Feature"].strip()] = (pairs["FinalizedVersionLevel"].strip(), pairs["Epoch"].strip())
    return rows


def test_kafka_features_describe_dry_run_refusals_and_changes(broker: BrokerProcess) -> None:
    outputs = run_features(
        broker.bootstrap_servers,
        ["describe"],
        ["upgrade", "--feature", "transaction.version=2", "--dry-run"],
        ["downgrade", "--feature", "group.version=0", "--dry-run"],
        ["downgrade", "--metadata", "4.2-IV1", "--dry-run"],
        ["downgrade", "--unsafe", "--metadata", "4.2-IV1", "--dry-run"],
        ["upgrade", "--feature", "foo.bar=1", "--dry-run"],
        ["describe"],
        ["downgrade", "--feature", "group.version=0"],
        ["describe"],
        ["upgrade", "--feature", "group.version=1"],
        ["describe"],
    )
    before = describe_levels(outputs[0][1])
    assert {name: level for name, (level, _) in before.items()} == {
        "eligible.leader.replicas.version": "1", "group.version": "1", "kraft.version": "0",
        "metadata.version": "4.3-IV0", "share.version": "1", "streams.version": "1", "transaction.version": "1"}
    assert outputs[1] == (0, "transaction.version can be upgraded to 2.")
    assert outputs[2] == (0, "group.version can be downgraded to 0.")
    assert outputs[3][0] == 1 and outputs[3][1].endswith(
        "Can not downgrade metadata.version to 29. " + FAILED + "Unsupported metadata.version downgrade from 30 to "
        "29. Refusing to perform the requested downgrade because it might delete metadata information.\n"
        "1 out of 1 operation(s) failed.")
    assert outputs[4][0] == 1 and outputs[4][1].endswith(
        "Can not downgrade metadata.version to 29. " + FAILED + "Unsupported metadata.version downgrade from 30 to "
        "29. Unsafe metadata downgrade is not supported in this version.\n1 out of 1 operation(s) failed.")
    assert outputs[5] == (1, "Can not upgrade foo.bar to 1. " + FAILED + "Invalid update version 1 for feature "
                             "foo.bar. Local controller 1 does not support this feature.\n"
                             "1 out of 1 operation(s) failed.")
    assert describe_levels(outputs[6][1]) == before  # dry runs changed nothing, epoch included
    assert outputs[7] == (0, "group.version was downgraded to 0.")
    downgraded = describe_levels(outputs[8][1])
    assert downgraded["group.version"][0] == "0"
    assert int(downgraded["group.version"][1]) > int(before["group.version"][1])
    assert outputs[9] == (0, "group.version was upgraded to 1.")
    assert describe_levels(outputs[10][1])["group.version"][0] == "1"
