"""Kafka's own command-line tools run against Apache Kafka and against minibroker: the same output.

The same data is made on both brokers by real clients (confluent-kafka: a topic, idempotent and
transactional records, a group's committed offsets, a transaction left open; over the wire, an empty streams
group with committed offsets), then Kafka 4.3.1's tools (from
the reference install's jars) run against each broker: all of them in one JVM per broker
(tests/differential/clients/ToolRunner.java; a JVM start costs seconds on a small machine), both JVMs at once.
The read-only tools run first; the tools that change state (create, alter, reset, abort, delete) follow, each
after every tool that reads what it changes, in the same order on both brokers, so both stay comparable.
Each tool's exit code, stdout and stderr are parsed into fields (a line per API, per config, per partition,
per table row), normalised and compared with compare.differences.

Normalisation (what two correct brokers may choose differently): the run's unique names become ${topic},
${group}, ${txn}, ${user}; each broker's address becomes <broker>, its node id <node>; topic ids, producer ids,
timestamps near now, transaction durations and the features epoch (Kafka's is its metadata log offset)
become placeholders; the log directory's path becomes <log dir>; partitions of log-dirs are sorted (Kafka
fills them from a hash map); stack trace lines are dropped (they name the runner's own frames). A listing of
every group or topic of the cluster keeps only this run's (the shared reference holds other runs').

A difference fails unless tests/differential/ledger.json has an entry for scenario `cli:<tool>`, step
"output" (or "*"), at the difference's path; an entry that matches nothing fails, as for the wire scenarios.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from minibroker.testing.process import BrokerProcess, start_broker
from tests.reference.launcher import ONE_NODE, ReferenceUnavailable, jar_dir

from .compare import differences, judge, load_ledger

pytestmark = [pytest.mark.reference, pytest.mark.timeout(600)]

CLIENTS = Path(__file__).resolve().parent / "clients"
RUNNER_SOURCE = CLIENTS / "ToolRunner.java"
TOOLS_LOG4J2 = CLIENTS / "tools-log4j2.properties"
COMMAND_CONFIG = CLIENTS / "tools-command.properties"
TOOLS_TIMEOUT_S = 400.0  # both JVMs, every tool: 80 s on a quiet 2-core machine, 160 s at load 20
#: JVM options for short-lived tools: quick start-up, little memory; ToolRunner runs the shutdown hooks a tool
#: adds when it ends, which it finds in java.lang.
JVM_OPTS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx512m", "--add-opens=java.base/java.lang=ALL-UNNAMED")
TIMESTAMP_TOLERANCE_MS = 10 * 60 * 1000
NODE_FIELDS = frozenset({"Leader", "Replicas", "Isr", "Coordinator", "CoordinatorId", "broker", "node"})
_STACK_FRAME = re.compile(r"^\s+(at |\.\.\. \d+ more)")


@dataclass(frozen=True)
class Names:
    """This run's unique names, the same on both brokers."""

    topic: str
    group: str
    txn: str
    user: str

    @classmethod
    def fresh(cls) -> Names:
        run = uuid.uuid4().hex[:8]
        return cls(f"cli-topic-{run}", f"cli-group-{run}", f"cli-txn-{run}", f"cli-user-{run}")

    @property
    def open_txn(self) -> str:
        """The transactional id left open on partition 2 for find-hanging and abort."""
        return self.txn + "-open"

    @property
    def streams_group(self) -> str:
        """A streams group (KIP-1071) reading the topic, empty, with committed offsets (`make_streams_group`)."""
        return self.group + "-streams"

    @property
    def offsets_file(self) -> Path:
        """kafka-delete-records' --offset-json-file: partition 1 up to offset 2 (written by `make_data`)."""
        return Path(tempfile.gettempdir()) / f"{self.topic}-delete-records.json"

    def placeholders(self) -> dict[str, str]:
        return {self.topic: "${topic}", self.group: "${group}", self.txn: "${txn}", self.user: "${user}"}


@dataclass(frozen=True)
class Tool:
    """One command: the scenario name the ledger knows it by, its main class and its arguments."""

    name: str
    main: str
    args: Callable[[str, int, Names], list[str]]  # (bootstrap, node id, names) -> arguments
    parse: Callable[[str], dict[str, Any]]
    #: The answer lists every group of the cluster: keep only this run's (the shared Kafka has others').
    this_run_only: bool = False
    #: It reads what a tool before it changed: a pattern its output shows once the change is seen, and ToolRunner
    #: runs it again (bounded) until it does, as Kafka's broker applies a change from its metadata log a moment
    #: after the controller acknowledged it. A broker that never shows it prints its last run, which is compared.
    settled: Callable[[Names], str] | None = None


@dataclass(frozen=True)
class Output:
    exit: int
    out: str
    err: str


# ---- parsing: a tool's text into fields keyed so that one extra line does not shift every other ----

def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not _STACK_FRAME.match(line)]


def parse_api_versions(text: str) -> dict[str, Any]:
    """`host:port (id: N rack: ...) -> (` then one `Name(key): range [usable: v]` line per API."""
    fields: dict[str, Any] = {}
    for line in _lines(text):
        line = line.strip().rstrip(",")
        match = re.match(r"^(\S+\(\d+\)): (.*)$", line)
        if match:
            fields[match.group(1)] = match.group(2)
        elif line != ")":
            fields["broker"] = line
    return fields


