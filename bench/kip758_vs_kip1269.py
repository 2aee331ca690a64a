"""KIP-758 beside KIP-1269 on one broker: producer-state memory, throughput, exactly-once, what clients report.

Two answers to "idempotent producers are capped at 5 batches in flight": KIP-1269 keeps a configurable window
of batches per producer and partition (`producer.state.batches.to.retain`, told to producers in Produce v14);
KIP-758 keeps only the latest batch (`producer.state.mode=latest-append`) and answers a retry of any older one
DUPLICATE_SEQUENCE_NUMBER without its offset, while its producer throttles by sequence numbers. Four parts,
same broker code, same machine, same run:

1. memory: 10,000 producers on one partition through ProducerStateManager (check_append + commit_append),
   with the window and duplicate range a Cluster in each mode gives the partition; tracemalloc over the state,
   as bench/producer_state_memory.py measures it.
2. throughput: the project's producer through the latency proxy (bench/kip1269_rtt.py's cells and columns):
   KIP-1269 at windows 20 and 50, KIP-758 with its sequence throttle, each at 20 and 50 in flight.
3. chaos: dropped connections, delayed answers and appended-then-failed answers (test control) against each
   mode, with the Java client and confluent-kafka (5 in flight) and the project's producer (20 in flight);
   the topic is read back and audited for duplicates, gaps and reorderings.
4. clients: what Java, confluent-kafka, kafka-python, aiokafka and KafkaJS report when a retry of an appended
   batch is answered DUPLICATE_SEQUENCE_NUMBER: provoked on a latest-append broker (answers held, the first
   request appended and failed, so its retry follows later appends), on a window broker for comparison, and
   with 46 injected on the retry for clients that never have two batches of a partition in flight.

Usage: .venv/bin/python bench/kip758_vs_kip1269.py [--parts memory throughput chaos clients] [--quick]
Prints Markdown tables; writes bench/results/kip758_vs_kip1269.json and .png (about 5 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import math
import os
import platform
import re
import subprocess
import sys
import time
import tracemalloc
import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from kip1269_rtt import COLUMNS as RTT_COLUMNS  # noqa: E402
from kip1269_rtt import Cell, measure  # noqa: E402
from kip1269_rtt import row as rtt_row  # noqa: E402
from producer_state_memory import KAFKA_JVM_ESTIMATE  # noqa: E402
from producer_state_memory import header as batch_header  # noqa: E402

from minibroker.client.client import KafkaClient  # noqa: E402
from minibroker.client.producer import Producer  # noqa: E402
from minibroker.client.stamping import read_stamp, stamp  # noqa: E402
from minibroker.core.cluster import Cluster  # noqa: E402
from minibroker.core.config import LATEST_APPEND_MODE, WINDOW_MODE, BrokerConfig  # noqa: E402
from minibroker.core.producer_state import ProducerStateManager  # noqa: E402
from minibroker.protocol.errors import ErrorCode  # noqa: E402
from minibroker.protocol.messages import CreateTopicsRequest  # noqa: E402
from minibroker.testing.latency_proxy import LatencyProxy  # noqa: E402
from minibroker.testing.process import BrokerProcess, start_broker  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
JAVA_SRC = ROOT / "tests" / "clients" / "java"
JAVA_LIB = ROOT / ".cache" / "java" / "3.9"  # the old client set (tests/clients/java/3.9/pom.xml)
JAVA_BUILD = ROOT / ".cache" / "kip758-java"
JAVA_JARS = ("kafka-clients", "slf4j-api", "lz4-java", "snappy-java", "zstd-jni")
JVM_OPTS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx512m")
NODE_DIR = ROOT / "tests" / "clients" / "node"

PARTS = ("memory", "throughput", "chaos", "clients")
DESIGNS = {WINDOW_MODE: "KIP-1269", LATEST_APPEND_MODE: "KIP-758"}
PARTITION = 0
AFTER_APPEND = int(ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND)  # what Kafka answers after appending (retriable)
DUPLICATE = int(ErrorCode.DUPLICATE_SEQUENCE_NUMBER)
OUT_OF_ORDER = int(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER)
BROKER_DEFAULT_RANGE = 10_000_000  # max.in.flight.sequence.number.per.connection's default
PRODUCE_ANSWER = re.compile(r"api=PRODUCE v\d+ .* error_code=(\S+)")
SERVER_RECORD_VALUE = 100  # bytes of a chaos/probe record's value (Java's are its own, about 80)


def log(msg: str) -> None:
    print(f"[kip758] {msg}", file=sys.stderr, flush=True)


def emit(obj: dict[str, Any]) -> None:
    """One JSON line on stdout (the client programs' output)."""
    print(json.dumps(obj), flush=True)


# --- 1. producer-state memory ----------------------------------------------------------------------


@dataclass
class MemoryRow:
    """Producer state of one mode after every producer appended `rounds` batches to one partition."""

    mode: str
    window: int  # the topic's producer.state.batches.to.retain
    batches_to_retain: int  # what the partition keeps per producer (Cluster.batches_to_retain)
    duplicate_range: int | None  # Cluster.duplicate_range: None in window mode
    producers: int
    rounds: int
    retained_per_producer: float = 0.0
    bytes_total: int = 0
    bytes_per_producer: float = 0.0
    kafka_jvm_estimate_per_producer: int = 0  # KIP-1269's 36 bytes per retained BatchMetadata, windows only

    @property
    def label(self) -> str:
        return f"window {self.window}" if self.mode == WINDOW_MODE else "latest-append"


def partition_modes(mode: str, window: int) -> tuple[int, int | None]:
    """(batches_to_retain, duplicate_range) a single-node Cluster in `mode` gives a topic with `window`."""
    cluster = Cluster(BrokerConfig({"producer.state.mode": mode}))
    topic = cluster.create_topic("memory", 1, configs={"producer.state.batches.to.retain": str(window)})
    assert topic is not None
    partition = topic.partitions[0]
    return cluster.batches_to_retain(partition), cluster.duplicate_range(partition)


def measure_memory(mode: str, window: int, producers: int, rounds: int) -> MemoryRow:
    """tracemalloc over a ProducerStateManager fed `rounds` in-order batches of every producer."""
    retain, duplicate_range = partition_modes(mode, window)
    found = MemoryRow(mode, window, retain, duplicate_range, producers, rounds)
    headers = [[batch_header(pid, seq) for pid in range(producers)] for seq in range(rounds)]  # built untraced
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        state = ProducerStateManager()
        offset = 0
        for by_producer in headers:
            for header in by_producer:
                check = state.check_append(header, "memory-0", offset, duplicate_range)
                assert check.duplicate is None
                state.commit_append(header, offset, 1_700_000_000_000, retain)
                offset += 1
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    found.bytes_total = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    found.bytes_per_producer = found.bytes_total / producers
    found.retained_per_producer = sum(entry.batch_count for entry in state.producers.values()) / producers
    found.kafka_jvm_estimate_per_producer = KAFKA_JVM_ESTIMATE * retain
    return found


def run_memory(args: argparse.Namespace) -> list[MemoryRow]:
    rounds = max(args.memory_windows) + 2  # every mode in steady state: a full window, then trimming
    rows = []
    for mode, window in [*((WINDOW_MODE, w) for w in args.memory_windows), (LATEST_APPEND_MODE, 5)]:
        log(f"memory: {mode} window {window}, {args.producers:,} producers x {rounds} batches")
        rows.append(measure_memory(mode, window, args.producers, rounds))
    return rows


def memory_markdown(rows: list[MemoryRow]) -> str:
    lines = ["| producer state | batches kept per producer | duplicate range (sequences) | bytes per producer "
             "and partition | MB per 10,000 producers | Kafka JVM estimate, bytes (36 per batch) |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        span = "-" if r.duplicate_range is None else f"{r.duplicate_range:,}"
        lines.append(f"| {r.label} | {r.retained_per_producer:g} | {span} | {r.bytes_per_producer:,.0f} | "
                     f"{r.bytes_per_producer * 10_000 / 1e6:.2f} | {r.kafka_jvm_estimate_per_producer} |")
    return "\n".join(lines)


# --- 2. throughput and latency through the latency proxy --------------------------------------------


@dataclass
class StudyCell(Cell):
    """A kip1269_rtt cell with the design it ran."""

    design: str = ""
    window: int | None = None  # KIP-1269: the topic's producer.state.batches.to.retain
    sequence_bound: int | None = None  # KIP-758: the producer's max_in_flight_sequence_numbers
    max_sequences_seen: int = 0


async def create_topic(bootstrap: str, topic: str, partitions: int = 1, window: int | None = None) -> None:
    """CreateTopics through `bootstrap` (the proxy, as the client sees the broker)."""
    client = KafkaClient(bootstrap, "kip758-admin")
    await client.start()
    try:
        config = CreateTopicsRequest.CreatableTopic.CreatableTopicConfig
        configs = [] if window is None else [config(name="producer.state.batches.to.retain", value=str(window))]
        request = CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
            name=topic, num_partitions=partitions, replication_factor=1, assignments=[], configs=configs)],
            timeout_ms=10_000, validate_only=False)
        response = await client.request(next(iter(client.nodes)), request, 7)
        if response.topics[0].error_code:
            raise RuntimeError(f"CreateTopics {topic}: error {response.topics[0].error_code}")
    finally:
        await client.close()


