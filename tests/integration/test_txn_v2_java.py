"""Transactions V2 (KIP-890 part 2) through the Apache Kafka 4.3.1 Java client, which reads the finalized
`transaction.version` from ApiVersions and picks V1 or V2 itself.

The program is tests/clients/java-tv2/TxnV2.java, compiled against the reference install's kafka-clients
4.3.1 (.cache/kafka/4.3.1, scripts/install-reference-kafka.sh): it commits and aborts, then copies a topic
with an exactly-once consume-transform-produce loop under injected faults (an aborted batch re-read, an
instance fenced in the middle of its transaction). Against a node speaking as the latest release
(transaction.version 2 finalized) the broker's request log shows EndTxn v5 and TxnOffsetCommit v5 and no
AddPartitionsToTxn or AddOffsetsToTxn; against one speaking as 3.9 (no transaction.version) the same program
uses V1.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from minibroker.testing.process import start_broker
from tests.integration.clients import run_client
from tests.reference.launcher import DEFAULT_VERSION, ReferenceUnavailable, jar_dir

pytestmark = [pytest.mark.java, pytest.mark.timeout(900)]

SOURCE = Path(__file__).resolve().parents[1] / "clients" / "java-tv2" / "TxnV2.java"
JVM_OPTS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx512m")
#: Generous: two JVM starts and a consumer group on a loaded 2-core machine took up to 3 minutes.
RUN_TIMEOUT_S = 600.0
_REQUEST = re.compile(r"request from \S+ client_id=\S* api=(\w+) v(\d+) ")
_QUIET_LOG4J = "-Dlog4j2.rootLogger.level=WARN"


@pytest.fixture(scope="module")
def classpath(tmp_path_factory: pytest.TempPathFactory) -> str:
    """TxnV2 compiled against Kafka 4.3.1's client jars."""
    try:
        jars = jar_dir(DEFAULT_VERSION)
    except ReferenceUnavailable as exc:
        pytest.skip(f"needs {exc} (scripts/install-reference-kafka.sh)")
    libs = os.pathsep.join(str(jar) for jar in sorted(jars.glob("*.jar")))
    build = tmp_path_factory.mktemp("txn-v2-java")
    compiled = subprocess.run(["javac", "-encoding", "UTF-8", "-cp", libs, "-d", str(build), str(SOURCE)],
                              capture_output=True, text=True, timeout=300)
    assert compiled.returncode == 0, f"javac failed:\n{compiled.stdout}\n{compiled.stderr}"
    return os.pathsep.join([str(build), libs])


def run_program(classpath: str, *broker_args: str) -> tuple[dict[str, Any], Counter[tuple[str, int]]]:
    """TxnV2's result against a fresh broker started with `broker_args`, and the (API, version) pairs it served."""
    broker = start_broker(extra_args=("--log-level", "DEBUG", *broker_args))
    try:
        run = run_client(["java", *JVM_OPTS, _QUIET_LOG4J, "-cp", classpath, "TxnV2", broker.bootstrap_servers,
                          "jtv2"], timeout=RUN_TIMEOUT_S, broker=broker).check()
    finally:
        broker.stop()
    served = Counter((api, int(version)) for api, version in _REQUEST.findall(broker.log_text()))
    result = json.loads(run.stdout.strip().splitlines()[-1])
    result["run"] = run
    return result, served


def assert_exactly_once(result: dict[str, Any]) -> None:
    """Only the committed transaction is read_committed; every record of the copied topic exactly once."""
    details = result["run"].describe()
    assert result["committed"] == [f"c{i}" for i in range(10)], details
    assert result["uncommitted"] == sorted([f"c{i}" for i in range(10)] + [f"a{i}" for i in range(5)]), details
    assert result["copied"] == [f"V{i:02d}" for i in range(20)], details
    assert (result["aborted"], result["fenced"]) == (1, 1), details


def versions(served: Counter[tuple[str, int]], api: str) -> set[int]:
    return {version for name, version in served if name == api}


def test_java_4_client_uses_transactions_v2(classpath: str) -> None:
    result, served = run_program(classpath)
    assert_exactly_once(result)
    assert versions(served, "END_TXN") == {5}, served
    assert versions(served, "TXN_OFFSET_COMMIT") == {5}, served
    assert min(versions(served, "PRODUCE")) >= 12, served
    assert not versions(served, "ADD_PARTITIONS_TO_TXN") and not versions(served, "ADD_OFFSETS_TO_TXN"), served


def test_java_4_client_uses_transactions_v1_against_a_release_without_it(classpath: str) -> None:
    result, served = run_program(classpath, "--as-version", "3.9")
    assert_exactly_once(result)
    assert max(versions(served, "END_TXN")) <= 4, served
    assert versions(served, "ADD_PARTITIONS_TO_TXN") and versions(served, "ADD_OFFSETS_TO_TXN"), served
    assert max(versions(served, "TXN_OFFSET_COMMIT")) <= 4, served
