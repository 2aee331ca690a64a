"""Kafka 4.3.1's client tools whose output is not comparable line for line with Kafka's (throughput, timings,
generated values) against one minibroker process: what they print is checked for its meaning instead.

- kafka-console-producer then kafka-console-consumer: keyed lines (parse.key) round-trip, keys included;
- kafka-verifiable-producer then kafka-verifiable-consumer: from their JSON event lines, every record the
  producer saw acknowledged is consumed exactly once, and the consumer's last commits are the ends it read;
- kafka-producer-perf-test (20000 records, --throughput -1; then idempotent with acks=all) prints its
  summary line and exits 0, and kafka-consumer-perf-test reads all 40000 records back;
- kafka-configs changes a broker's and the cluster's default broker configs (the differential module compares
  only refusals there, as a change would show in other tests describing the shared reference Kafka);
- kafka-console-share-consumer reads a topic's lines through a share group (share.auto.offset.reset=earliest set
  with kafka-configs), then kafka-share-groups lists, describes (offsets, members, state), resets its offsets to
  the earliest, deletes its offsets and deletes it, printing what Kafka 4.3.1 prints for the same run.

All tools run one after the other in one JVM (tests/differential/clients/ToolRunner.java), as a JVM start
costs seconds here; the console producer reads its lines from a file the runner makes its standard input.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from minibroker.testing.process import BrokerProcess
from tests.differential.test_cli_tools import JVM_OPTS, TOOLS_LOG4J2, _build_runner
from tests.reference.launcher import ReferenceUnavailable, jar_dir

pytestmark = [pytest.mark.reference, pytest.mark.timeout(900)]

RUNNER_TIMEOUT_S = 600.0  # every tool of the module in one JVM: about a minute on a loaded 2-core machine
PERF_RECORDS = 20000
VERIFIABLE_RECORDS = 1000
KEYED_LINES = [f"key-{index % 3}:value {index}" for index in range(12)]
CONFIGS = "kafka.admin.ConfigCommand"
SHARE_GROUPS = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
SHARE_LINES = [f"share line {index}" for index in range(5)]
SHARE_GROUP = "tools-share-group"
#: Broker config changes, run here rather than beside the shared reference Kafka, which other tests describe.
BROKER_CONFIGS: list[tuple[str, list[str]]] = [
    ("alter-default", ["--alter", "--entity-type", "brokers", "--entity-default",
                      "--add-config", "log.retention.ms=3600000"]),
    ("describe-default", ["--describe", "--entity-type", "brokers", "--entity-default"]),
    ("alter-broker", ["--alter", "--entity-type", "brokers", "--entity-name", "0", "--add-config",
                     "log.cleaner.threads=2"]),
    ("describe-broker", ["--describe", "--entity-type", "brokers", "--entity-name", "0"]),
    ("delete-default", ["--alter", "--entity-type", "brokers", "--entity-default", "--delete-config",
                       "log.retention.ms"]),
    ("describe-default-after", ["--describe", "--entity-type", "brokers", "--entity-default"]),
]
SUMMARY = re.compile(r"^(\d+) records sent, [\d.]+ records/sec \([\d.]+ MB/sec\), [\d.]+ ms avg latency, "
                     r"[\d.]+ ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99.9th\.$", re.M)


@dataclass(frozen=True)
class Ran:
    exit: int
    out: str
    err: str


@dataclass(frozen=True)
class Runs:
    """Each tool's result by name, and how long the one JVM took."""

    by_name: dict[str, Ran]
    seconds: float


