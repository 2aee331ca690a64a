"""Go clients, from Go modules pinned in tests/clients/go: old sarama (1.22) and segmentio kafka-go (0.2) against a
node speaking as Kafka 3.9, and current ones (IBM sarama 1.61, kafka-go 0.4) against the `latest` profile.

The old clients send the versions KIP-896 removed from Kafka 4.0 without asking ApiVersions (sarama: Produce v0
by default, DescribeConfigs v0 always; kafka-go: Produce v2, Fetch v2, CreateTopics v0). A `latest` node refuses
them, as Kafka 4 does; a node speaking as 3.9 serves them as 3.9 did (Fetch v0-3 down-converted to message
formats 0 and 1). Each old-client test names the API versions it will send and first checks that the 3.9
profile serves them. The current clients negotiate versions with ApiVersions and run the idempotent and
transactional producer, read_committed consumers, groups and admin calls; franz-go 1.22 runs transactions
and an exactly-once copy with Transactions V2 on the `latest` node and V1 on the 3.9 one.

The programs are built from tests/clients/go/old and tests/clients/go/current, each a module with its own
go.mod and go.sum; `make test` (scripts/install-test-deps.sh) downloads the modules through the Go module
proxy and warms the build cache, so the tests build offline (GOPROXY=off, -mod=readonly).

The wire tests at the end check the magic 0/1 message sets of Produce v0-2 without Go: they are
converted to one magic 2 batch on append, as Kafka 3.9's LogValidator does.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import lz4.frame
import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from minibroker.apis import accepted_versions
from minibroker.apis.context import CloseConnection
from minibroker.core import log_validator
from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.config import BrokerConfig
from minibroker.protocol import compression, records
from minibroker.protocol.errors import ErrorCode, KafkaError
from minibroker.protocol.messages import (
    CreateTopicsRequest,
    DeleteTopicsRequest,
    DescribeConfigsRequest,
    ListOffsetsRequest,
    ProduceRequest,
)
from minibroker.testing.process import start_broker
from tests.apis.authz import NOW, call
from tests.helpers import unique_topic

ROOT = Path(__file__).resolve().parents[2]
GO_DIR = ROOT / "tests" / "clients" / "go"
PROFILE = "3.9"
NAMES = {0: "Produce", 1: "Fetch", 2: "ListOffsets", 3: "Metadata", 8: "OffsetCommit", 9: "OffsetFetch",
         10: "FindCoordinator", 11: "JoinGroup", 19: "CreateTopics", 20: "DeleteTopics", 22: "InitProducerId",
         32: "DescribeConfigs"}

# What each client sends (read from its source: sarama's *_request.go version choices, kafka-go's conn.go)
SARAMA_2_2_ADMIN = {3: 5, 19: 2, 20: 1, 32: 0}
SARAMA_2_2_CLIENT = {0: 3, 1: 4, 2: 1, 3: 5, 8: 2, 9: 1, 10: 0, 11: 1, 22: 0}
SARAMA_DEFAULT_PRODUCER = {0: 0, 3: 0}
SARAMA_0_10_PRODUCER = {0: 2, 3: 2}
SARAMA_DEFAULT_CONSUMER = {1: 0, 2: 0, 3: 0}
SARAMA_0_10_CONSUMER = {1: 3, 2: 1, 3: 2}
SARAMA_0_10_GROUP = {1: 3, 2: 1, 3: 2, 8: 2, 9: 1, 10: 0, 11: 1}  # OffsetCommit v2 (v1 without a retention)
KAFKA_GO_ADMIN = {3: 1, 19: 0, 20: 1}
KAFKA_GO_PRODUCER = {0: 2, 3: 1}
KAFKA_GO_GROUP = {1: 2, 2: 1, 3: 1, 8: 2, 9: 1, 10: 0, 11: 1}


def require(versions: dict[int, int], profile: str = PROFILE) -> None:
    """Fail, naming them, unless a node of `profile` accepts every (api key: version) the client will send."""
    accepted = accepted_versions(profile)
    missing = [f"{NAMES.get(key, key)} v{version}" for key, version in sorted(versions.items())
               if not (key in accepted and accepted[key][0] <= version <= accepted[key][1])]
    assert not missing, f"the {profile} profile does not serve {', '.join(missing)}"


# --- the Go programs -------------------------------------------------------------------------------------

GO_PROGRAMS = {"sarama_client": "old", "kafkago_client": "old",
               "sarama_current": "current", "kafkago_current": "current", "franz_current": "current"}


@pytest.fixture(scope="session")
def go_programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    go = shutil.which("go")
    if go is None:
        # not a skip: `make test` installs everything, so a missing toolchain is a broken setup, not a pass
        pytest.fail("the go toolchain is not on PATH (scripts/install-test-deps.sh checks for it)")
    out = tmp_path_factory.mktemp("go-bin")
    # the modules were downloaded by the install step: nothing is fetched here, and go.sum must not change
    env = {**os.environ, "GOFLAGS": "-mod=readonly", "GOPROXY": "off"}
    programs = {}
    for name, module in GO_PROGRAMS.items():
        package = "./" + name.replace("_current", "_client")
        built = subprocess.run([go, "build", "-o", str(out / name), package], cwd=GO_DIR / module, env=env,
                               capture_output=True, text=True, timeout=600)
        if built.returncode != 0:
            pytest.fail(f"go build {package} in {GO_DIR / module} failed:\n{built.stderr}")
        programs[name] = out / name
    return programs


@pytest.fixture(scope="module")
def broker_39():
    # debug: the broker logs each request's API and version, so a test can check what the client sent
    process = start_broker(extra_args=("--as-version", PROFILE, "--log-level", "debug"))
    yield process
    process.stop()


# client ids may hold spaces (kafka-go's names its host and package)
_REQUEST = re.compile(r" request from \S+ client_id=.*? api=(?P<api>[A-Z_]+) v(?P<version>\d+) correlation_id=")


def sent_since(broker: Any, mark: int) -> set[tuple[str, int]]:
    """(API name, version) of the requests the broker logged after `mark` characters of its log."""
    return {(m["api"], int(m["version"])) for m in _REQUEST.finditer(broker.log_text()[mark:])}


def run_go(program: Path, broker: Any, *args: str, timeout: float = 40) -> dict[str, Any]:
    result = subprocess.run([str(program), "-brokers", f"{broker.host}:{broker.port}", *args],
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{program.name} {' '.join(args)} failed:\n{result.stderr}"
    answer: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return answer


def read_back(broker: Any, topic: str, partitions: int, expected: int) -> list[Any]:
    """Every record of `topic` read with kafka-python (it negotiates Fetch v4+ with the 3.9 node)."""
    consumer = KafkaConsumer(bootstrap_servers=f"{broker.host}:{broker.port}", enable_auto_commit=False,
                             auto_offset_reset="earliest", consumer_timeout_ms=3000)
    try:
        consumer.assign([TopicPartition(topic, p) for p in range(partitions)])
        found = []
        for message in consumer:
            found.append(message)
            if len(found) >= expected:
                break
        return found
    finally:
        consumer.close()


# --- sarama --------------------------------------------------------------------------------------------

def test_sarama_admin_creates_describes_and_deletes_a_topic(go_programs, broker_39):
    require(SARAMA_2_2_ADMIN)
    topic = unique_topic("sarama-admin")
    answer = run_go(go_programs["sarama_client"], broker_39, "-mode", "admin", "-version", "2.2.0", "-topic", topic)
    assert answer["listed"] and answer["partitions"] == 3
    assert answer["configs"]["retention.ms"] == "3600000" and answer["configs"]["cleanup.policy"] == "delete"


def test_sarama_idempotent_producer_and_consumer_group(go_programs, broker_39):
    require(SARAMA_2_2_CLIENT)
    topic, group = unique_topic("sarama-idem"), unique_topic("sarama-group")
    broker_39.create_topic(topic, partitions=1)
    sarama = go_programs["sarama_client"]
    produced = run_go(sarama, broker_39, "-mode", "produce", "-version", "2.2.0", "-idempotent", "-topic", topic,
                      "-count", "10")
    assert produced["offsets"] == list(range(10))
    consumed = run_go(sarama, broker_39, "-mode", "group", "-version", "2.2.0", "-topic", topic, "-group", group,
                      "-count", "10")
    assert consumed["values"] == [f"v{i}" for i in range(10)]
    # the group committed when it left: a new member of it resumes after what was consumed
    run_go(sarama, broker_39, "-mode", "produce", "-version", "2.2.0", "-idempotent", "-topic", topic, "-count", "3",
           "-prefix", "w")
    resumed = run_go(sarama, broker_39, "-mode", "group", "-version", "2.2.0", "-topic", topic, "-group", group,
                     "-count", "3")
    assert resumed["values"] == ["w0", "w1", "w2"]
    batches = read_back(broker_39, topic, 1, 13)
    assert [m.offset for m in batches] == list(range(13))


@pytest.mark.parametrize(("version", "compression", "magic"), [
    ("", "none", 0), ("", "gzip", 0), ("", "snappy", 0),
    ("0.10.2.0", "none", 1), ("0.10.2.0", "gzip", 1), ("0.10.2.0", "snappy", 1), ("0.10.2.0", "lz4", 1),
], ids=lambda v: v or "default")
def test_sarama_old_producers_message_sets_become_record_batches(go_programs, broker_39, version, compression, magic):
    require(SARAMA_DEFAULT_PRODUCER if magic == 0 else SARAMA_0_10_PRODUCER)
    topic = unique_topic("sarama-legacy")
    broker_39.create_topic(topic, partitions=1)
    args = ["-mode", "produce", "-topic", topic, "-count", "6", "-compression", compression]
    produced = run_go(go_programs["sarama_client"], broker_39, *args, *(["-version", version] if version else []))
    assert produced["offsets"] == list(range(6))
    found = read_back(broker_39, topic, 1, 6)
    assert [(m.offset, m.key, m.value) for m in found] == [(i, f"k{i}".encode(), f"v{i}".encode()) for i in range(6)]
    if magic == 0:
        assert {m.timestamp for m in found} == {-1}  # message format v0 has no timestamp
    else:
        assert all(m.timestamp > NOW for m in found)


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy"])
def test_sarama_default_consumer_reads_with_fetch_v0(go_programs, broker_39, compression):
    require({**SARAMA_DEFAULT_PRODUCER, **SARAMA_DEFAULT_CONSUMER})
    topic = unique_topic("sarama-v0")
    broker_39.create_topic(topic, partitions=1)
    sarama = go_programs["sarama_client"]
    run_go(sarama, broker_39, "-mode", "produce", "-topic", topic, "-count", "4", "-compression", compression)
    mark = len(broker_39.log_text())
    consumed = run_go(sarama, broker_39, "-mode", "consume", "-topic", topic, "-count", "4")
    assert {("FETCH", 0), ("LIST_OFFSETS", 0)} <= sent_since(broker_39, mark)
    assert consumed["values"] == ["v0", "v1", "v2", "v3"] and consumed["keys"] == ["k0", "k1", "k2", "k3"]
    assert consumed["offsets"] == [0, 1, 2, 3] and consumed["timestamps"] == 0  # magic 0: no timestamps


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4"])
def test_sarama_0_10_consumer_reads_batches_down_converted_to_magic_1(go_programs, broker_39, compression):
    require({0: 3, 3: 5, **SARAMA_0_10_CONSUMER})
    topic = unique_topic("sarama-v3")
    broker_39.create_topic(topic, partitions=1)
    sarama = go_programs["sarama_client"]
    # stored as record batches by a 2.2 producer (Produce v3), read by a 0.10 consumer (Fetch v3)
    for _ in range(2):
        run_go(sarama, broker_39, "-mode", "produce", "-version", "2.2.0", "-topic", topic, "-count", "5",
               "-compression", compression)
    mark = len(broker_39.log_text())
    consumed = run_go(sarama, broker_39, "-mode", "consume", "-version", "0.10.2.0", "-topic", topic, "-count",
                      "10")
    assert ("FETCH", 3) in sent_since(broker_39, mark)
    assert consumed["values"] == [f"v{i}" for i in range(5)] * 2 and consumed["offsets"] == list(range(10))
    assert consumed["timestamps"] == 10


@pytest.mark.parametrize("retention", ["1h", "0"], ids=["offset-commit-v2", "offset-commit-v1"])
def test_sarama_0_10_consumer_group(go_programs, broker_39, retention):
    require({**SARAMA_0_10_PRODUCER, **SARAMA_0_10_GROUP, 8: 2 if retention != "0" else 1})
    topic, group = unique_topic("sarama-010"), unique_topic("sarama-010-group")
    broker_39.create_topic(topic, partitions=2)
    sarama = go_programs["sarama_client"]
    run_go(sarama, broker_39, "-mode", "produce", "-version", "0.10.2.0", "-topic", topic, "-count", "8")
    args = ("-mode", "group", "-version", "0.10.2.0", "-topic", topic, "-group", group, "-retention", retention)
    mark = len(broker_39.log_text())
    consumed = run_go(sarama, broker_39, *args, "-count", "8")
    assert sorted(consumed["values"]) == sorted(f"v{i}" for i in range(8))
    assert {("FETCH", 3), ("OFFSET_COMMIT", 2 if retention != "0" else 1)} <= sent_since(broker_39, mark)
    # the group committed when it left: a new member of it resumes after what was consumed
    run_go(sarama, broker_39, "-mode", "produce", "-version", "0.10.2.0", "-topic", topic, "-count", "2",
           "-prefix", "w")
    resumed = run_go(sarama, broker_39, *args, "-count", "2")
    assert sorted(resumed["values"]) == ["w0", "w1"]


# --- kafka-go ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_kafka_go_creates_produces_and_deletes(go_programs, broker_39, compression):
    require({**KAFKA_GO_ADMIN, **KAFKA_GO_PRODUCER})
    topic = unique_topic("kafkago")
    kafkago = go_programs["kafkago_client"]
    assert run_go(kafkago, broker_39, "-mode", "create", "-topic", topic, "-partitions", "3") == {"partitions": 3}
    run_go(kafkago, broker_39, "-mode", "produce", "-topic", topic, "-count", "12", "-compression", compression)
    found = read_back(broker_39, topic, 3, 12)
    assert sorted(m.value for m in found) == sorted(f"v{i}".encode() for i in range(12))
    assert all(m.key == b"k" + m.value[1:] for m in found)
    for partition in range(3):  # each partition's offsets from 0 without a gap
        offsets = [m.offset for m in found if m.partition == partition]
        assert offsets == list(range(len(offsets)))
    assert run_go(kafkago, broker_39, "-mode", "delete", "-topic", topic) == {"deleted": topic}


def test_kafka_go_consumer_group(go_programs, broker_39):
    require({**KAFKA_GO_PRODUCER, **KAFKA_GO_GROUP})
    topic, group = unique_topic("kafkago-group"), unique_topic("kafkago-g")
    broker_39.create_topic(topic, partitions=1)
    kafkago = go_programs["kafkago_client"]
    run_go(kafkago, broker_39, "-mode", "produce", "-topic", topic, "-count", "5")
    mark = len(broker_39.log_text())
    consumed = run_go(kafkago, broker_39, "-mode", "group", "-topic", topic, "-group", group, "-count", "5")
    assert ("FETCH", 2) in sent_since(broker_39, mark)
    assert sorted(consumed["values"]) == [f"v{i}" for i in range(5)]


# --- current clients against the latest profile -------------------------------------------------------------

@pytest.fixture(scope="module")
def broker_latest():
    process = start_broker(extra_args=("--log-level", "debug"))
    yield process
    process.stop()


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_current_sarama_idempotent_producer_reads_back_in_order(go_programs, broker_latest, compression):
    topic = unique_topic("sarama-cur")
    broker_latest.create_topic(topic, partitions=1)
    sarama = go_programs["sarama_current"]
    mark = len(broker_latest.log_text())
    produced = run_go(sarama, broker_latest, "-mode", "produce", "-topic", topic, "-count", "8", "-compression",
                      compression)
    assert produced["offsets"] == list(range(8))
    sent = sent_since(broker_latest, mark)
    assert ("INIT_PRODUCER_ID", 4) in sent or ("INIT_PRODUCER_ID", 5) in sent, sorted(sent)
    assert not {(api, v) for api, v in sent if api == "PRODUCE" and v < 3}, "a Kafka 4 client sent Produce v0-2"
    consumed = run_go(sarama, broker_latest, "-mode", "consume", "-topic", topic, "-count", "8")
    assert consumed == {"values": [f"v{i}" for i in range(8)], "offsets": list(range(8))}


def test_current_sarama_transactions_are_read_committed(go_programs, broker_latest):
    topic = unique_topic("sarama-txn")
    broker_latest.create_topic(topic, partitions=1)
    sarama = go_programs["sarama_current"]
    txn_id = unique_topic("sarama-txn-id")
    mark = len(broker_latest.log_text())
    for prefix, abort in (("c", False), ("a", True), ("d", False)):
        outcome = run_go(sarama, broker_latest, "-mode", "produce", "-topic", topic, "-count", "3", "-prefix",
                         prefix, "-transactional-id", txn_id, *(["-abort"] if abort else []))
        assert outcome["transaction"] == ("aborted" if abort else "committed")
    apis = {api for api, _ in sent_since(broker_latest, mark)}
    assert {"FIND_COORDINATOR", "INIT_PRODUCER_ID", "ADD_PARTITIONS_TO_TXN", "END_TXN"} <= apis
    committed = run_go(sarama, broker_latest, "-mode", "consume", "-topic", topic, "-count", "6", "-read-committed")
    assert committed["values"] == ["c0", "c1", "c2", "d0", "d1", "d2"]
    # three records and a marker per transaction: committed ones skip the aborted records and every marker
    assert committed["offsets"] == [0, 1, 2, 8, 9, 10]
    everything = run_go(sarama, broker_latest, "-mode", "consume", "-topic", topic, "-count", "9")
    assert everything["values"] == [f"{p}{i}" for p in "cad" for i in range(3)]


def test_current_sarama_group_and_admin(go_programs, broker_latest):
    sarama = go_programs["sarama_current"]
    admin_topic = unique_topic("sarama-cur-admin")
    answer = run_go(sarama, broker_latest, "-mode", "admin", "-topic", admin_topic)
    assert answer["listed"] and answer["partitions"] == 3
    assert answer["configs"]["retention.ms"] == "3600000" and answer["configs"]["cleanup.policy"] == "delete"
    topic, group = unique_topic("sarama-cur-group"), unique_topic("sarama-cur-g")
    broker_latest.create_topic(topic, partitions=2)
    run_go(sarama, broker_latest, "-mode", "produce", "-topic", topic, "-count", "6")
    consumed = run_go(sarama, broker_latest, "-mode", "group", "-topic", topic, "-group", group, "-count", "6")
    assert sorted(consumed["values"]) == [f"v{i}" for i in range(6)]
    run_go(sarama, broker_latest, "-mode", "produce", "-topic", topic, "-count", "2", "-prefix", "w")
    resumed = run_go(sarama, broker_latest, "-mode", "group", "-topic", topic, "-group", group, "-count", "2")
    assert sorted(resumed["values"]) == ["w0", "w1"]


# --- franz-go ------------------------------------------------------------------------------------------

#: What franz-go 1.22 sends for a transaction, by the transaction.version the node finalizes: V2 (KIP-890 part 2)
#: adds partitions and the group's offsets implicitly and ends with EndTxn v5; V1 (a 3.9 node has no
#: transaction.version) adds them explicitly and ends with EndTxn v4. Kafka 4.3.1 gives the same outcome.
FRANZ_TXN_APIS = {
    "latest": ({("END_TXN", 5), ("TXN_OFFSET_COMMIT", 5)}, {"ADD_PARTITIONS_TO_TXN", "ADD_OFFSETS_TO_TXN"}),
    "3.9": ({("END_TXN", 4), ("TXN_OFFSET_COMMIT", 4), ("ADD_PARTITIONS_TO_TXN", 3), ("ADD_OFFSETS_TO_TXN", 4)},
            set()),
}


@pytest.mark.parametrize("profile", ["latest", "3.9"])
def test_franz_go_transactions_and_exactly_once_copy_by_transaction_version(go_programs, profile, request):
    broker = request.getfixturevalue("broker_latest" if profile == "latest" else "broker_39")
    franz = go_programs["franz_current"]
    source, copy = unique_topic("franz-in"), unique_topic("franz-out")
    broker.create_topic(source, partitions=1)
    broker.create_topic(copy, partitions=1)
    txn_id = unique_topic("franz-txn")
    mark = len(broker.log_text())
    for prefix, abort in (("c", False), ("a", True), ("d", False)):
        outcome = run_go(franz, broker, "-mode", "txn", "-topic", source, "-count", "3", "-prefix", prefix,
                         "-transactional-id", txn_id, *(["-abort"] if abort else []), timeout=90)
        assert outcome == {"transaction": "aborted" if abort else "committed"}
    committed = run_go(franz, broker, "-mode", "consume", "-topic", source, "-count", "6", "-read-committed",
                       timeout=90)
    # three records and a marker per transaction; read_committed skips the aborted ones and every marker
    assert committed == {"values": ["c0", "c1", "c2", "d0", "d1", "d2"], "offsets": [0, 1, 2, 8, 9, 10]}
    copied = run_go(franz, broker, "-mode", "copy", "-topic", source, "-to", copy, "-group", unique_topic("franz-g"),
                    "-transactional-id", unique_topic("franz-copy"), "-count", "6", timeout=90)
    assert copied == {"copied": 6}
    output = run_go(franz, broker, "-mode", "consume", "-topic", copy, "-count", "6", "-read-committed", timeout=90)
    assert output["values"] == ["C0", "C1", "C2", "D0", "D1", "D2"]
    sent = sent_since(broker, mark)
    expected, absent = FRANZ_TXN_APIS[profile]
    assert expected <= sent, sorted(sent)
    assert not {(api, v) for api, v in sent if api in absent}, sorted(sent)
    assert not {v for api, v in sent if api == "END_TXN"} - {v for api, v in expected if api == "END_TXN"}


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_current_kafka_go_creates_produces_consumes_and_deletes(go_programs, broker_latest, compression):
    topic, group = unique_topic("kafkago-cur"), unique_topic("kafkago-cur-g")
    kafkago = go_programs["kafkago_current"]
    mark = len(broker_latest.log_text())
    assert run_go(kafkago, broker_latest, "-mode", "create", "-topic", topic, "-partitions", "3") == {
        "partitions": 3}
    run_go(kafkago, broker_latest, "-mode", "produce", "-topic", topic, "-count", "12", "-compression", compression)
    consumed = run_go(kafkago, broker_latest, "-mode", "group", "-topic", topic, "-group", group, "-count", "12")
    assert sorted(consumed["values"]) == sorted(f"v{i}" for i in range(12))
    offsets = run_go(kafkago, broker_latest, "-mode", "offsets", "-topic", topic, "-group", group)
    ends = {int(p): tuple(v) for p, v in offsets["ends"].items()}
    assert sum(last for _, last in ends.values()) == 12 and all(first == 0 for first, _ in ends.values())
    # the group committed what it read: its committed offsets are the partitions' ends
    assert {int(p): v for p, v in offsets["committed"].items()} == {p: last for p, (_, last) in ends.items()}
    assert run_go(kafkago, broker_latest, "-mode", "delete", "-topic", topic) == {"deleted": topic}
    assert not {(api, v) for api, v in sent_since(broker_latest, mark) if api in ("PRODUCE", "FETCH") and v < 3}


# --- Produce v0-2 on the wire ------------------------------------------------------------------------------

def legacy_set(magic: int, codec: int, entries: list[tuple[bytes | None, bytes]], timestamp: int = NOW) -> bytes:
    """A message set built by kafka-python's own legacy encoder (not minibroker's)."""
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=codec, batch_size=1 << 20)
    for offset, (key, value) in enumerate(entries):
        builder.append(offset, timestamp=timestamp if magic else None, key=key, value=value)
    return bytes(builder.build())


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("codec", [records.COMPRESSION_NONE, records.COMPRESSION_GZIP, records.COMPRESSION_SNAPPY])
def test_a_message_set_converts_to_one_record_batch(magic, codec):
    entries = [(b"a", b"1"), (None, b"2"), (b"c", b"")]
    batch = log_validator.convert_legacy_message_set(legacy_set(magic, codec, entries))
    header = records.read_header(batch)
    assert (header.magic, header.compression, header.producer_id, header.base_sequence) == (2, codec, -1, -1)
    assert records.crc_is_valid(batch, header) and header.size_in_bytes == len(batch)
    converted = list(records.iter_records(batch))
    assert [(r.key, r.value) for r in converted] == entries
    assert header.max_timestamp == (NOW if magic else -1)


def _corrupt_crc(data: bytes) -> bytes:
    out = bytearray(data)
    out[12] ^= 0xFF  # the first entry's crc
    return bytes(out)


def _legacy_entry(magic: int, attributes: int, key: bytes | None, value: bytes, offset: int = 0) -> bytes:
    body = struct.pack(">bb", magic, attributes) + (struct.pack(">q", NOW) if magic else b"")
    for field in (key, value):
        body += struct.pack(">i", -1) if field is None else struct.pack(">i", len(field)) + field
    message = struct.pack(">I", zlib.crc32(body)) + body
    return struct.pack(">qi", offset, len(message)) + message


@pytest.mark.parametrize(("data", "code"), [
    (_corrupt_crc(legacy_set(1, 0, [(b"k", b"v")])), ErrorCode.CORRUPT_MESSAGE),
    (struct.pack(">qi", 0, 4) + b"\x00" * 4, ErrorCode.CORRUPT_MESSAGE),  # shorter than any message
    # a compressed wrapper holding a compressed message
    (_legacy_entry(1, records.COMPRESSION_GZIP, None, compression.compress(
        records.COMPRESSION_GZIP, _legacy_entry(1, records.COMPRESSION_GZIP, None, b"x"))), ErrorCode.INVALID_RECORD),
    # inner offsets of a magic 1 wrapper must run 0, 1, ...
    (_legacy_entry(1, records.COMPRESSION_GZIP, None, compression.compress(
        records.COMPRESSION_GZIP, _legacy_entry(1, 0, None, b"x", offset=5))), ErrorCode.INVALID_RECORD),
    # a wrapper offset past its last inner offset moves the inner ones off 0, 1, ...
    (_legacy_entry(1, records.COMPRESSION_GZIP, None, compression.compress(records.COMPRESSION_GZIP, b"".join(
        _legacy_entry(1, 0, None, b"x", offset=i) for i in range(2))), offset=100), ErrorCode.INVALID_RECORD),
    # a wrapper with nothing inside
    (_legacy_entry(1, records.COMPRESSION_GZIP, None, compression.compress(records.COMPRESSION_GZIP, b"")),
     ErrorCode.INVALID_RECORD),
    # inner magic differs from the wrapper's
    (_legacy_entry(1, records.COMPRESSION_GZIP, None, compression.compress(
        records.COMPRESSION_GZIP, _legacy_entry(0, 0, None, b"x"))), ErrorCode.INVALID_RECORD),
], ids=["crc", "too-short", "nested-compression", "inner-offsets", "wrapper-offset", "empty-wrapper",
        "inner-magic"])
def test_a_bad_message_set_is_refused(data, code):
    with pytest.raises(KafkaError) as refused:
        log_validator.convert_legacy_message_set(data)
    assert refused.value.code == code


def _lz4_frame_with_kafka_0_8_checksum(data: bytes) -> bytes:
    """An LZ4 frame whose header checksum also hashes the magic, as Kafka 0.8's clients wrote it."""
    frame = lz4.frame.compress(data, store_size=False)
    assert frame[4] & 0x09 == 0  # no content size, no dictionary id: the descriptor is two bytes
    good = frame[6]
    broken = (xxhash32_via_lz4_check(frame[:6]) >> 8) & 0xFF
    assert broken != good
    return frame[:6] + bytes((broken,)) + frame[7:]