def parse_features(text: str) -> dict[str, Any]:
    """`Feature: name  SupportedMinVersion: a  SupportedMaxVersion: b  FinalizedVersionLevel: c  Epoch: e`."""
    fields: dict[str, Any] = {}
    for line in _lines(text):
        pairs = dict(re.findall(r"(\w+): (\S+)", line))
        fields[pairs.pop("Feature", line)] = pairs
    return fields


def _tab_fields(line: str) -> dict[str, str]:
    return {key.strip(): value.strip() for key, _, value in (part.partition(":") for part in line.split("\t") if part)}


def parse_topic_describe(text: str) -> dict[str, Any]:
    """A topic line (its non-default Configs as a map), then one line per partition."""
    fields: dict[str, Any] = {}
    for line in _lines(text):
        if line.startswith("\t"):
            partition = _tab_fields(line.strip())
            fields[f"partition {partition.get('Partition')}"] = partition
        elif line.startswith("Topic:"):
            topic: dict[str, Any] = _tab_fields(line)
            topic["Configs"] = dict(item.split("=", 1) for item in topic.get("Configs", "").split(",") if item)
            fields["topic"] = topic
        else:
            fields.setdefault("other", []).append(line)
    return fields


def parse_configs(text: str) -> dict[str, Any]:
    """`All configs for ... are:` then `  name=value sensitive=... synonyms={...}` per config."""
    fields: dict[str, Any] = {}
    for line in _lines(text):
        match = re.match(r"^  ([^=\s]+)=(.*) sensitive=(\w+) synonyms=\{(.*)\}$", line)
        if match:
            name, value, sensitive, synonyms = match.groups()
            fields[name] = {"value": value, "sensitive": sensitive,
                            "synonyms": [s for s in synonyms.split(", ") if s]}
        else:
            fields.setdefault("heading", []).append(line)
    return fields


def parse_table(text: str, key_columns: tuple[str, ...] = ()) -> dict[str, Any]:
    """Lines before a table, its heading (the first line of three or more cells, split on tabs or else on
    spaces) and one entry per row, keyed by `key_columns` or by the row's number."""
    fields: dict[str, Any] = {}
    header: list[str] | None = None
    for index, line in enumerate(_lines(text)):
        cells = [cell.strip() for cell in (line.split("\t") if "\t" in line else line.split())]
        cells = [cell for cell in cells if cell]
        if header is None:
            if len(cells) >= 3:
                header = cells
            else:
                fields[f"line {index}"] = line.strip()
            continue
        row = dict(zip(header, cells, strict=False))
        key = " ".join(row.get(column, "?") for column in key_columns) if key_columns else str(len(fields))
        fields[f"row {key}"] = row
    return fields


def parse_message(text: str) -> dict[str, Any]:
    """Free text: its lines without stack frames."""
    return {f"line {index}": line for index, line in enumerate(_lines(text))}


def parse_offsets(text: str) -> dict[str, Any]:
    """`topic:partition:offset` per line."""
    return {line.rsplit(":", 1)[0]: line.rsplit(":", 1)[1] for line in _lines(text) if line.count(":") >= 2}


def parse_log_dirs(text: str) -> dict[str, Any]:
    """Two progress lines, then the JSON answer (partitions sorted: Kafka fills them from a hash map)."""
    fields: dict[str, Any] = {}
    for index, line in enumerate(_lines(text)):
        if line.startswith("{"):
            answer = json.loads(line)
            for broker in answer.get("brokers", []):
                for log_dir in broker.get("logDirs", []):
                    log_dir["logDir"] = "<log dir>"  # where each broker keeps its data is its deployment's choice
                    log_dir["partitions"] = {p.pop("partition"): p for p in log_dir.get("partitions", [])}
            fields["answer"] = answer
        else:
            fields[f"line {index}"] = line
    return fields


def parse_names(text: str) -> dict[str, Any]:
    """One name per line (consumer-groups --list): keyed by the name, as the order is the broker's map's."""
    return {f"name {line.strip()}": line.strip() for line in _lines(text)}


def parse_sorted_lines(text: str) -> dict[str, Any]:
    """Lines keyed by themselves: the console consumer prints partitions in the order its fetches returned."""
    return {line: True for line in _lines(text)}


def _api_versions(bootstrap: str, node: int, names: Names) -> list[str]:
    """With a longer request timeout: the tool's own is 5 s, which a cold JVM on a loaded machine exceeded
    against Kafka ("Request METADATA failed on brokers")."""
    return ["--bootstrap-server", bootstrap, "--command-config", str(COMMAND_CONFIG)]


def _entity(bootstrap: str, entity_type: str, name: str, *command: str) -> list[str]:
    return ["--bootstrap-server", bootstrap, *command, "--entity-type", entity_type, "--entity-name", name]