@pytest.fixture(scope="module")
def runs(broker: BrokerProcess) -> Runs:
    """Every tool of the module against `broker`, in order, in one JVM."""
    try:
        jars = jar_dir()
    except ReferenceUnavailable as exc:
        pytest.skip(str(exc))
    bootstrap = broker.bootstrap_servers
    for topic in ("console", "verifiable", "perf"):
        broker.create_topic(topic, 3)
    broker.create_topic("share", 1)
    producer = f"bootstrap.servers={bootstrap}"
    with tempfile.TemporaryDirectory(prefix="kafka-tools-") as work:
        lines = Path(work) / "lines.txt"
        lines.write_text("".join(line + "\n" for line in KEYED_LINES))
        share_lines = Path(work) / "share-lines.txt"
        share_lines.write_text("".join(line + "\n" for line in SHARE_LINES))
        share_groups = [SHARE_GROUPS, "--bootstrap-server", bootstrap]
        tools: list[tuple[str, list[str]]] = [
            ("console-producer", ["--stdin", str(lines), "org.apache.kafka.tools.ConsoleProducer",
                                  "--bootstrap-server", bootstrap, "--topic", "console",
                                  "--reader-property", "parse.key=true", "--reader-property", "key.separator=:"]),
            ("console-consumer", ["org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", bootstrap,
                                  "--topic", "console", "--from-beginning", "--max-messages", str(len(KEYED_LINES)),
                                  "--timeout-ms", "60000", "--formatter-property", "print.key=true",
                                  "--formatter-property", "key.separator=:"]),
            ("verifiable-producer", ["org.apache.kafka.tools.VerifiableProducer", "--bootstrap-server", bootstrap,
                                     "--topic", "verifiable", "--max-messages", str(VERIFIABLE_RECORDS),
                                     "--acks", "-1"]),
            ("verifiable-consumer", ["org.apache.kafka.tools.VerifiableConsumer", "--bootstrap-server", bootstrap,
                                     "--topic", "verifiable", "--group-id", "verifiable-group", "--max-messages",
                                     str(VERIFIABLE_RECORDS), "--verbose", "--reset-policy", "earliest"]),
            ("producer-perf-test", ["org.apache.kafka.tools.ProducerPerformance", "--topic", "perf", "--num-records",
                                    str(PERF_RECORDS), "--record-size", "100", "--throughput", "-1",
                                    "--producer-props", producer]),
            ("producer-perf-test-idempotent", ["org.apache.kafka.tools.ProducerPerformance", "--topic", "perf",
                                               "--num-records", str(PERF_RECORDS), "--record-size", "100",
                                               "--throughput", "-1", "--producer-props", producer, "acks=all",
                                               "enable.idempotence=true"]),
            ("consumer-perf-test", ["org.apache.kafka.tools.ConsumerPerformance", "--bootstrap-server", bootstrap,
                                    "--topic", "perf", "--messages", str(2 * PERF_RECORDS), "--timeout", "60000"]),
            *((name, [CONFIGS, "--bootstrap-server", bootstrap, *command]) for name, command in BROKER_CONFIGS),
            ("share-earliest", [CONFIGS, "--bootstrap-server", bootstrap, "--alter", "--entity-type", "groups",
                                "--entity-name", SHARE_GROUP, "--add-config", "share.auto.offset.reset=earliest"]),
            ("share-producer", ["--stdin", str(share_lines), "org.apache.kafka.tools.ConsoleProducer",
                                "--bootstrap-server", bootstrap, "--topic", "share"]),
            ("console-share-consumer", ["org.apache.kafka.tools.consumer.ConsoleShareConsumer", "--bootstrap-server",
                                        bootstrap, "--topic", "share", "--group", SHARE_GROUP, "--max-messages",
                                        str(len(SHARE_LINES)), "--timeout-ms", "60000"]),
            ("share-groups-list", [*share_groups, "--list"]),
            ("share-groups-describe", [*share_groups, "--describe", "--group", SHARE_GROUP]),
            ("share-groups-members", [*share_groups, "--describe", "--group", SHARE_GROUP, "--members"]),
            ("share-groups-state", [*share_groups, "--describe", "--group", SHARE_GROUP, "--state"]),
            ("share-groups-reset", [*share_groups, "--reset-offsets", "--group", SHARE_GROUP, "--topic", "share",
                                    "--to-earliest", "--execute"]),
            ("share-groups-describe-reset", [*share_groups, "--describe", "--group", SHARE_GROUP]),
            ("share-groups-delete-offsets", [*share_groups, "--delete-offsets", "--group", SHARE_GROUP, "--topic",
                                             "share"]),
            ("share-groups-delete", [*share_groups, "--delete", "--group", SHARE_GROUP]),
            ("share-groups-list-after", [*share_groups, "--list"]),
        ]
        args: list[str] = []
        for _, command in tools:
            args += [*command, ";"]
        started = time.monotonic()
        classpath = _build_runner(Path(work), jars)
        done = subprocess.run(["java", *JVM_OPTS, "-cp", classpath, f"-Dlog4j2.configurationFile={TOOLS_LOG4J2}",
                               "ToolRunner", *args], capture_output=True, text=True, timeout=RUNNER_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
        seconds = time.monotonic() - started
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(results) == len(tools), f"ToolRunner ended early ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return Runs({name: Ran(r["exit"], r["out"], r["err"]) for (name, _), r in zip(tools, results, strict=True)},
                seconds)