def xxhash32_via_lz4_check(data: bytes) -> int:
    # produce's XXH32 is checked here against python-lz4's own header checksums first
    for size in (10, 1 << 12):
        frame = lz4.frame.compress(b"y" * size, store_size=False)
        assert (compression.xxh32_short(frame[4:6]) >> 8) & 0xFF == frame[6]
    return compression.xxh32_short(data)


def test_a_magic_0_lz4_wrapper_with_kafka_0_8_framing_converts():
    inner = b"".join(_legacy_entry(0, 0, None, b"value-%d" % i, offset=i) for i in range(3))
    wrapper = _legacy_entry(0, records.COMPRESSION_LZ4, None, _lz4_frame_with_kafka_0_8_checksum(inner))
    batch = log_validator.convert_legacy_message_set(wrapper)
    assert [r.value for r in records.iter_records(batch)] == [b"value-0", b"value-1", b"value-2"]
    # magic 1 wrappers were always framed correctly: the same bytes there are refused
    broken_v1 = _legacy_entry(1, records.COMPRESSION_LZ4, None, _lz4_frame_with_kafka_0_8_checksum(
        b"".join(_legacy_entry(1, 0, None, b"v", offset=i) for i in range(2))))
    with pytest.raises(KafkaError):
        log_validator.convert_legacy_message_set(broken_v1)