CONFIGS = "kafka.admin.ConfigCommand"
TOPICS = "org.apache.kafka.tools.TopicCommand"
ACLS = "org.apache.kafka.tools.AclCommand"
GROUPS = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
TRANSACTIONS = "org.apache.kafka.tools.TransactionsCommand"
SHARE_GROUPS = "org.apache.kafka.tools.consumer.group.ShareGroupCommand"
STREAMS_GROUPS = "org.apache.kafka.tools.streams.StreamsGroupCommand"
ELECTION = "org.apache.kafka.tools.LeaderElectionCommand"
#: Partition 2 holds two committed records and their marker (offsets 0-2): the open transaction starts at 3.
OPEN_TXN_START_OFFSET = 3


TOOLS: list[Tool] = [
    Tool("cli:kafka-broker-api-versions", "org.apache.kafka.tools.BrokerApiVersionsCommand", _api_versions,
         parse_api_versions),
    Tool("cli:kafka-features-describe", "org.apache.kafka.tools.FeatureCommand",
         lambda b, n, names: ["--bootstrap-server", b, "describe"], parse_features),
    Tool("cli:kafka-topics-describe", "org.apache.kafka.tools.TopicCommand",
         lambda b, n, names: ["--bootstrap-server", b, "--describe", "--topic", names.topic], parse_topic_describe),
    Tool("cli:kafka-topics-describe-missing", "org.apache.kafka.tools.TopicCommand",
         lambda b, n, names: ["--bootstrap-server", b, "--describe", "--topic", names.topic + "-missing"],
         parse_message),
    Tool("cli:kafka-configs-describe-all-topic", "kafka.admin.ConfigCommand",
         lambda b, n, names: ["--bootstrap-server", b, "--describe", "--all", "--entity-type", "topics",
                              "--entity-name", names.topic], parse_configs),
    Tool("cli:kafka-configs-describe-all-broker", "kafka.admin.ConfigCommand",
         lambda b, n, names: ["--bootstrap-server", b, "--describe", "--all", "--entity-type", "brokers",
                              "--entity-name", str(n)], parse_configs),
    Tool("cli:kafka-consumer-groups-describe", "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
         lambda b, n, names: ["--bootstrap-server", b, "--describe", "--group", names.group],
         lambda text: parse_table(text, ("TOPIC", "PARTITION"))),
    # share groups (KIP-932), read only: no share group of this run exists (the share tools that change state
    # run against minibroker in tests/integration/test_kafka_tools.py)
    Tool("cli:kafka-share-groups-list", SHARE_GROUPS, lambda b, n, names: ["--bootstrap-server", b, "--list"],
         parse_names, this_run_only=True),
    Tool("cli:kafka-share-groups-describe-missing", SHARE_GROUPS,
         lambda b, n, names: ["--bootstrap-server", b, "--describe", "--group", names.group + "-share"],
         parse_message),
    Tool("cli:kafka-share-groups-delete-missing", SHARE_GROUPS,
         lambda b, n, names: ["--bootstrap-server", b, "--delete", "--group", names.group + "-share"],
         parse_message),
    # streams groups (KIP-1071), read only: the empty streams group of `make_streams_group`
    Tool("cli:kafka-streams-groups-list", STREAMS_GROUPS, lambda b, n, names: ["--bootstrap-server", b, "--list"],
         parse_names, this_run_only=True),
    Tool("cli:kafka-streams-groups-describe", STREAMS_GROUPS,
         lambda b, n, names: ["--bootstrap-server", b, "--describe", "--group", names.streams_group],
         lambda text: parse_table(text, ("TOPIC", "PARTITION"))),
    Tool("cli:kafka-transactions-list", "org.apache.kafka.tools.TransactionsCommand",
         lambda b, n, names: ["--bootstrap-server", b, "list", "--transactional-id-pattern", names.txn],
         parse_table),
    Tool("cli:kafka-transactions-describe", "org.apache.kafka.tools.TransactionsCommand",
         lambda b, n, names: ["--bootstrap-server", b, "describe", "--transactional-id", names.txn], parse_table),
    Tool("cli:kafka-transactions-describe-producers", "org.apache.kafka.tools.TransactionsCommand",
         lambda b, n, names: ["--bootstrap-server", b, "describe-producers", "--topic", names.topic,
                              "--partition", "0"], parse_table),
    Tool("cli:kafka-acls-list", "org.apache.kafka.tools.AclCommand",
         lambda b, n, names: ["--bootstrap-server", b, "--list"], parse_message),
    Tool("cli:kafka-get-offsets", "org.apache.kafka.tools.GetOffsetShell",
         lambda b, n, names: ["--bootstrap-server", b, "--topic", names.topic], parse_offsets),
    Tool("cli:kafka-get-offsets-earliest", "org.apache.kafka.tools.GetOffsetShell",
         lambda b, n, names: ["--bootstrap-server", b, "--topic", names.topic, "--time", "-2"], parse_offsets),
    Tool("cli:kafka-log-dirs-describe", "org.apache.kafka.tools.LogDirsCommand",
         lambda b, n, names: ["--bootstrap-server", b, "--describe", "--topic-list", names.topic], parse_log_dirs),
    # ---- from here on tools change state: each runs after every tool that reads what it changes ----
    Tool("cli:kafka-topics-create", TOPICS,
         lambda b, n, names: ["--bootstrap-server", b, "--create", "--topic", names.topic + "-2", "--partitions", "2",
                              "--replication-factor", "1", "--config", "retention.ms=600000"], parse_message),
    Tool("cli:kafka-topics-create-existing", TOPICS,
         lambda b, n, names: ["--bootstrap-server", b, "--create", "--topic", names.topic + "-2", "--partitions", "2"],
         parse_message),
    Tool("cli:kafka-topics-alter-partitions", TOPICS,
         lambda b, n, names: ["--bootstrap-server", b, "--alter", "--topic", names.topic + "-2", "--partitions", "4"],
         parse_message),
    Tool("cli:kafka-topics-alter-fewer-partitions", TOPICS,
         lambda b, n, names: ["--bootstrap-server", b, "--alter", "--topic", names.topic + "-2", "--partitions", "1"],
         parse_message),
    Tool("cli:kafka-topics-list", TOPICS, lambda b, n, names: ["--bootstrap-server", b, "--list"], parse_names,
         this_run_only=True, settled=lambda names: re.escape(names.topic + "-2")),
    Tool("cli:kafka-topics-describe-created", TOPICS,
         lambda b, n, names: ["--bootstrap-server", b, "--describe", "--topic", names.topic + "-2"],
         parse_topic_describe, settled=lambda names: r"PartitionCount: 4\t"),
    Tool("cli:kafka-configs-alter-topic", CONFIGS,
         lambda b, n, names: _entity(b, "topics", names.topic + "-2", "--alter", "--add-config",
                                     "max.message.bytes=2000000", "--delete-config", "retention.ms"), parse_message),
    Tool("cli:kafka-configs-alter-topic-unknown-config", CONFIGS,
         lambda b, n, names: _entity(b, "topics", names.topic + "-2", "--alter", "--add-config", "no.such.config=1"),
         parse_message),
    Tool("cli:kafka-configs-describe-topic", CONFIGS,
         lambda b, n, names: _entity(b, "topics", names.topic + "-2", "--describe"), parse_configs,
         settled=lambda names: r"max\.message\.bytes=2000000"),
    Tool("cli:kafka-configs-alter-broker-unknown-config", CONFIGS,
         lambda b, n, names: _entity(b, "brokers", str(n), "--alter", "--add-config", "no.such.config=1"),
         parse_message),
    # Kafka keeps the unknown name as a dynamic config: take it away, so that a reference Kafka reused by a later run
    # (MINIBROKER_KAFKA_REFERENCE) describes its broker as this run found it
    Tool("cli:kafka-configs-alter-broker-delete-unknown-config", CONFIGS,
         lambda b, n, names: _entity(b, "brokers", str(n), "--alter", "--delete-config", "no.such.config"),
         parse_message),
    Tool("cli:kafka-configs-alter-broker-read-only-config", CONFIGS,
         lambda b, n, names: _entity(b, "brokers", str(n), "--alter", "--add-config", "broker.rack=r1"),
         parse_message),
    Tool("cli:kafka-topics-delete", TOPICS,
         lambda b, n, names: ["--bootstrap-server", b, "--delete", "--topic", names.topic + "-2"], parse_message),
    Tool("cli:kafka-acls-add", ACLS,
         lambda b, n, names: ["--bootstrap-server", b, "--add", "--allow-principal", f"User:{names.user}",
                              "--operation", "Read", "--topic", names.topic], parse_message),
    Tool("cli:kafka-acls-list-topic", ACLS,
         lambda b, n, names: ["--bootstrap-server", b, "--list", "--topic", names.topic], parse_message,
         settled=lambda names: re.escape(names.user)),
    Tool("cli:kafka-acls-remove", ACLS,
         lambda b, n, names: ["--bootstrap-server", b, "--remove", "--allow-principal", f"User:{names.user}",
                              "--operation", "Read", "--topic", names.topic, "--force"], parse_message),
    Tool("cli:kafka-configs-describe-user", CONFIGS, lambda b, n, names: _entity(b, "users", names.user, "--describe"),
         parse_message),
    Tool("cli:kafka-configs-alter-user-scram", CONFIGS,
         lambda b, n, names: _entity(b, "users", names.user, "--alter", "--add-config",
                                     "SCRAM-SHA-256=[iterations=8192,password=cli-secret]"), parse_message),
    Tool("cli:kafka-configs-alter-user-quota", CONFIGS,
         lambda b, n, names: _entity(b, "users", names.user, "--alter", "--add-config", "producer_byte_rate=1048576"),
         parse_message),
    Tool("cli:kafka-configs-describe-user-after", CONFIGS,
         lambda b, n, names: _entity(b, "users", names.user, "--describe"), parse_message,
         settled=lambda names: r"(?s)producer_byte_rate.*SCRAM-SHA-256"),
    Tool("cli:kafka-configs-describe-group", CONFIGS,
         lambda b, n, names: _entity(b, "groups", names.group, "--describe"), parse_configs),
    Tool("cli:kafka-configs-alter-group", CONFIGS,
         lambda b, n, names: _entity(b, "groups", names.group, "--alter", "--add-config",
                                     "consumer.session.timeout.ms=50000"), parse_message),
    Tool("cli:kafka-configs-alter-group-unknown-config", CONFIGS,
         lambda b, n, names: _entity(b, "groups", names.group, "--alter", "--add-config", "retention.ms=1"),
         parse_message),
    Tool("cli:kafka-configs-describe-all-group", CONFIGS,
         lambda b, n, names: _entity(b, "groups", names.group, "--describe", "--all"), parse_configs,
         settled=lambda names: r"consumer\.session\.timeout\.ms=50000"),
    # and take the group's config away again: Kafka keeps a group's configs after the group is deleted, and a
    # scenario run later on the same reference (list_config_resources) expects no group config resources
    Tool("cli:kafka-configs-alter-group-delete-config", CONFIGS,
         lambda b, n, names: _entity(b, "groups", names.group, "--alter", "--delete-config",
                                     "consumer.session.timeout.ms"), parse_message),
    Tool("cli:kafka-consumer-groups-list", GROUPS, lambda b, n, names: ["--bootstrap-server", b, "--list"],
         parse_names, this_run_only=True),
    Tool("cli:kafka-consumer-groups-list-state", GROUPS,
         lambda b, n, names: ["--bootstrap-server", b, "--list", "--state", "--type"],
         lambda text: parse_table(text, ("GROUP",)), this_run_only=True),
    Tool("cli:kafka-groups-list", "org.apache.kafka.tools.GroupsCommand",
         lambda b, n, names: ["--bootstrap-server", b, "--list"], lambda text: parse_table(text, ("GROUP",)),
         this_run_only=True),
    Tool("cli:kafka-console-consumer", "org.apache.kafka.tools.consumer.ConsoleConsumer",
         lambda b, n, names: ["--bootstrap-server", b, "--topic", names.topic, "--from-beginning", "--max-messages",
                              "10", "--group", names.group + "-console", "--timeout-ms", "60000",
                              "--isolation-level", "read_committed",
                              *(arg for prop in ("print.key", "print.partition", "print.offset")
                                for arg in ("--formatter-property", f"{prop}=true"))], parse_sorted_lines),
    Tool("cli:kafka-consumer-groups-reset-offsets-dry-run", GROUPS,
         lambda b, n, names: ["--bootstrap-server", b, "--reset-offsets", "--group", names.group, "--topic",
                              names.topic, "--to-earliest", "--dry-run"],
         lambda text: parse_table(text, ("TOPIC", "PARTITION"))),
    Tool("cli:kafka-consumer-groups-reset-offsets-execute", GROUPS,
         lambda b, n, names: ["--bootstrap-server", b, "--reset-offsets", "--group", names.group, "--topic",
                              names.topic + ":0", "--to-offset", "2", "--execute"],
         lambda text: parse_table(text, ("TOPIC", "PARTITION"))),
    Tool("cli:kafka-consumer-groups-describe-after-reset", GROUPS,
         lambda b, n, names: ["--bootstrap-server", b, "--describe", "--group", names.group],
         lambda text: parse_table(text, ("TOPIC", "PARTITION"))),
    Tool("cli:kafka-transactions-find-hanging", TRANSACTIONS,
         lambda b, n, names: ["--bootstrap-server", b, "find-hanging", "--topic", names.topic,
                              "--max-transaction-timeout", "0"], parse_table),
    Tool("cli:kafka-transactions-abort", TRANSACTIONS,
         lambda b, n, names: ["--bootstrap-server", b, "abort", "--topic", names.topic, "--partition", "2",
                              "--start-offset", str(OPEN_TXN_START_OFFSET)], parse_message),
    Tool("cli:kafka-transactions-describe-producers-after-abort", TRANSACTIONS,
         lambda b, n, names: ["--bootstrap-server", b, "describe-producers", "--topic", names.topic,
                              "--partition", "2"], parse_table),
    Tool("cli:kafka-delete-records", "org.apache.kafka.tools.DeleteRecordsCommand",
         lambda b, n, names: ["--bootstrap-server", b, "--offset-json-file", str(names.offsets_file)], parse_message),
    Tool("cli:kafka-get-offsets-earliest-after-delete", "org.apache.kafka.tools.GetOffsetShell",
         lambda b, n, names: ["--bootstrap-server", b, "--topic", names.topic, "--time", "-2"], parse_offsets),
    Tool("cli:kafka-leader-election-preferred", ELECTION,
         lambda b, n, names: ["--bootstrap-server", b, "--election-type", "preferred", "--topic", names.topic,
                              "--partition", "0"], parse_message),
    Tool("cli:kafka-leader-election-unclean", ELECTION,
         lambda b, n, names: ["--bootstrap-server", b, "--election-type", "unclean", "--topic", names.topic,
                              "--partition", "1"], parse_message),
    Tool("cli:kafka-consumer-groups-delete", GROUPS,
         lambda b, n, names: ["--bootstrap-server", b, "--delete", "--group", names.group], parse_message),
    Tool("cli:kafka-consumer-groups-delete-missing", GROUPS,
         lambda b, n, names: ["--bootstrap-server", b, "--delete", "--group", names.group], parse_message),
    # the streams group's offsets: reset to the earliest (dry run, then executed, then read back with --to-current),
    # deleted (by topic, then all), then the group deleted
    Tool("cli:kafka-streams-groups-reset-offsets-dry-run", STREAMS_GROUPS,
         lambda b, n, names: ["--bootstrap-server", b, "--reset-offsets", "--group", names.streams_group,
                              "--input-topic", names.topic, "--to-earliest", "--dry-run"],
         lambda text: parse_table(text, ("TOPIC", "PARTITION"))),
    Tool("cli:kafka-streams-groups-reset-offsets-execute", STREAMS_GROUPS,
         lambda b, n, names: ["--bootstrap-server", b, "--reset-offsets", "--group", names.streams_group,
                              "--input-topic", names.topic, "--to-earliest", "--execute"],
         lambda text: parse_table(text, ("TOPIC", "PARTITION"))),
    Tool("cli:kafka-streams-groups-reset-offsets-to-current", STREAMS_GROUPS,  # the offsets the reset committed
         lambda b, n, names: ["--bootstrap-server", b, "--reset-offsets", "--group", names.streams_group,
                              "--input-topic", names.topic, "--to-current", "--dry-run"],
         lambda text: parse_table(text, ("TOPIC", "PARTITION"))),
    Tool("cli:kafka-streams-groups-delete-offsets", STREAMS_GROUPS,
         lambda b, n, names: ["--bootstrap-server", b, "--delete-offsets", "--group", names.streams_group,
                              "--input-topic", names.topic], lambda text: parse_table(text, ("TOPIC", "PARTITION"))),
    Tool("cli:kafka-streams-groups-delete-offsets-all-input-topics", STREAMS_GROUPS,
         lambda b, n, names: ["--bootstrap-server", b, "--delete-offsets", "--group", names.streams_group,
                              "--all-input-topics"], lambda text: parse_table(text, ("TOPIC", "PARTITION"))),
    Tool("cli:kafka-streams-groups-delete", STREAMS_GROUPS,
         lambda b, n, names: ["--bootstrap-server", b, "--delete", "--group", names.streams_group], parse_message),
]
#: Differences known and owned elsewhere, each a strict xfail until its owner's change lands.
PENDING: dict[str, str] = {}