def sequence_bound(in_flight: int, records_per_request: int) -> int:
    """KIP-758's producer throttle for a cell: the records `in_flight` full requests carry."""
    return in_flight * records_per_request


async def run_cell(design: str, window: int | None, rtt_ms: float, in_flight: int,
                   args: argparse.Namespace) -> StudyCell:
    """A fresh proxy, broker (in the design's mode) and producer for one cell, measured after a warm-up."""
    per_request = max(args.batch_size // args.record_size, 1)
    outstanding = (2 * in_flight + 2) * per_request  # as kip1269_rtt: every in-flight slot full twice over
    cell = StudyCell(rtt_ms, in_flight, args.seconds, per_request, outstanding, load_average=os.getloadavg()[0],
                     design=design, window=window)
    if rtt_ms > 0:
        cell.ideal_records_per_s = per_request * in_flight / (rtt_ms / 1000)
    latest_append = design == "KIP-758"
    if latest_append:
        cell.sequence_bound = args.sequence_bound or sequence_bound(in_flight, per_request)
    proxy = LatencyProxy("127.0.0.1", 0, one_way_delay_ms=rtt_ms / 2)
    await proxy.start()
    broker: BrokerProcess | None = None
    try:
        mode = LATEST_APPEND_MODE if latest_append else WINDOW_MODE
        broker = await asyncio.to_thread(start_broker, f"producer.state.mode={mode}",
                                         extra_args=("--advertised-listeners", proxy.address))
        proxy.target = ("127.0.0.1", broker.port)
        topic = f"kip758-rtt-{uuid.uuid4().hex[:8]}"
        await create_topic(proxy.address, topic, window=window)
        producer = Producer(proxy.address, max_in_flight_requests_per_connection=in_flight,
                            batch_size=args.batch_size, linger_ms=args.linger_ms,
                            max_in_flight_sequence_numbers=cell.sequence_bound)
        await producer.start()
        try:
            # a v14 answer tells the window: the topic's in window mode, 1 on a latest-append leader
            await measure(producer, topic, cell, args, expected_limit=1 if latest_append else window,
                          name=f"kip758-rtt-{cell.design}-{cell.rtt_ms:g}ms-{cell.in_flight}")
        finally:
            await producer.close()
        cell.max_in_flight_seen = producer.max_in_flight_seen(topic, PARTITION)
        cell.partition_limit = producer.partition_limit(topic, PARTITION)
        cell.max_sequences_seen = producer.max_in_flight_sequences_seen(topic, PARTITION)
    finally:
        await proxy.stop()
        if broker is not None:
            await asyncio.to_thread(stop_broker, broker)
    return cell


def throughput_plan(args: argparse.Namespace) -> list[tuple[str, int | None, float, int]]:
    """(design, window, RTT, in-flight) of every cell, RTT by RTT so each RTT's cells run close together."""
    plan: list[tuple[str, int | None, float, int]] = []
    for rtt in args.rtts:
        for window in args.windows:
            plan += [("KIP-1269", window, rtt, n) for n in args.in_flight]
        plan += [("KIP-758", None, rtt, n) for n in args.in_flight]
    return plan


async def run_throughput(args: argparse.Namespace) -> list[StudyCell]:
    cells = []
    for design, window, rtt, in_flight in throughput_plan(args):
        what = f"window {window}" if window else "sequence throttle"
        log(f"throughput: {design} {what}, RTT {rtt:g} ms, in-flight {in_flight}: {args.seconds:g} s")
        cell = await run_cell(design, window, rtt, in_flight, args)
        log(f"  {cell.records_per_s:,.0f} records/s, p50 {cell.latency_ms.get('p50', math.nan):.1f} ms, "
            f"mean in flight {cell.mean_in_flight:.1f}, max seen {cell.max_in_flight_seen}, limit "
            f"{cell.partition_limit}, errors {cell.errors}")
        cells.append(cell)
    return cells


def cell_label(cell: StudyCell) -> str:
    return f"KIP-1269 window {cell.window}" if cell.design == "KIP-1269" else "KIP-758 latest-append"


def throughput_markdown(cells: list[StudyCell]) -> str:
    columns = ("design", "producer bound", *RTT_COLUMNS)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for cell in cells:
        bound = f"{cell.in_flight} requests" + ("" if cell.sequence_bound is None
                                                else f", {cell.sequence_bound:,} sequences")
        lines.append("| " + " | ".join([cell_label(cell), bound, *rtt_row(cell)]) + " |")
    return "\n".join(lines)


# --- client programs (run as subprocesses: `--client-program SPEC`) ----------------------------------


def record_value(name: str, i: int) -> bytes:
    prefix = f"{name}-{i}-".encode()
    return prefix + b"x" * max(SERVER_RECORD_VALUE - len(prefix), 0)


def confluent_program(spec: dict[str, Any]) -> int:
    """confluent-kafka: produce `count` stamped records, one line per delivery report."""
    from confluent_kafka import Producer as ConfluentProducer

    producer = ConfluentProducer({"bootstrap.servers": spec["bootstrap"], "enable.idempotence": True,
                                  "acks": "all", **spec["config"]})
    failed = 0

    def report(i: int, err: Any, msg: Any) -> None:
        nonlocal failed
        if err is not None:
            failed += 1
            emit({"i": i, "error": err.name(), "message": err.str()})
        else:
            emit({"i": i, "partition": msg.partition(), "offset": msg.offset()})

    for i in range(spec["count"]):
        while True:
            try:
                headers: Any = stamp(spec["name"], i)
                producer.produce(spec["topic"], record_value(spec["name"], i), partition=i % spec["partitions"],
                                 headers=headers, on_delivery=functools.partial(report, i))
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
    left = producer.flush(spec["timeout"])
    emit({"done": True, "unfinished": left, "failed": failed})
    return 0


def kafka_python_program(spec: dict[str, Any]) -> int:
    """kafka-python: produce `count` stamped records, then one line per future."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=spec["bootstrap"], enable_idempotence=True, acks="all",
                             **spec["config"])
    futures = [producer.send(spec["topic"], value=record_value(spec["name"], i), partition=i % spec["partitions"],
                             headers=stamp(spec["name"], i)) for i in range(spec["count"])]
    producer.flush(spec["timeout"])
    failed = 0
    for i, future in enumerate(futures):
        try:
            metadata = future.get(timeout=spec["timeout"])
            emit({"i": i, "partition": metadata.partition, "offset": metadata.offset})
        except Exception as exc:
            failed += 1
            emit({"i": i, "error": type(exc).__name__, "message": str(exc)})
    producer.close(timeout=10)
    emit({"done": True, "failed": failed})
    return 0


def aiokafka_program(spec: dict[str, Any]) -> int:
    """aiokafka: produce `count` stamped records, then one line per future."""
    from aiokafka import AIOKafkaProducer

    async def main() -> int:
        producer = AIOKafkaProducer(bootstrap_servers=spec["bootstrap"], enable_idempotence=True, acks="all",
                                    **spec["config"])
        await producer.start()
        failed = 0
        try:
            futures = [await producer.send(spec["topic"], record_value(spec["name"], i),
                                           partition=i % spec["partitions"], headers=stamp(spec["name"], i))
                       for i in range(spec["count"])]
            for i, future in enumerate(futures):
                try:
                    metadata = await asyncio.wait_for(future, spec["timeout"])
                    emit({"i": i, "partition": metadata.partition, "offset": metadata.offset})
                except Exception as exc:
                    failed += 1
                    emit({"i": i, "error": type(exc).__name__, "message": str(exc)})
        finally:
            await producer.stop()
        emit({"done": True, "failed": failed})
        return 0

    return asyncio.run(main())


PROGRAMS = {"confluent": confluent_program, "kafka-python": kafka_python_program, "aiokafka": aiokafka_program}


def client_program_main(spec_json: str) -> int:
    spec = json.loads(spec_json)
    return PROGRAMS[spec["client"]](spec)


# --- running real clients ---------------------------------------------------------------------------


@dataclass
class ClientResult:
    """What a client program printed and how it ended."""

    lines: list[dict[str, Any]]
    returncode: int | None
    stderr_tail: str
    seconds: float

    def per_record(self) -> dict[int, dict[str, Any]]:
        """The last line about each record number `i`."""
        return {int(line["i"]): line for line in self.lines if "i" in line}


def compile_java() -> str | None:
    """Compile tests/clients/java once into .cache/kip758-java; the classpath, or None without Java."""
    jars = []
    for name in JAVA_JARS:
        found = sorted(JAVA_LIB.glob(f"{name}*.jar"))
        if not found:
            return None
        jars.append(str(found[0]))
    sources = sorted(JAVA_SRC.rglob("*.java"))
    stamp_file = JAVA_BUILD / "ProduceRecords.class"
    if not stamp_file.exists() or stamp_file.stat().st_mtime < max(p.stat().st_mtime for p in sources):
        JAVA_BUILD.mkdir(parents=True, exist_ok=True)
        try:
            subprocess.run(["javac", "-encoding", "UTF-8", "-cp", os.pathsep.join(jars), "-d", str(JAVA_BUILD),
                            *map(str, sources)], check=True, capture_output=True, timeout=300)
        except (OSError, subprocess.SubprocessError) as exc:
            log(f"javac failed: {exc}")
            return None
    return os.pathsep.join([str(JAVA_BUILD), *jars])


class Clients:
    """Command lines of the client programs: Java's ProduceRecords, KafkaJS's produce.js, and ours."""

    def __init__(self) -> None:
        self._java: str | None | bool = False  # False: not compiled yet

    def java_classpath(self) -> str | None:
        if self._java is False:
            self._java = compile_java()
        return self._java if isinstance(self._java, str) else None

    def available(self, client: str) -> str | None:
        """None when `client` can run here, else why not."""
        if client == "java" and self.java_classpath() is None:
            return "Java or the kafka-clients jars (.cache/java) are missing: run scripts/install-test-deps.sh"
        if client == "kafkajs" and not (NODE_DIR / "node_modules" / "kafkajs" / "package.json").is_file():
            return "KafkaJS is not installed in tests/clients/node: run scripts/install-test-deps.sh"
        return None

    def command(self, client: str, bootstrap: str, topic: str, count: int, partitions: int,
                config: dict[str, Any], name: str, timeout: float) -> tuple[list[str], Path | None]:
        """(argv, cwd) of a program producing `count` records to `topic`."""
        if client == "java":
            classpath = self.java_classpath()
            assert classpath is not None
            options = [f"{k}={v}" for k, v in config.items()]
            return ["java", *JVM_OPTS, "-cp", classpath, "ProduceRecords", bootstrap, topic, str(count),
                    *options], None
        if client == "kafkajs":
            return ["node", "produce.js", bootstrap, topic, str(count), "none", str(config.get("batch", 1))], NODE_DIR
        spec = {"client": client, "bootstrap": bootstrap, "topic": topic, "count": count, "partitions": partitions,
                "config": config, "name": name, "timeout": timeout}
        return [sys.executable, str(Path(__file__).resolve()), "--client-program", json.dumps(spec)], None


def start_client(argv: list[str], cwd: Path | None) -> subprocess.Popen[str]:
    return subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)


def finish_client(popen: subprocess.Popen[str], started: float, timeout: float) -> ClientResult:
    """Wait for a client program (killed, by its PID, after `timeout`) and parse its JSON lines."""
    try:
        stdout, stderr = popen.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        popen.kill()
        stdout, stderr = popen.communicate()
        stderr += f"\n[killed after {timeout:.0f} s]"
    lines = []
    for text in stdout.splitlines():
        text = text.strip()
        if text.startswith("{"):
            with contextlib.suppress(json.JSONDecodeError):
                lines.append(json.loads(text))
    return ClientResult(lines, popen.returncode, stderr[-2000:], time.monotonic() - started)


def produce_answer_codes(broker: BrokerProcess) -> list[int]:
    """The error codes of the Produce answers the broker wrote, in order (its DEBUG request log)."""
    return [int(code) for code in PRODUCE_ANSWER.findall(broker.log_text()) if code.lstrip("-").isdigit()]


def produce_answers(broker: BrokerProcess) -> dict[str, int]:
    """Produce answers by error name."""
    counts: dict[str, int] = {}
    for code in produce_answer_codes(broker):
        name = ErrorCode(code).name
        counts[name] = counts.get(name, 0) + 1
    return counts


def stop_broker(broker: BrokerProcess) -> None:
    """Stop the broker process (by its PID) and remove its log file."""
    broker.stop()
    broker.log_path.unlink(missing_ok=True)


def debug_broker(mode: str, *settings: str) -> BrokerProcess:
    """A broker in `mode` with test control and the DEBUG request log (one line per answer, with its error)."""
    return start_broker(f"producer.state.mode={mode}", *settings,
                        extra_args=("--control-port", "0", "--log-level", "DEBUG"))


# --- 3. exactly-once under chaos --------------------------------------------------------------------


@dataclass
class Audit:
    """The read-back of one producer's records, judged as minibroker.spark.jobs.audit judges them (with
    --from-zero, and the number sent known, so records lost at the end count as gaps too)."""

    sent: int
    stored: int = 0
    duplicates: int = 0  # copies of a record number seen before (offset order, partition by partition)
    gaps: int = 0  # record numbers sent and not stored
    reorderings: int = 0  # within a partition, a record number below the previous one (duplicates left out)

    @property
    def exactly_once(self) -> bool:
        return self.stored == self.sent and not (self.duplicates or self.gaps or self.reorderings)


def audit(partitions: Iterable[list[int]], sent: int) -> Audit:
    """Duplicates, gaps and reorderings of record numbers 0..sent-1 over the partitions' records."""
    found = Audit(sent)
    seen: set[int] = set()
    for numbers in partitions:
        previous = -1
        for number in numbers:
            found.stored += 1
            if number in seen:
                found.duplicates += 1
                continue
            seen.add(number)
            if number < previous:
                found.reorderings += 1
            previous = number
    found.gaps = len(set(range(sent)) - seen)
    return found