@pytest.mark.parametrize("wrapper_offset", [0, 2])  # 0: below the last inner offset, so they count as given
def test_a_magic_1_wrapper_offset_at_or_below_its_last_inner_one_is_accepted(wrapper_offset):
    inner = b"".join(_legacy_entry(1, 0, b"k", b"v%d" % i, offset=i) for i in range(3))
    wrapper = _legacy_entry(1, records.COMPRESSION_SNAPPY, None,
                            compression.compress(records.COMPRESSION_SNAPPY, inner), offset=wrapper_offset)
    batch = log_validator.convert_legacy_message_set(wrapper)
    assert [r.value for r in records.iter_records(batch)] == [b"v0", b"v1", b"v2"]


def test_a_wrapper_expanding_past_the_bound_is_too_large():
    data = legacy_set(1, records.COMPRESSION_GZIP, [(None, b"\x00" * 50_000)])
    with pytest.raises(KafkaError) as refused:
        log_validator.convert_legacy_message_set(data, limit=10_000)
    assert refused.value.code == ErrorCode.MESSAGE_TOO_LARGE


def test_mangled_message_sets_raise_only_kafka_errors():
    rng = random.Random(16)
    originals = [legacy_set(magic, codec, [(b"key", b"value" * 20)] * 3) for magic in (0, 1)
                 for codec in (records.COMPRESSION_NONE, records.COMPRESSION_GZIP, records.COMPRESSION_SNAPPY)]
    for _ in range(3000):
        data = bytearray(rng.choice(originals))
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.3:
            del data[rng.randrange(len(data)):]
        try:
            batch = log_validator.convert_legacy_message_set(bytes(data), limit=1 << 16)
        except KafkaError:
            continue
        assert records.read_header(batch).magic == 2