# ---- normalisation ----

class ToolNormaliser:
    """One broker's normalisation: its address, node id and the ids it chose, named logically."""

    def __init__(self, bootstrap: str, node_id: int, names: Names, now_ms: int) -> None:
        self.bootstrap = bootstrap
        self.node_id = str(node_id)
        self.names = names
        self.now_ms = now_ms
        self._logical: dict[tuple[str, str], str] = {}

    def logical(self, kind: str, value: str) -> str:
        key = (kind, value)
        if key not in self._logical:
            self._logical[key] = f"<{kind}:{sum(1 for k, _ in self._logical if k == kind)}>"
        return self._logical[key]

    def text(self, value: str) -> str:
        value = value.replace(self.bootstrap, "<broker>")
        value = re.sub(r"\b(broker\.id|node\.id)=" + self.node_id + r"\b", r"\1=<node>", value)
        value = re.sub(r"\(id: \d+ ", "(id: <node> ", value)
        value = re.sub(r"\bbrokers? " + self.node_id + r"\b", "broker <node>", value)
        value = re.sub(r"--entity-name " + self.node_id + r"\b", "--entity-name <node>", value)  # a tool's args echoed
        for actual, placeholder in self.names.placeholders().items():
            value = value.replace(actual, placeholder)
        return value

    def walk(self, value: Any, name: str = "") -> Any:
        if isinstance(value, dict):
            if name in ("broker.id", "node.id"):  # a config holding the node id: its value is one
                value = {key: "<node>" if key == "value" and item == self.node_id else item
                         for key, item in value.items()}
            return {self.text(key): self.walk(item, key) for key, item in value.items()}
        if isinstance(value, list):
            return [self.walk(item, name) for item in value]
        if isinstance(value, bool) or value is None:
            return value
        text = str(value) if not isinstance(value, str) else value
        if name in NODE_FIELDS and text == self.node_id:
            return "<node>"
        if name == "TopicId":
            return self.logical("topic-id", text)
        if name == "ProducerId" and text.isdigit():
            return self.logical("producer", text)
        if name in ("LastTimestamp", "CurrentTransactionStartTimeMs") and text.lstrip("-").isdigit() \
                and abs(int(text) - self.now_ms) <= TIMESTAMP_TOLERANCE_MS:
            return "<now>"
        if name == "TransactionDurationMs" and text.isdigit() and int(text) <= TIMESTAMP_TOLERANCE_MS:
            return "<duration>"
        if name == "Epoch" and text.isdigit():
            return "<metadata offset>"
        return self.text(text) if isinstance(value, str) else value

    def output(self, tool: Tool, output: Output) -> dict[str, Any]:
        stdout = self.walk(tool.parse(output.out))
        if tool.this_run_only:  # a row or name of another run's group has no placeholder
            stdout = {key: value for key, value in stdout.items()
                      if not key.startswith(("row ", "name ")) or "${" in key}
        return {"exit": output.exit, "stdout": stdout, "stderr": self.walk(parse_message(output.err))}