def _events(ran: Ran) -> list[dict[str, Any]]:
    return [json.loads(line) for line in ran.out.splitlines() if line.startswith("{")]


def _ok(ran: Ran, name: str) -> None:
    assert ran.exit == 0, f"{name} exited {ran.exit}:\n{ran.out[-3000:]}\n{ran.err[-3000:]}"


def test_console_producer_then_consumer_round_trip_keyed_lines(runs: Runs) -> None:
    _ok(runs.by_name["console-producer"], "kafka-console-producer")
    consumed = runs.by_name["console-consumer"]
    _ok(consumed, "kafka-console-consumer")
    # one partition's lines keep their order; across partitions the order is the fetches'
    assert sorted(consumed.out.splitlines()) == sorted(KEYED_LINES)
    for key in ("key-0", "key-1", "key-2"):
        sent = [line for line in KEYED_LINES if line.startswith(key + ":")]
        assert [line for line in consumed.out.splitlines() if line.startswith(key + ":")] == sent
    assert f"Processed a total of {len(KEYED_LINES)} messages" in consumed.err


def test_verifiable_producer_acknowledged_records_are_consumed_exactly_once(runs: Runs) -> None:
    produced, consumed = runs.by_name["verifiable-producer"], runs.by_name["verifiable-consumer"]
    _ok(produced, "kafka-verifiable-producer")
    _ok(consumed, "kafka-verifiable-consumer")
    producer_events = _events(produced)
    acked = {(e["partition"], e["offset"]): e["value"] for e in producer_events if e["name"] == "producer_send_success"}
    assert not [e for e in producer_events if e["name"] == "producer_send_error"]
    assert len(acked) == VERIFIABLE_RECORDS
    assert sorted(acked.values(), key=int) == [str(n) for n in range(VERIFIABLE_RECORDS)]
    tool_data = next(e for e in producer_events if e["name"] == "tool_data")
    assert (tool_data["sent"], tool_data["acked"]) == (VERIFIABLE_RECORDS, VERIFIABLE_RECORDS)

    consumer_events = _events(consumed)
    records = [(e["partition"], e["offset"], e["value"]) for e in consumer_events if e["name"] == "record_data"]
    assert len(records) == len({(p, o) for p, o, _ in records}), "a record was consumed twice"
    assert {(p, o): v for p, o, v in records} == acked
    batches = [p for e in consumer_events if e["name"] == "records_consumed" for p in e["partitions"]]
    assert sum(batch["count"] for batch in batches) == VERIFIABLE_RECORDS
    # the last successful commit of each partition is the offset after the last record read from it
    committed: dict[int, int] = {}
    for event in consumer_events:
        if event["name"] == "offsets_committed":
            assert event["success"], event
            committed.update({o["partition"]: o["offset"] for o in event["offsets"]})
    ends = {p: max(o for q, o, _ in records if q == p) + 1 for p, _, _ in records}
    assert committed == ends
    kinds = [e["name"] for e in consumer_events]
    assert kinds[0] == "startup_complete" and "shutdown_complete" in kinds, sorted(set(kinds))


@pytest.mark.parametrize("name", ["producer-perf-test", "producer-perf-test-idempotent"])
def test_producer_perf_test_sends_every_record(runs: Runs, name: str) -> None:
    ran = runs.by_name[name]
    _ok(ran, f"kafka-producer-perf-test ({name})")
    summary = SUMMARY.search(ran.out)
    assert summary is not None, ran.out[-2000:]
    assert int(summary.group(1)) == PERF_RECORDS
    print(f"{name}: {summary.group(0)}")