def _cluster(release: str) -> Cluster:
    cluster = Cluster(BrokerConfig({"node.id": 1}), clock=ManualClock(NOW))
    cluster.nodes[0].release = release
    cluster.create_topic("legacy", 1)
    return cluster


def _produce_request(data: bytes, acks: int = -1) -> ProduceRequest:
    part = ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=data)
    return ProduceRequest(transactional_id=None, acks=acks, timeout_ms=1000,
                          topic_data=[ProduceRequest.TopicProduceData(name="legacy", partition_data=[part])])


@pytest.mark.parametrize("profile", ["latest", "4.0"])
def test_kafka_4_refuses_produce_v0_to_v2(profile):
    cluster = _cluster(profile)
    for version in (0, 1, 2):
        with pytest.raises(CloseConnection):
            call(cluster, _produce_request(legacy_set(min(version, 1), 0, [(None, b"v")])), version)


@pytest.mark.parametrize("profile", ["2.8", "3.9"])
@pytest.mark.parametrize("version", [0, 1, 2])
def test_an_old_release_node_appends_produce_v0_to_v2(version, profile):
    require({0: version}, profile)
    cluster = _cluster(profile)
    magic = 0 if version == 0 else 1
    for round_ in range(2):
        data = legacy_set(magic, records.COMPRESSION_GZIP, [(None, b"a"), (None, b"b")])
        answer = call(cluster, _produce_request(data), version)
        partition = answer.responses[0].partition_responses[0]
        assert (partition.error_code, partition.base_offset) == (0, 2 * round_)
    log = cluster.topics["legacy"].partitions[0].log
    assert log.log_end_offset == 4
    bad = call(cluster, _produce_request(_corrupt_crc(legacy_set(magic, 0, [(None, b"x")]))), version)
    assert bad.responses[0].partition_responses[0].error_code == ErrorCode.CORRUPT_MESSAGE