# ---- running ----

def _build_runner(directory: Path, jars: Path) -> str:
    """ToolRunner compiled against kafka-clients only (Exit lives there; the whole classpath is slow to scan)."""
    clients = next(jars.glob("kafka-clients-*.jar"))
    built = subprocess.run(["javac", "-encoding", "UTF-8", "-cp", str(clients), "-d", str(directory),
                            str(RUNNER_SOURCE)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, f"javac ToolRunner failed:\n{built.stdout}\n{built.stderr}"
    return f"{directory}{os.pathsep}{jars}/*"


def run_tools(classpath: str, bootstrap: str, node_id: int, names: Names) -> list[Output]:
    """Every tool of TOOLS against one broker, in one JVM; their outputs in order."""
    args: list[str] = []
    for tool in TOOLS:
        settled = ["--until", tool.settled(names)] if tool.settled else []
        args += [*settled, tool.main, *tool.args(bootstrap, node_id, names), ";"]
    done = subprocess.run(["java", *JVM_OPTS, "-cp", classpath, f"-Dlog4j2.configurationFile={TOOLS_LOG4J2}",
                           "ToolRunner", *args], capture_output=True, text=True, timeout=TOOLS_TIMEOUT_S,
                          stdin=subprocess.DEVNULL)
    results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert len(results) == len(TOOLS), f"ToolRunner ended early ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return [Output(r["exit"], r["out"], r["err"]) for r in results]


def make_data(bootstrap: str, names: Names) -> None:
    """The same data on one broker, by real clients: a topic with two configs, records from an idempotent
    producer on partitions 0 and 1, a committed transaction on partition 2, a group's committed offsets."""
    from confluent_kafka import Consumer, Producer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    created = admin.create_topics([NewTopic(names.topic, 3, 1,
                                            config={"retention.ms": "3600000", "cleanup.policy": "delete"})])
    created[names.topic].result(60)
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for index in range(5):
        producer.produce(names.topic, b"v%d" % index, b"k", partition=0)
    for index in range(3):
        producer.produce(names.topic, b"w%d" % index, partition=1)
    assert producer.flush(60) == 0
    transactional = Producer({"bootstrap.servers": bootstrap, "transactional.id": names.txn})
    transactional.init_transactions(60)
    transactional.begin_transaction()
    for index in range(2):
        transactional.produce(names.topic, b"t%d" % index, partition=2)
    transactional.commit_transaction(60)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": names.group, "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(names.topic, 0, 0), TopicPartition(names.topic, 1, 0)])
        seen, deadline = 0, time.monotonic() + 60
        while seen < 8 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and not message.error():
                seen += 1
        assert seen == 8, f"read {seen} of 8 records from {bootstrap}"
        commit_when_the_coordinator_is_ready(consumer)
    finally:
        consumer.close()
    names.offsets_file.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": names.topic, "partition": 1, "offset": 2}]}))