def test_consumer_perf_test_reads_the_records_back(runs: Runs) -> None:
    ran = runs.by_name["consumer-perf-test"]
    _ok(ran, "kafka-consumer-perf-test")
    lines = [line for line in ran.out.splitlines() if line.strip()]
    header = next(index for index, line in enumerate(lines) if line.startswith("start.time"))
    row = dict(zip(lines[header].split(", "), lines[header + 1].split(", "), strict=True))
    assert int(row["data.consumed.in.nMsg"]) == 2 * PERF_RECORDS
    assert float(row["data.consumed.in.MB"]) == pytest.approx(2 * PERF_RECORDS * 100 / 1024 / 1024, abs=0.01)
    print(f"consumer-perf-test: {row}; kafka-tools JVM: {runs.seconds:.0f} s")


def test_kafka_configs_alters_and_deletes_broker_configs(runs: Runs) -> None:
    for name, _ in BROKER_CONFIGS:
        _ok(runs.by_name[name], f"kafka-configs {name}")
    out = {name: runs.by_name[name].out for name, _ in BROKER_CONFIGS}
    assert out["alter-default"].strip() == "Completed updating default config for brokers in the cluster."
    assert ("  log.retention.ms=3600000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms="
            "3600000}") in out["describe-default"].splitlines()
    assert out["alter-broker"].strip() == "Completed updating config for broker 0."
    assert out["describe-broker"].splitlines() == [
        "Dynamic configs for broker 0 are:",
        "  log.cleaner.threads=2 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2, "
        "DEFAULT_CONFIG:log.cleaner.threads=1}"]
    assert "log.retention.ms" not in out["describe-default-after"]


def _rows(ran: Ran) -> list[list[str]]:
    return [line.split() for line in ran.out.splitlines() if line.strip()]


def test_console_share_consumer_and_kafka_share_groups(runs: Runs) -> None:
    names = ["share-earliest", "share-producer", "console-share-consumer", "share-groups-list",
             "share-groups-describe", "share-groups-members", "share-groups-state", "share-groups-reset",
             "share-groups-describe-reset", "share-groups-delete-offsets", "share-groups-delete",
             "share-groups-list-after"]
    for name in names:
        _ok(runs.by_name[name], name)
    ran = runs.by_name
    assert ran["console-share-consumer"].out.splitlines() == SHARE_LINES  # one partition: in order, once each
    assert "Processed a total of 5 messages" in ran["console-share-consumer"].err
    assert SHARE_GROUP in ran["share-groups-list"].out.split()
    header = ["GROUP", "TOPIC", "PARTITION", "START-OFFSET", "LAG"]
    # every record accepted in one acknowledgement: as Kafka 4.3.1, the start offset stored with it is the one
    # before it moved, and nothing lags
    assert _rows(ran["share-groups-describe"]) == [header, [SHARE_GROUP, "share", "0", "0", "0"]]
    assert ran["share-groups-members"].err.strip() == f"Share group '{SHARE_GROUP}' has no active members."
    state = _rows(ran["share-groups-state"])
    assert state[0] == ["GROUP", "COORDINATOR", "(ID)", "STATE", "#MEMBERS"]
    assert (state[1][0], state[1][-2:]) == (SHARE_GROUP, ["Empty", "0"])
    assert _rows(ran["share-groups-reset"]) == [["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"],
                                                [SHARE_GROUP, "share", "0", "0"]]
    assert _rows(ran["share-groups-describe-reset"]) == [header, [SHARE_GROUP, "share", "0", "0", "5"]]
    assert _rows(ran["share-groups-delete-offsets"]) == [["TOPIC", "STATUS"], ["share", "Successful"]]
    assert ran["share-groups-delete"].out.strip() == (
        f"Deletion of requested share groups ('{SHARE_GROUP}') was successful.")
    assert SHARE_GROUP not in ran["share-groups-list-after"].out.split()