@pytest.mark.parametrize("profile", ["2.8", "3.9"])
def test_an_old_release_node_answers_list_offsets_v0(profile):
    require({2: 0}, profile)
    cluster = _cluster(profile)
    call(cluster, _produce_request(records.build_batch([(None, b"v")] * 3, timestamp=NOW)), 3)
    topic = ListOffsetsRequest.ListOffsetsTopic
    part = topic.ListOffsetsPartition

    def ask(timestamp: int, max_num: int = 1, name: str = "legacy") -> Any:
        request = ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=[topic(name=name, partitions=[
            part(partition_index=0, timestamp=timestamp, max_num_offsets=max_num)])])
        return call(cluster, request, 0).topics[0].partitions[0]

    assert ask(-1).old_style_offsets == [3] and ask(-2).old_style_offsets == [0]
    assert ask(-1, max_num=5).old_style_offsets == [3, 0]
    assert ask(NOW - 1).old_style_offsets == [] and ask(NOW + 1).old_style_offsets == [3]
    assert ask(-1, name="nope").error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION


@pytest.mark.parametrize("profile", ["2.8", "3.9"])
def test_an_old_release_node_serves_admin_versions_kafka_4_removed(profile):
    require({19: 0, 20: 0, 32: 0}, profile)
    cluster = _cluster(profile)
    for version, name in ((0, "old-a"), (1, "old-b")):
        created = call(cluster, CreateTopicsRequest(timeout_ms=1000, validate_only=False, topics=[
            CreateTopicsRequest.CreatableTopic(name=name, num_partitions=2, replication_factor=1, assignments=[],
                                               configs=[])]), version)
        assert [(t.name, t.error_code) for t in created.topics] == [(name, 0)]
    resource = DescribeConfigsRequest.DescribeConfigsResource
    described = call(cluster, DescribeConfigsRequest(resources=[
        resource(resource_type=2, resource_name="old-a", configuration_keys=["cleanup.policy"])]), 0)
    [config] = described.results[0].configs
    assert (config.name, config.value, config.is_default) == ("cleanup.policy", "delete", True)
    deleted = call(cluster, DeleteTopicsRequest(topic_names=["old-a", "nope"], timeout_ms=1000), 0)
    assert {(r.name, r.error_code) for r in deleted.responses} == {
        ("old-a", 0), ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)}
    assert set(cluster.topics) == {"legacy", "old-b"}


@pytest.mark.parametrize("profile", ["latest", "4.0"])
def test_kafka_4_refuses_the_admin_versions_it_removed(profile):
    cluster = _cluster(profile)
    for request, version in ((CreateTopicsRequest(timeout_ms=1, validate_only=False, topics=[]), 1),
                             (DeleteTopicsRequest(topic_names=[], timeout_ms=1), 0),
                             (DescribeConfigsRequest(resources=[]), 0)):
        with pytest.raises(CloseConnection):
            call(cluster, request, version)