def make_streams_group(bootstrap: str, names: Names) -> None:
    """An empty streams group reading the topic: a member joins with a one-subtopology topology (no internal topics)
    and leaves, then the offsets of its three partitions are committed as an admin commits them (no member, epoch -1),
    over the wire as no client of this suite speaks KIP-1071."""
    from minibroker.protocol.messages import (
        FindCoordinatorRequest,
        OffsetCommitRequest,
        StreamsGroupHeartbeatRequest,
    )
    from minibroker.testing.wire import WireClient

    heartbeat = StreamsGroupHeartbeatRequest
    topology = heartbeat.Topology(epoch=0, subtopologies=[heartbeat.Topology.Subtopology(
        subtopology_id="0", source_topics=[names.topic], source_topic_regex=[], state_changelog_topics=[],
        repartition_sink_topics=[], repartition_source_topics=[], copartition_groups=[])])
    fields = dict(group_id=names.streams_group, member_id="CliToolsStreamsMember0", endpoint_information_epoch=0,
                  instance_id=None, rack_id=None, user_endpoint=None, client_tags=None, task_offsets=None,
                  task_end_offsets=None, shutdown_application=False)
    join = heartbeat(member_epoch=0, rebalance_timeout_ms=30000, topology=topology, active_tasks=[], standby_tasks=[],
                     warmup_tasks=[], process_id="c0a1b2c3-d4e5-4f60-8a1b-2c3d4e5f6a7b", **fields)
    leave = heartbeat(member_epoch=-1, rebalance_timeout_ms=-1, topology=None, active_tasks=None, standby_tasks=None,
                      warmup_tasks=None, process_id=None, **fields)
    _Topic = OffsetCommitRequest.OffsetCommitRequestTopic
    commit = OffsetCommitRequest(
        group_id=names.streams_group, generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
        retention_time_ms=-1, topics=[_Topic(name=names.topic, partitions=[
            _Topic.OffsetCommitRequestPartition(partition_index=index, committed_offset=offset,
                                                committed_leader_epoch=-1, committed_metadata="")
            for index, offset in ((0, 3), (1, 2), (2, 1))])])
    host, port = bootstrap.rsplit(":", 1)
    not_ready = {14, 15, 16}  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
    deadline = time.monotonic() + 60
    with WireClient(host, int(port)) as wire:
        while True:  # a freshly started Kafka's coordinator loads a moment after FindCoordinator names it
            found = wire.request(FindCoordinatorRequest(key=names.streams_group, key_type=0), 1)
            joined = wire.request(join, 0) if found.error_code == 0 else found
            if joined.error_code not in not_ready or time.monotonic() >= deadline:
                break
            time.sleep(0.5)  # bounded by the deadline
        assert joined.error_code == 0, f"streams join on {bootstrap}: {joined}"
        left = wire.request(leave, 0)
        assert left.error_code == 0, f"streams leave on {bootstrap}: {left}"
        committed = wire.request(commit, 9)
        codes = [p.error_code for t in committed.topics for p in t.partitions]
        assert codes == [0, 0, 0], f"streams group commit on {bootstrap}: {committed}"