def read_back(bootstrap: str, topic: str, partitions: int, java: bool) -> list[list[int]]:
    """Every record of the topic, partition by partition in offset order, as record numbers."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "kip758-audit", "enable.auto.commit": False})
    try:
        ends = [consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(partitions)]
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        numbers: list[list[int]] = [[] for _ in range(partitions)]
        done = [ends[p] == 0 for p in range(partitions)]
        deadline = time.monotonic() + 60
        while not all(done) and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None or message.error() is not None:
                continue
            headers: Any = message.headers() or []
            if java:
                number = next((int(v) for k, v in headers if k == "i" and v is not None), -1)
            else:
                found = read_stamp(headers)
                number = found[1] if found is not None else -1
            partition, offset = int(message.partition() or 0), int(message.offset() or 0)
            numbers[partition].append(number)
            if offset >= ends[partition] - 1:
                done[partition] = True
        return numbers
    finally:
        consumer.close()


@dataclass
class ChaosRun:
    """One client against one mode, through the faults."""

    mode: str
    client: str
    in_flight: int
    records: int
    skipped: str | None = None
    acked: int = 0
    acked_without_offset: int = 0  # success reported with offset -1 (or librdkafka's -1001)
    failed: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    audit: Audit | None = None
    broker_answers: dict[str, int] = field(default_factory=dict)  # Produce answers by error code
    faults_fired: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def chaos_configs(client: str, args: argparse.Namespace) -> dict[str, Any]:
    if client == "java":
        return {"max.in.flight.requests.per.connection": 5, "batch.size": 2000, "linger.ms": 2,
                "request.timeout.ms": 1000, "retry.backoff.ms": 50, "delivery.timeout.ms": 120000}
    if client == "confluent":
        return {"max.in.flight.requests.per.connection": 5, "linger.ms": 2, "batch.num.messages": 20,
                "request.timeout.ms": 1000, "retry.backoff.ms": 50, "message.timeout.ms": 120000}
    return {}


def add_faults(control: Any, topic: str, args: argparse.Namespace) -> None:
    """Never-ending rules on the topic's Produce requests (see minibroker/testing/control.py)."""
    control.drop("produce", count=None, topic=topic, every=args.drop_every)
    control.delay("produce", args.delay_ms, count=None, topic=topic, every=args.delay_every)
    control.inject_error("produce", AFTER_APPEND, count=None, topic=topic, every=args.error_every,
                         after_append=True)