def open_transaction(bootstrap: str, names: Names) -> Any:
    """A transaction left open on partition 2 (one record at OPEN_TXN_START_OFFSET) for find-hanging and abort;
    the caller holds the producer until the tools ran. Its timeout is Kafka's largest, so that no coordinator
    aborts it while the tools run."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": names.open_txn,
                         "transaction.timeout.ms": 900000})
    producer.init_transactions(60)
    producer.begin_transaction()
    producer.produce(names.topic, b"open", partition=2)
    assert producer.flush(60) == 0
    return producer


def commit_when_the_coordinator_is_ready(consumer: Any, timeout_s: float = 60.0) -> None:
    """A synchronous commit, repeated (bounded) while the group coordinator loads, as a freshly started
    Kafka's answers NOT_COORDINATOR to its first commit."""
    from confluent_kafka import KafkaError, KafkaException

    not_ready = (KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
                 KafkaError.COORDINATOR_NOT_AVAILABLE)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            consumer.commit(asynchronous=False)
            return
        except KafkaException as exc:
            if exc.args[0].code() not in not_ready or time.monotonic() >= deadline:
                raise
            time.sleep(0.5)  # bounded by the deadline: the coordinator's load is Kafka's own asynchronous step


@dataclass
class Compared:
    names: Names
    kafka: list[dict[str, Any]]
    minibroker: list[dict[str, Any]]
    seconds: float