def faults_fired(control: Any) -> dict[str, int]:
    names = {"error": "appended-then-failed", "drop": "dropped", "delay": "delayed"}
    fired: dict[str, int] = {}
    for rule in control.status()["rules"]:
        name = names[rule["action"]]
        fired[name] = fired.get(name, 0) + rule["fired"]
    return fired


async def project_chaos(bootstrap: str, topic: str, mode: str, run: ChaosRun, args: argparse.Namespace) -> None:
    """The project's producer, 20 in flight: the KIP-1269 window, or KIP-758's throttle on latest-append."""
    per_batch = max(args.chaos_batch_size // (SERVER_RECORD_VALUE + 16), 1)
    bound = sequence_bound(run.in_flight, per_batch) if mode == LATEST_APPEND_MODE else None
    name = "project"
    producer = Producer(bootstrap, max_in_flight_requests_per_connection=run.in_flight,
                        batch_size=args.chaos_batch_size, linger_ms=2, retry_backoff_ms=50,
                        delivery_timeout_ms=120_000, max_in_flight_sequence_numbers=bound)
    await producer.start()
    futures = []
    try:
        for i in range(run.records):
            futures.append(await producer.send(topic, record_value(name, i), partition=i % args.chaos_partitions,
                                               headers=stamp(name, i)))
            if i % 50 == 0:
                await asyncio.sleep(0)
        await producer.flush()
    finally:
        await producer.close()
    for future in futures:
        error = future.exception()
        if error is None:
            run.acked += 1
            run.acked_without_offset += future.result().offset < 0
        else:
            run.failed += 1
            key = type(error).__name__ + (f" {error.code.name}" if hasattr(error, "code") else "")
            run.errors[key] = run.errors.get(key, 0) + 1


def tally_client(run: ChaosRun, result: ClientResult) -> None:
    for line in result.per_record().values():
        if "error" in line:
            run.failed += 1
            run.errors[line["error"]] = run.errors.get(line["error"], 0) + 1
        else:
            run.acked += 1
            # confluent-kafka's Message.offset() is None where librdkafka has no offset
            run.acked_without_offset += line["offset"] is None or line["offset"] < 0


def chaos_run(mode: str, client: str, clients: Clients, args: argparse.Namespace) -> ChaosRun:
    in_flight = args.chaos_in_flight if client == "project" else 5
    run = ChaosRun(mode, client, in_flight, args.chaos_records)
    run.skipped = None if client == "project" else clients.available(client)
    if run.skipped:
        return run
    broker = debug_broker(mode)
    started = time.monotonic()
    try:
        topic = f"kip758-chaos-{client}-{uuid.uuid4().hex[:6]}"
        # window mode keeps 20 batches, enough for the project's 20 in flight; latest-append ignores it
        broker.create_topic(topic, args.chaos_partitions, {"producer.state.batches.to.retain": 20})
        add_faults(broker.control, topic, args)
        if client == "project":
            asyncio.run(project_chaos(broker.bootstrap_servers, topic, mode, run, args))
        else:
            argv, cwd = clients.command(client, broker.bootstrap_servers, topic, run.records, args.chaos_partitions,
                                        chaos_configs(client, args), client, timeout=150)
            tally_client(run, finish_client(start_client(argv, cwd), time.monotonic(), timeout=180))
        run.seconds = time.monotonic() - started
        run.faults_fired = faults_fired(broker.control)
        broker.control.clear()
        run.audit = audit(read_back(broker.bootstrap_servers, topic, args.chaos_partitions, client == "java"),
                          run.records)
        run.broker_answers = produce_answers(broker)
    finally:
        stop_broker(broker)
    return run


def run_chaos(args: argparse.Namespace, clients: Clients) -> list[ChaosRun]:
    runs = []
    for mode in (WINDOW_MODE, LATEST_APPEND_MODE):
        for client in args.chaos_clients:
            log(f"chaos: {client} against {mode}, {args.chaos_records} records")
            run = chaos_run(mode, client, clients, args)
            if run.skipped:
                log(f"  skipped: {run.skipped}")
            elif run.audit is not None:
                log(f"  {run.seconds:.1f} s, acked {run.acked} ({run.acked_without_offset} without offset), failed "
                    f"{run.failed}; stored {run.audit.stored}, duplicates {run.audit.duplicates}, gaps "
                    f"{run.audit.gaps}, reorderings {run.audit.reorderings}; broker {run.broker_answers}")
            runs.append(run)
    return runs


CLIENT_NAMES = {"java": "Java 3.9", "confluent": "confluent-kafka", "project": "project Producer",
                "kafka-python": "kafka-python", "aiokafka": "aiokafka", "kafkajs": "KafkaJS"}


def chaos_markdown(runs: list[ChaosRun]) -> str:
    lines = ["| broker mode | client | in flight | records | acked | acked without offset | failed | stored | "
             "duplicates | gaps | reorderings | exactly once | responses with 46 | responses with 45 | "
             "faults fired |", "|" + "---|" * 15]
    for run in runs:
        label = f"{run.mode} ({DESIGNS[run.mode]})"
        if run.skipped or run.audit is None:
            lines.append(f"| {label} | {CLIENT_NAMES[run.client]} | skipped: {run.skipped} |" + " |" * 12)
            continue
        a = run.audit
        fired = ", ".join(f"{k} {v}" for k, v in sorted(run.faults_fired.items()))
        lines.append(f"| {label} | {CLIENT_NAMES[run.client]} | {run.in_flight} | {run.records:,} | {run.acked:,} | "
                     f"{run.acked_without_offset:,} | {run.failed:,} | {a.stored:,} | {a.duplicates} | {a.gaps} | "
                     f"{a.reorderings} | {'yes' if a.exactly_once else 'NO'} | "
                     f"{run.broker_answers.get('DUPLICATE_SEQUENCE_NUMBER', 0)} | "
                     f"{run.broker_answers.get('OUT_OF_ORDER_SEQUENCE_NUMBER', 0)} | {fired} |")
    lines += ["", "46 DUPLICATE_SEQUENCE_NUMBER, 45 OUT_OF_ORDER_SEQUENCE_NUMBER: Produce responses whose first "
              "error it is (the broker's request log names one error per response, which may carry a batch for "
              "each partition)."]
    return "\n".join(lines)


# --- 4. what clients report for DUPLICATE_SEQUENCE_NUMBER -------------------------------------------

PROBE_RECORDS = 3
PROBE_CONFIGS: dict[str, dict[str, Any]] = {
    # one record per batch and per request, several requests in flight where the client allows it
    "java": {"max.in.flight.requests.per.connection": 5, "batch.size": 1, "linger.ms": 0, "retry.backoff.ms": 50},
    "confluent": {"max.in.flight.requests.per.connection": 5, "batch.num.messages": 1, "linger.ms": 0,
                  "retry.backoff.ms": 50},
    "kafka-python": {"max_in_flight_requests_per_connection": 5, "batch_size": 1, "linger_ms": 0,
                     "retry_backoff_ms": 50},
    "aiokafka": {"max_batch_size": 16384, "linger_ms": 0, "retry_backoff_ms": 50},
    "kafkajs": {"batch": 1},  # produce.js: one awaited send() per record
}
# the injected scenario: the three records in one batch (what offsets does each record get?)
PROBE_BATCHED_CONFIGS: dict[str, dict[str, Any]] = {
    "java": {"linger.ms": 200, "retry.backoff.ms": 50},
    "confluent": {"linger.ms": 200, "retry.backoff.ms": 50},
    "kafka-python": {"linger_ms": 200, "retry_backoff_ms": 50},
    "aiokafka": {"linger_ms": 200, "retry_backoff_ms": 50},
    "kafkajs": {"batch": PROBE_RECORDS},  # one send() of all three
}
# why a client never retries an older batch after a newer one was appended (read from each client's source)
ONE_IN_FLIGHT = {
    "kafka-python": "kafka-python mutes a partition while its batch is in flight whenever enable_idempotence is "
                    "set (guarantee_message_order), whatever max_in_flight_requests_per_connection says",
    "aiokafka": "aiokafka sends one batch per partition at a time (its sender mutes a partition while a batch "
                "is in flight)",
    "kafkajs": "KafkaJS's idempotent producer holds a per-broker lock (eosManager.acquireBrokerLock) from the "
               "sequence assignment until the answer, so one Produce is in flight",
}
# (broker mode, scenario). "failed": answers are held until every record's request is in, and the first
# request is appended and then answered NOT_ENOUGH_REPLICAS_AFTER_APPEND (as Kafka answers when replication
# fails after the append); the broker handles a connection's requests in order, so the later ones are appended
# only once that answer goes out, and the retry of the first batch comes after them. Holding or dropping
# answers alone cannot do it: nothing behind a held answer is appended. "injected": the three records in one
# batch, appended and failed, its retry answered 46, for clients that never have two batches in flight.
PROBES = ((LATEST_APPEND_MODE, "failed"), (WINDOW_MODE, "failed"), (LATEST_APPEND_MODE, "injected"))


@dataclass
class Probe:
    """One client, one broker mode, one way of getting a retry answered DUPLICATE_SEQUENCE_NUMBER."""

    client: str
    mode: str
    scenario: str
    skipped: str | None = None
    records_sent: int = 0
    in_flight_at_release: int = 0  # Produce requests for the partition held when the answers were let go
    broker_answers: list[int] = field(default_factory=list)  # error codes of the Produce answers, in order
    records: dict[int, dict[str, Any]] = field(default_factory=dict)  # record number -> the client's report
    verdict: str = ""
    returncode: int | None = None
    stderr_tail: str = ""


def short_report(line: dict[str, Any] | None) -> str:
    """A record's report in a few characters: its offset, or the error."""
    if line is None:
        return "none"
    if "error" in line:
        return str(line.get("type") or line["error"])
    if "base_offset" in line:  # KafkaJS: one line per send
        return f"error {line['error_code']}" if line.get("error_code") else str(line["base_offset"])
    return str(line["offset"])


def kafkajs_records(lines: list[dict[str, Any]], per_send: int) -> dict[int, dict[str, Any]]:
    """produce.js prints one line per send of `per_send` records (from record `first`); errors carry KafkaJS's
    fields. Each record gets its send's line, the offset counted from the send's base offset."""
    found: dict[int, dict[str, Any]] = {}
    for line in lines:
        if "first" not in line:
            continue
        entry = dict(line)
        if "error" in entry and "type" not in entry and entry.get("errors"):
            entry["type"] = entry["errors"][-1].get("type")
        for index in range(per_send):
            found[int(line["first"]) + index] = entry
    return found


def run_probe(client: str, mode: str, scenario: str, clients: Clients, args: argparse.Namespace) -> Probe:
    probe = Probe(client, mode, scenario, skipped=clients.available(client))
    if probe.skipped:
        return probe
    broker = debug_broker(mode)
    try:
        topic = f"kip758-probe-{client}-{uuid.uuid4().hex[:6]}"
        broker.create_topic(topic, 1)
        control = broker.control
        probe.records_sent = PROBE_RECORDS
        if scenario == "injected":
            control.inject_error("produce", AFTER_APPEND, count=1, topic=topic, after_append=True)
            control.inject_error("produce", DUPLICATE, count=1, topic=topic, every=2)  # the second request: the retry
        else:
            control.hold(topic, PARTITION)
            control.inject_error("produce", AFTER_APPEND, count=1, topic=topic, after_append=True)
        configs = PROBE_BATCHED_CONFIGS if scenario == "injected" else PROBE_CONFIGS
        argv, cwd = clients.command(client, broker.bootstrap_servers, topic, probe.records_sent, 1,
                                    configs[client], client, timeout=60)
        started = time.monotonic()
        popen = start_client(argv, cwd)
        if scenario != "injected":
            # every record's request in (it is appended, its answer held), or a while for one-at-a-time clients
            deadline = time.monotonic() + args.hold_seconds
            while time.monotonic() < deadline and popen.poll() is None:
                if control.in_flight(topic, PARTITION)["current"] >= probe.records_sent:
                    break
                time.sleep(0.05)
            probe.in_flight_at_release = control.in_flight(topic, PARTITION)["current"]
            control.release(topic, PARTITION)
        result = finish_client(popen, started, timeout=90)
        probe.broker_answers = produce_answer_codes(broker)
        probe.records = (kafkajs_records(result.lines, configs[client]["batch"]) if client == "kafkajs"
                         else result.per_record())
        probe.returncode, probe.stderr_tail = result.returncode, result.stderr_tail
    finally:
        stop_broker(broker)
    probe.verdict = probe_verdict(probe)
    return probe


def probe_verdict(probe: Probe) -> str:
    """What the application saw for each record, then the broker's Produce answers in order."""
    reports = [short_report(probe.records.get(i)) for i in range(probe.records_sent)]
    failed = any(not r.lstrip("-").isdigit() and r != "None" for r in reports)
    text = ("records: " if failed else "success, offset" + ("s " if len(reports) > 1 else " ")) + ", ".join(reports)
    return f"{text} (broker answered {', '.join(map(str, probe.broker_answers))})"


def run_clients(args: argparse.Namespace, clients: Clients) -> list[Probe]:
    probes = []
    for client in args.probe_clients:
        for mode, scenario in PROBES:
            log(f"clients: {client}, {mode}, {scenario}")
            probe = run_probe(client, mode, scenario, clients, args)
            log(f"  {probe.skipped or probe.verdict}")
            probes.append(probe)
    return probes


def clients_markdown(probes: list[Probe]) -> str:
    by_client: dict[str, dict[tuple[str, str], Probe]] = {}
    for probe in probes:
        by_client.setdefault(probe.client, {})[(probe.mode, probe.scenario)] = probe
    lines = ["| client | in flight | latest-append broker: first batch appended and failed (20), later ones "
             "appended, then its retry | window broker, the same | latest-append: one batch of 3 records appended "
             "and failed, its retry answered 46 (injected) |", "|---|---|---|---|---|"]
    for client, found in by_client.items():
        cells = []
        for key in PROBES:
            ran = found.get(key)
            cells.append("-" if ran is None else (f"skipped: {ran.skipped}" if ran.skipped else ran.verdict))
        held = [p.in_flight_at_release for p in found.values() if p.scenario != "injected" and not p.skipped]
        lines.append(f"| {CLIENT_NAMES[client]} | {max(held, default=0)} | " + " | ".join(cells) + " |")
    notes = [f"- {CLIENT_NAMES[c]}: {ONE_IN_FLIGHT[c]}." for c in by_client if c in ONE_IN_FLIGHT]
    if notes:
        lines += ["", "Answer codes: 0 NONE, 20 NOT_ENOUGH_REPLICAS_AFTER_APPEND, 46 DUPLICATE_SEQUENCE_NUMBER. "
                  "Clients with one batch per partition in flight retry only the latest batch, which a "
                  "latest-append broker still answers with its offset:", *notes]
    return "\n".join(lines)


# --- plot ------------------------------------------------------------------------------------------


def plot(cells: list[StudyCell], memory: list[MemoryRow], path: Path) -> None:
    """Throughput against in-flight, one panel per RTT, a line per design; memory per producer beside."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rtts = sorted({c.rtt_ms for c in cells})
    panels = len(rtts) + (1 if memory else 0)
    if panels == 0:
        return
    columns = 2 if panels > 1 else 1
    rows = math.ceil(panels / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(6 * columns, 4.2 * rows), squeeze=False)
    flat = [ax for line in axes for ax in line]
    labels = sorted({cell_label(c) for c in cells})
    for index, rtt in enumerate(rtts):
        ax = flat[index]
        for color, label in enumerate(labels):
            line = sorted((c for c in cells if c.rtt_ms == rtt and cell_label(c) == label), key=lambda c: c.in_flight)
            style = "s-" if label.startswith("KIP-758") else "o-"
            ax.plot([c.in_flight for c in line], [c.records_per_s for c in line], style, color=f"C{color}",
                    label=label)
        ideal = sorted({(c.in_flight, c.ideal_records_per_s) for c in cells
                        if c.rtt_ms == rtt and c.ideal_records_per_s})
        if ideal:
            ax.plot([x for x, _ in ideal], [y for _, y in ideal], "--", color="grey", alpha=0.6,
                    label=f"ideal ({cells[0].records_per_request} records x in-flight / RTT)")
        ax.set_title(f"RTT {rtt:g} ms" + (" (through the proxy, no delay)" if rtt == 0 else ""))
        per_request = cells[0].records_per_request
        ax.set_xlabel(f"max in-flight requests (KIP-758: sequence bound = {per_request} x in-flight)")
        ax.set_ylabel("records/s (1000-byte records)")
        ax.set_xticks(sorted({c.in_flight for c in cells}))
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    if memory:
        ax = flat[len(rtts)]
        names = [r.label for r in memory]
        values = [r.bytes_per_producer for r in memory]
        bars = ax.bar(names, values, color=["C0" if r.mode == WINDOW_MODE else "C3" for r in memory])
        for bar, value in zip(bars, values, strict=True):
            ax.annotate(f"{value:,.0f}", (bar.get_x() + bar.get_width() / 2, value), ha="center", va="bottom",
                        fontsize=8)
        ax.set_title(f"producer state per producer and partition ({memory[0].producers:,} producers)")
        ax.set_ylabel("bytes (tracemalloc)")
        ax.grid(True, axis="y", alpha=0.3)
    for ax in flat[panels:]:
        ax.set_visible(False)
    fig.suptitle("KIP-1269 (batch window) beside KIP-758 (latest append + sequence throttle), 1 partition")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- main ------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--quick", action="store_true",
                        help="shrink every part (2,000 producers, RTT 0 and 100, 2 s cells, 600 chaos records)")
    parser.add_argument("--producers", type=int, default=10_000, help="memory: producer ids on the partition")
    parser.add_argument("--memory-windows", type=int, nargs="+", default=[5, 20, 50])
    parser.add_argument("--rtts", type=float, nargs="+", default=[0, 20, 100], help="throughput: RTTs in ms")
    parser.add_argument("--in-flight", type=int, nargs="+", default=[20, 50], help="throughput: requests in flight")
    parser.add_argument("--windows", type=int, nargs="+", default=[20, 50], help="throughput: KIP-1269 windows")
    parser.add_argument("--sequence-bound", type=int, default=0,
                        help="throughput: KIP-758 throttle; 0 = in-flight x records per request")
    parser.add_argument("--seconds", type=float, default=6.0, help="throughput: measured seconds per cell")
    parser.add_argument("--warmup", type=float, default=2.0, help="throughput: warm-up seconds (at least 5 RTTs)")
    parser.add_argument("--record-size", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=16384)
    parser.add_argument("--linger-ms", type=float, default=5.0)
    parser.add_argument("--chaos-clients", nargs="+", default=["java", "confluent", "project"],
                        choices=["java", "confluent", "project"])
    parser.add_argument("--chaos-records", type=int, default=3000)
    parser.add_argument("--chaos-partitions", type=int, default=3)
    parser.add_argument("--chaos-in-flight", type=int, default=20, help="chaos: the project producer's in-flight")
    parser.add_argument("--chaos-batch-size", type=int, default=2000)
    parser.add_argument("--drop-every", type=int, default=9, help="chaos: close the connection of every Nth Produce")
    parser.add_argument("--delay-every", type=int, default=15, help="chaos: delay every Nth Produce answer")
    parser.add_argument("--delay-ms", type=int, default=1200)
    parser.add_argument("--error-every", type=int, default=7,
                        help="chaos: append every Nth Produce, then answer NOT_ENOUGH_REPLICAS_AFTER_APPEND")
    parser.add_argument("--probe-clients", nargs="+", default=list(PROBE_CONFIGS), choices=list(PROBE_CONFIGS))
    parser.add_argument("--hold-seconds", type=float, default=4.0,
                        help="clients: longest wait for the probe's requests before the held answers go out")
    parser.add_argument("--output", type=Path, default=RESULTS / "kip758_vs_kip1269.json")
    parser.add_argument("--plot", type=Path, default=RESULTS / "kip758_vs_kip1269.png")
    args = parser.parse_args(argv)
    if args.quick:
        args.producers, args.rtts, args.seconds, args.warmup = 2000, [0, 100], 2.0, 1.0
        args.chaos_records = 600
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--client-program"]:
        return client_program_main(argv[1])
    args = parse_args(argv)
    began = datetime.now(UTC)
    clients = Clients()
    memory = run_memory(args) if "memory" in args.parts else []
    if "throughput" in args.parts:
        import uvloop

        cells = uvloop.run(run_throughput(args))
    else:
        cells = []
    chaos = run_chaos(args, clients) if "chaos" in args.parts else []
    probes = run_clients(args, clients) if "clients" in args.parts else []

    sections = []
    if memory:
        sections.append("### Producer-state memory\n\n" + memory_markdown(memory))
    if cells:
        sections.append("### Throughput and latency, 1 partition\n\n" + throughput_markdown(cells))
    if chaos:
        sections.append("### Exactly-once under faults\n\n" + chaos_markdown(chaos))
    if probes:
        sections.append("### What clients report for DUPLICATE_SEQUENCE_NUMBER\n\n" + clients_markdown(probes))
    print("\n\n".join(sections))

    payload: dict[str, Any] = {
        "experiment": "KIP-758 beside KIP-1269, bench/kip758_vs_kip1269.py",
        "started": began.isoformat(timespec="seconds"),
        "seconds": round((datetime.now(UTC) - began).total_seconds(), 1),
        "environment": {"python": platform.python_version(), "cpus": os.cpu_count(), "machine": platform.machine(),
                        "load_average_at_end": os.getloadavg()[0]},
        "settings": {key: (str(value) if isinstance(value, Path) else value) for key, value in vars(args).items()},
        "memory": [asdict(r) | {"label": r.label} for r in memory],
        "throughput": [asdict(c) | {"label": cell_label(c), "efficiency": c.efficiency} for c in cells],
        "chaos": [asdict(r) | {"exactly_once": r.audit.exactly_once if r.audit else None} for r in chaos],
        "clients": [asdict(p) | {"records": {str(k): v for k, v in p.records.items()}} for p in probes],
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(payload, indent=2) + "\n")
    log(f"wrote {args.output}")
    if cells or memory:
        plot(cells, memory, args.plot)
        log(f"wrote {args.plot}")
    broken = [r for r in chaos if r.audit is not None and not r.audit.exactly_once]
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