@pytest.fixture(scope="module")
def minibroker_process(kafka_reference: Any) -> Iterator[BrokerProcess]:
    """A minibroker process with the reference's configs and its one-node ones (static on both), but for the
    share coordinator's: minibroker serves no share groups and accepts only Kafka's defaults there."""
    one_node = {key: value for key, value in ONE_NODE.items() if not key.startswith("share.coordinator.")}
    configs = {**one_node, **kafka_reference.config}
    process = start_broker(*(f"{key}={value}" for key, value in configs.items()))
    yield process
    process.stop()


@pytest.fixture(scope="module")
def compared(kafka_reference: Any, minibroker_process: BrokerProcess) -> Compared:
    """Every tool's normalised output from both brokers (made once for the module)."""
    try:
        jars = jar_dir(kafka_reference.version)
    except ReferenceUnavailable as exc:
        pytest.skip(str(exc))
    names = Names.fresh()
    brokers = [(kafka_reference.bootstrap_servers, 1), (minibroker_process.bootstrap_servers, 0)]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tool-runner-") as build, ThreadPoolExecutor(2) as pool:
        compiling = pool.submit(_build_runner, Path(build), jars)
        for bootstrap, _ in brokers:
            make_data(bootstrap, names)
            make_streams_group(bootstrap, names)
        open_producers = [open_transaction(bootstrap, names) for bootstrap, _ in brokers]
        classpath = compiling.result()
        now_ms = int(time.time() * 1000)
        runs = [pool.submit(run_tools, classpath, bootstrap, node, names) for bootstrap, node in brokers]
        outputs = [run.result() for run in runs]
        del open_producers  # held until the tools ran
        names.offsets_file.unlink(missing_ok=True)
    normalised = [[ToolNormaliser(bootstrap, node, names, now_ms).output(tool, output)
                   for tool, output in zip(TOOLS, per_broker, strict=True)]
                  for (bootstrap, node), per_broker in zip(brokers, outputs, strict=True)]
    return Compared(names, normalised[0], normalised[1], time.monotonic() - started)


def _param(tool: Tool) -> Any:
    marks = []
    if tool.name in PENDING:
        marks.append(pytest.mark.xfail(reason=PENDING[tool.name], strict=True, raises=AssertionError))
    return pytest.param(tool, id=tool.name.removeprefix("cli:"), marks=marks)


@pytest.mark.parametrize("tool", [_param(tool) for tool in TOOLS])
def test_tool_prints_as_kafka(tool: Tool, compared: Compared, kafka_reference: Any) -> None:
    index = TOOLS.index(tool)
    found = {"output": differences(compared.minibroker[index], compared.kafka[index])}
    verdict = judge(tool.name, found, load_ledger())
    assert verdict.ok, (f"{tool.name} prints differently from Apache Kafka {kafka_reference.version} "
                        f"(tools and data took {compared.seconds:.0f} s):\n{verdict.report()}")
