"""minibroker beside Apache Kafka 4.3.1, franz-go's kfake and Tansu 0.6.0, in the same run (issue 27).

Usage: .venv/bin/python bench/compare.py [--quick] [--sections ...] [--rounds N]
       make bench                     # builds kfake and the Java programs, then this, the full run

Sections, each over all four brokers (bench/brokers.py starts them, fresh, alternating):
- startup:    spawn to the first acknowledged produce (acks=all), as processes; minibroker also in process
              (`BrokerThread`) and through the pytest plugin (`kafka_topic`);
- typical:    one typical integration test, looped TESTS times against one broker: create a topic, produce 100
              records idempotently, consume them with a new group, commit, delete the topic (confluent-kafka and
              the Java 4.3.1 client);
- memory:     broker RSS idle after start, and after GB of 1000-byte records produced and consumed;
- throughput: bench/produce.py and bench/consume.py with the four brokers and the Java 4.3.1 client;
- tools:      Kafka's kafka-producer-perf-test and kafka-consumer-perf-test (ProducerPerformance and
              ConsumerPerformance from kafka-tools 4.3.1), their standard output kept;
- latency:    produce-to-ack p50/p99 at a fixed offered load (ProducerPerformance --throughput, the Java client).

Writes bench/results/compare.json, compare.md and compare.png (--quick: .cache/bench-logs/compare-quick.*),
with the throughput sections' own JSON beside them. bench/README.md describes the method. Numbers, not
assertions: nothing here fails on speed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import brokers as broker_module  # noqa: E402
import consume  # noqa: E402
import produce  # noqa: E402
from brokers import (  # noqa: E402
    ALL_BROKERS,
    JAVA_LIBS,
    KAFKA_VERSION,
    LOG_DIR,
    READY_TIMEOUT,
    ROOT,
    Broker,
    ClientProcess,
    create_topic,
    ensure_kfake,
    ensure_tansu,
    java_classpath,
    java_client_command,
    log,
    start_broker,
    wait_for_quiet,
)

RESULTS = ROOT / "bench" / "results"
SECTIONS = ("startup", "typical", "memory", "throughput", "tools", "latency")
JAVA_LIB = KAFKA_VERSION  # the Java 4.x client: the reference install's kafka-clients
TOOLS_CP = f"{JAVA_LIBS[KAFKA_VERSION]}/*"
LOG4J2 = ROOT / "tests" / "reference" / "log4j2.properties"


class Sizes:
    """How much each section does: the full run, or --quick to prove the harness works."""

    def __init__(self, quick: bool) -> None:
        self.rounds = 1 if quick else 3  # memory, tools, latency: runs per broker
        # startup: more, as it is short and the most exposed to this machine's page-cache reclaim (a start that
        # finds its files evicted took 0.7-1.5 s where the others took 0.35-0.5 s)
        self.startup_rounds = 1 if quick else 5
        self.typical_tests = 5 if quick else 50  # one loop per (broker, client): its tests are the samples
        self.typical_records = 100
        self.memory_records = 20_000 if quick else 1_000_000  # 1000-byte records: 1 GB
        self.throughput_records = 20_000 if quick else 100_000
        # the Java producer's 16 KB batches make its runs 4 to 10 times as long as librdkafka's: fewer records
        # give runs of a similar length (2 to 4 s)
        self.java_produce_records = 10_000 if quick else 30_000
        # Kafka's tools: 30,000 records, the producer's first 5,000 its --warmup-records (left out of the
        # steady-state line its rate comes from: with 20,000 and no warm-up, its JVM's first second halved the
        # rate of the fast brokers); 50,000 made their section 40 % of the run
        self.tool_records = 10_000 if quick else 30_000
        self.tool_warmup_records = 2_000 if quick else 5_000
        # records/s offered: under what each broker sustains here with the Java producer on one partition (Kafka
        # about 7,000, Tansu 10,000, minibroker and kfake 15,000-19,000), so p99 is a latency, not a queue; at
        # 20,000 every broker fell behind on this 2-core machine
        self.latency_rate = 5_000
        # the first second (connections, metadata, JIT) is the tool's --warmup-records, left out of the
        # steady-state line the figures come from; 3 s of steady state (15,000 records) follow it
        self.latency_seconds = 2 if quick else 4
        self.latency_warmup_seconds = 1


# --- helpers ------------------------------------------------------------------------------------------


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


@contextmanager
def broker_for(kind: str, name: str, format_storage: bool = False) -> Iterator[Broker]:
    """A fresh broker, stopped by its PID afterwards (`format_storage`: see start_broker)."""
    broker = start_broker(kind, name, format_storage)
    try:
        yield broker
    finally:
        broker.stop()


def produce_one(bootstrap: str, topic: str) -> None:
    """One record, acks=all, waited for."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "log_level": 4})
    errors: list[str] = []
    producer.produce(topic, b"first", on_delivery=lambda err, _msg: errors.append(str(err)) if err else None)
    if producer.flush(60) or errors:
        raise RuntimeError(f"the first record was not acknowledged: {errors}")


def each_round(rounds: int, brokers: tuple[str, ...], fn: Callable[[str, int], dict[str, Any]]) -> dict[str, list]:
    """`fn(broker, round)` for every round, the brokers alternating; an exception becomes {"error": ...}."""
    out: dict[str, list[dict[str, Any]]] = {b: [] for b in brokers}
    for rnd in range(1, rounds + 1):
        for broker in brokers:
            wait_for_quiet()
            try:
                sample = fn(broker, rnd)
            except Exception as exc:  # a failed run is reported, the others go on
                sample = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
                log(f"{broker} round {rnd} failed: {sample['error'][:300]}")
            out[broker].append(sample)
            log(f"{broker} round {rnd}: {json.dumps(sample)[:300]}")
    return out


def medians_of(samples: dict[str, list[dict[str, Any]]], keys: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """Per broker: the median of each key over the samples without an error, and how many there were."""
    out = {}
    for broker, runs in samples.items():
        good = [s for s in runs if "error" not in s]
        out[broker] = {key: median([s[key] for s in good if s.get(key) is not None]) for key in keys}
        out[broker]["runs"] = len(good)
    return out


# --- startup: spawn to the first acknowledged produce ---------------------------------------------------

IN_PROCESS = """
import json, time
from confluent_kafka import Producer
start = time.monotonic()
from minibroker.testing.embedded import BrokerThread
broker = BrokerThread().start()
broker.create_topic("first", 1)
producer = Producer({"bootstrap.servers": broker.bootstrap_servers, "acks": "all"})
producer.produce("first", b"first")
assert producer.flush(60) == 0
print(json.dumps({"first_ack_ms": (time.monotonic() - start) * 1e3}))
broker.stop()
"""

PYTEST_FILE = """
import os, time
from confluent_kafka import Producer

def test_first(kafka_broker, kafka_topic):
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap_servers, "acks": "all"})
    producer.produce(kafka_topic, b"first")
    assert producer.flush(60) == 0
    with open(os.environ["BENCH_ACK_FILE"], "w") as out:
        out.write(repr(time.time()))
"""


def startup_process(kind: str, rnd: int) -> dict[str, Any]:
    start = time.monotonic()
    with broker_for(kind, f"compare-startup-{kind}-r{rnd}", format_storage=True) as broker:
        ready = time.monotonic()
        create_topic(broker.bootstrap_servers, "first", 1)
        produce_one(broker.bootstrap_servers, "first")
        acked = time.monotonic()
        return {"first_ack_ms": (acked - start) * 1e3, "accepting_ms": (ready - start) * 1e3,
                "cpu_s": broker.cpu_seconds(), "rss_mb": broker.rss_mb()}


def startup_in_process(_kind: str, _rnd: int) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", IN_PROCESS], check=True, capture_output=True, text=True,
                         cwd=tempfile.gettempdir(), timeout=120)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def startup_pytest(_kind: str, _rnd: int) -> dict[str, Any]:
    """Spawn of `pytest` to the record acknowledged inside a test using the plugin's `kafka_topic`."""
    with tempfile.TemporaryDirectory() as project:
        Path(project, "pytest.ini").write_text("[pytest]\n")
        Path(project, "test_first.py").write_text(PYTEST_FILE)
        ack_file = Path(project, "ack")
        start = time.time()
        env = {**os.environ, "BENCH_ACK_FILE": str(ack_file)}
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", project], check=True,
                       capture_output=True, cwd=project, timeout=120, env=env)
        return {"first_ack_ms": (float(ack_file.read_text()) - start) * 1e3}


def section_startup(sizes: Sizes, brokers: tuple[str, ...]) -> dict[str, Any]:
    # One start of each broker first, not counted: the files it reads (minibroker's modules, Kafka's jars, the
    # binaries) are then in the page cache, as on a machine that runs its tests again; the first measured start
    # otherwise paid for reading them after make bench's installs (1.0-1.5 s for minibroker and Tansu here).
    for kind in brokers:
        try:
            startup_process(kind, 0)
        except Exception as exc:  # the measured rounds report it
            log(f"{kind}: the uncounted first start failed: {type(exc).__name__}: {exc}"[:300])
    samples = each_round(sizes.startup_rounds, brokers, startup_process)
    if "minibroker" in brokers:
        samples.update({"minibroker-in-process": each_round(sizes.startup_rounds, ("minibroker",),
                                                            startup_in_process)["minibroker"]})
        samples.update({"minibroker-pytest": each_round(sizes.startup_rounds, ("minibroker",), startup_pytest)
                        ["minibroker"]})
    return {"samples": samples, "median": medians_of(samples, ("first_ack_ms", "accepting_ms", "rss_mb"))}


# --- typical: one integration test, looped ------------------------------------------------------------


def typical_worker(bootstrap: str, tests: int, records: int, prefix: str) -> int:
    """The confluent-kafka side of the typical test (TypicalTest.java describes it); prints {"test": i, "ms": ...,
    "phases": {...}} per test, the milliseconds of each of its steps as TypicalTest.java names them."""
    from confluent_kafka import Consumer, Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    value = bytes(100)
    for i in range(tests):
        topic = f"{prefix}-{i}"
        marks = [time.perf_counter()]
        admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])[topic].result(60)
        marks.append(time.perf_counter())
        producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all"})
        for _ in range(records):
            producer.produce(topic, value)
        unflushed = producer.flush(60)
        # Destroyed here, inside the step, as TypicalTest.java closes its producer: destroyed later (when the name
        # is bound to the next test's producer) it delayed that producer's first produce() by its shutdown, which
        # decided whether librdkafka waited out its 500 ms producer-id timer: a race between this process's
        # threads, won on one broker more often than on another, not a difference between the brokers.
        del producer
        if unflushed:
            print(json.dumps({"error": f"test {i}: records not delivered"}), flush=True)
            return 1
        marks.append(time.perf_counter())
        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"{prefix}-group-{i}",
                             "auto.offset.reset": "earliest", "enable.auto.commit": False})
        consumer.subscribe([topic])
        seen, deadline = 0, time.monotonic() + 60
        while seen < records and time.monotonic() < deadline:
            # as many as are still missing: consume() returns when it has them or at its timeout (asking for more
            # than the topic holds made every call wait its whole 100 ms, 200 ms a test on every broker)
            seen += sum(1 for msg in consumer.consume(records - seen, 0.1) if msg.error() is None)
        marks.append(time.perf_counter())
        consumer.commit(asynchronous=False)
        consumer.close()
        marks.append(time.perf_counter())
        if seen != records:
            print(json.dumps({"error": f"test {i} consumed {seen} of {records}"}), flush=True)
            return 1
        admin.delete_topics([topic])[topic].result(60)
        marks.append(time.perf_counter())
        steps = zip(TYPICAL_PHASES, marks[:-1], marks[1:], strict=True)
        phases = {name: (end - begin) * 1e3 for name, begin, end in steps}
        print(json.dumps({"test": i, "ms": (marks[-1] - marks[0]) * 1e3, "phases": phases}), flush=True)
    return 0


#: The steps of one typical test, as both workers time them.
TYPICAL_PHASES = ("create", "produce", "consume", "commit_close", "delete")
#: Seconds one typical test may take before its broker is reported as stalled (each client step waits up to 60 s;
#: Tansu 0.6.0 stalled one of confluent-kafka's for more than 15 minutes).
TYPICAL_TEST_TIMEOUT = 90
#: Seconds a loop of typical tests may run: a broker slower than that runs fewer tests, and the test under way when
#: the time is up is not counted; the first test is always waited for (Kafka 4.3.1 runs about 12 of the 50 in it;
#: Tansu 0.6.0, at about 24 s a test with either client, one); the sample says how many ran.
TYPICAL_LOOP_BUDGET = 10


def typical_command(client: str, bootstrap: str, sizes: Sizes, java_cp: str) -> list[str]:
    # each client's topics and groups are its own: a loop cut short by its time leaves its last test's behind
    prefix = f"typical-{client}"
    if client == "confluent":
        return [sys.executable, str(Path(__file__).resolve()), "--typical-worker", bootstrap,
                str(sizes.typical_tests), str(sizes.typical_records), prefix]
    return java_client_command(java_cp, "TypicalTest", bootstrap, str(sizes.typical_tests),
                               str(sizes.typical_records), prefix)


def typical_loop(client: str, broker: Broker, sizes: Sizes, java_cp: str, name: str) -> dict[str, Any]:
    """One client's loop of typical tests against `broker`, for at most TYPICAL_LOOP_BUDGET s (or its first test)."""
    start = time.monotonic()
    command = typical_command(client, broker.bootstrap_servers, sizes, java_cp)
    times: list[float] = []
    phases: list[dict[str, float]] = []
    with ClientProcess(command, LOG_DIR / f"{name}.client.log") as proc:
        while len(times) < sizes.typical_tests:
            if times:  # the first test also waits for the client to start (a JVM) and is always waited for
                budget_left = TYPICAL_LOOP_BUDGET - (time.monotonic() - start)
                if budget_left <= 0:
                    break
                wait = min(TYPICAL_TEST_TIMEOUT, budget_left)
            else:
                wait = TYPICAL_TEST_TIMEOUT + 60
            try:
                result = proc.read_json(wait, broker)
            except TimeoutError:
                if times and wait < TYPICAL_TEST_TIMEOUT:
                    break  # the budget ran out during this test
                raise TimeoutError(f"test {len(times)} did not end within {TYPICAL_TEST_TIMEOUT} s "
                                   f"(tests before it: {times})") from None
            if "error" in result:
                raise RuntimeError(result["error"])
            times.append(float(result["ms"]))
            phases.append(result.get("phases", {}))
    wall = time.monotonic() - start
    return {"tests_run": len(times), "median_test_ms": statistics.median(times), "first_test_ms": times[0],
            "p90_test_ms": sorted(times)[int(0.9 * (len(times) - 1))], "loop_s": wall, "test_ms": times,
            "median_phase_ms": {name: statistics.median(p[name] for p in phases if name in p)
                                for name in TYPICAL_PHASES if any(name in p for p in phases)},
            "test_phases_ms": phases}


TYPICAL_CLIENTS = ("confluent", "java")


def section_typical(sizes: Sizes, brokers: tuple[str, ...], java_cp: str) -> dict[str, Any]:
    """Per broker kind one fresh broker, the confluent-kafka loop then the Java one (each on its own topics)."""
    def loops(kind: str, rnd: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        with broker_for(kind, f"compare-typical-{kind}-r{rnd}") as broker:
            for client in TYPICAL_CLIENTS:
                if client != TYPICAL_CLIENTS[0]:
                    wait_for_quiet()
                try:
                    out[client] = typical_loop(client, broker, sizes, java_cp,
                                               f"compare-typical-{client}-{kind}-r{rnd}")
                except Exception as exc:  # one client's failure leaves the other's sample
                    out[client] = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
                    log(f"{kind} {client} typical loop failed: {out[client]['error'][:300]}")
        return out

    rounds = each_round(1, brokers, loops)
    out: dict[str, Any] = {"tests": sizes.typical_tests, "records": sizes.typical_records, "clients": {}}
    for client in TYPICAL_CLIENTS:
        samples = {b: [r.get(client, r) for r in runs] for b, runs in rounds.items()}
        out["clients"][client] = {"samples": samples,
                                  "median": medians_of(samples, ("median_test_ms", "first_test_ms", "loop_s",
                                                                 "tests_run"))}
    return out


# --- memory: idle, and after GB produced and consumed ---------------------------------------------------


def memory_on(broker: Broker, sizes: Sizes, name: str) -> dict[str, Any]:
    """RSS of a freshly started `broker` once idle, then after GB produced to and consumed from a new topic."""
    wait_for_quiet()  # what a broker does right after its start (a JVM compiles, collects) settles
    idle = broker.rss_mb()
    create_topic(broker.bootstrap_servers, "memory", 1)
    consume.preload(broker.bootstrap_servers, "memory", 1, sizes.memory_records)
    command = consume.client_command("confluent", broker.bootstrap_servers, "memory", sizes.memory_records, "")
    with ClientProcess(command, LOG_DIR / f"{name}.client.log") as proc:
        proc.read_json(READY_TIMEOUT, broker)
        proc.go()
        result = proc.read_json(consume.consume_timeout(sizes.memory_records) + 30, broker)
    if result["records"] != sizes.memory_records:
        raise RuntimeError(f"consumed {result['records']} of {sizes.memory_records}")
    after = broker.rss_mb()
    data_mb = sizes.memory_records * produce.RECORD_SIZE / 1e6
    return {"idle_rss_mb": idle, "after_rss_mb": after, "data_mb": data_mb, "beyond_data_mb": after - data_mb}


def section_memory(samples: dict[str, list[dict[str, Any]]], sizes: Sizes) -> dict[str, Any]:
    return {"records": sizes.memory_records, "samples": samples,
            "median": medians_of(samples, ("idle_rss_mb", "after_rss_mb", "data_mb", "beyond_data_mb"))}


# --- throughput: produce.py and consume.py over the four brokers ----------------------------------------


def section_throughput(sizes: Sizes, brokers: tuple[str, ...], quick: bool, out_dir: Path,
                       suffix: str) -> dict[str, Any]:
    # one broker per round and kind for every configuration (its topics deleted between runs): 24 broker starts
    # instead of 144, each of Kafka's about 8 s
    common = ["--brokers", *brokers, "--java-lib", JAVA_LIB, "--records", str(sizes.throughput_records),
              "--rounds", str(1 if quick else 3), "--broker-per-round"]
    results: dict[str, Any] = {}
    # 1 and 6 partitions with every client; 100 with librdkafka's defaults only, to keep the run shorter
    plans = {"produce": (produce, ["confluent", "confluent-1mb", "java"]), "consume": (consume, ["confluent", "java"])}
    for name, (module, clients) in plans.items():
        path = out_dir / f"compare-{name}{suffix}.json"
        per_client = ["--client-records", f"java={sizes.java_produce_records}"] if module is produce else []
        status = module.main([*common, *per_client, "--clients", *clients, "--partitions", "1", "6", "100",
                              "--wide-clients", "confluent", "--output", str(path)])
        results[name] = json.loads(path.read_text())
        path.unlink()
        if status:
            log(f"{name}: some runs failed")
    return results


# --- Kafka's own tools ----------------------------------------------------------------------------------

PERF_PRODUCER = re.compile(r"(\d+) (?:steady state )?records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), "
                           r"([\d.]+) ms avg latency, ([\d.]+) ms max latency"
                           r"(?:, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th)?")


def parse_producer_perf(text: str) -> dict[str, float]:
    """The summary line of kafka-producer-perf-test: its last line with percentiles, which is the steady-state
    one when the tool ran with --warmup-records."""
    matches = [m for m in PERF_PRODUCER.finditer(text) if m.group(6) is not None]
    if not matches:
        return {}
    m = matches[-1]
    keys = ("records", "records_per_s", "mb_per_s", "avg_ms", "max_ms", "p50_ms", "p95_ms", "p99_ms", "p999_ms")
    return {key: float(value) for key, value in zip(keys, m.groups(), strict=True)}


def parse_consumer_perf(text: str) -> dict[str, float]:
    """The CSV line under kafka-consumer-perf-test's header (the client's log lines may come between them)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if line.startswith("start.time"):
            header = [h.strip() for h in line.split(",")]
            for row in lines[i + 1:]:
                values = [v.strip() for v in row.split(",")]
                if len(values) == len(header) and re.match(r"\d{4}-\d\d-\d\d", values[0]):
                    return {h: float(v) for h, v in zip(header, values, strict=True) if re.fullmatch(r"-?[\d.]+", v)}
    return {}


def kafka_tool(name: str, cls: str, args: list[str], log_name: str, timeout: float) -> str:
    """Runs one of Kafka's tools with the reference install's jars; its standard output (also kept in a log)."""
    command = java_client_command(TOOLS_CP, cls, *args, jvm_options=(f"-Dlog4j2.configurationFile={LOG4J2}",))
    stdout, stderr = LOG_DIR / f"{log_name}.{name}.log", LOG_DIR / f"{log_name}.{name}.stderr.log"
    with open(stdout, "wb") as out, open(stderr, "wb") as err:  # files: what it printed survives a timeout
        code = subprocess.run(command, stdout=out, stderr=err, timeout=timeout, cwd=ROOT).returncode
    if code:
        raise RuntimeError(f"{name} exited with {code}: {stderr.read_text(errors='replace')[-500:]}")
    return stdout.read_text(errors="replace")


def tools_on(broker: Broker, sizes: Sizes, name: str) -> dict[str, Any]:
    """kafka-producer-perf-test (its steady-state line) then kafka-consumer-perf-test on a new topic of
    `broker`."""
    n = str(sizes.tool_records)
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "perf", 1)
    produced = kafka_tool("producer-perf-test", "org.apache.kafka.tools.ProducerPerformance",
                          ["--topic", "perf", "--num-records", n, "--warmup-records", str(sizes.tool_warmup_records),
                           "--record-size", str(produce.RECORD_SIZE), "--throughput", "-1", "--producer-props",
                           f"bootstrap.servers={bootstrap}", "acks=all"], name, 300)
    # session.timeout.ms at Kafka's group.min.session.timeout.ms: Tansu 0.6.0 holds a new group's first join for
    # half the session timeout (23 s of its 25 s run at the default 45 s, 3 s at 6 s); the joins of the other
    # brokers do not depend on it (group.initial.rebalance.delay.ms=0)
    consumer_config = LOG_DIR / f"{name}.consumer.properties"
    consumer_config.write_text("session.timeout.ms=6000\n")
    consumed = kafka_tool("consumer-perf-test", "org.apache.kafka.tools.ConsumerPerformance",
                          ["--bootstrap-server", bootstrap, "--topic", "perf", "--messages", n, "--timeout", "60000",
                           "--consumer.config", str(consumer_config)], name, 300)
    return {"producer": parse_producer_perf(produced), "consumer": parse_consumer_perf(consumed),
            "producer_stdout": produced, "consumer_stdout": consumed}


def latency_on(broker: Broker, sizes: Sizes, name: str) -> dict[str, Any]:
    """kafka-producer-perf-test at the fixed offered load on a new topic of `broker`: its steady-state line (the
    records after the warm-up ones)."""
    create_topic(broker.bootstrap_servers, "latency", 1)
    out = kafka_tool("producer-perf-test", "org.apache.kafka.tools.ProducerPerformance",
                     ["--topic", "latency", "--num-records", str(sizes.latency_rate * sizes.latency_seconds),
                      "--warmup-records", str(sizes.latency_rate * sizes.latency_warmup_seconds),
                      "--record-size", str(produce.RECORD_SIZE), "--throughput", str(sizes.latency_rate),
                      "--producer-props", f"bootstrap.servers={broker.bootstrap_servers}", "acks=all"],
                     name, 300 + 3 * sizes.latency_seconds)
    parsed = parse_producer_perf(out)
    if not parsed:
        raise RuntimeError(f"no summary line in the tool's output: {out[-500:]}")
    return parsed


#: The sections one fresh broker per round serves, in this order: memory first, as its idle RSS is that of a
#: broker just started; the tools and the latency load then run on topics of their own (the memory section's GB
#: stays where it is: deleting it set Kafka deleting its segment files, 60 s later, under a later run). Two
#: starts less per round and broker than a broker per section (Kafka's start is about 9 s).
SHARED_BROKER_SECTIONS = ("memory", "tools", "latency")


def shared_broker_run(sizes: Sizes, sections: tuple[str, ...]) -> Callable[[str, int], dict[str, Any]]:
    """One fresh broker per round runs the asked sections of SHARED_BROKER_SECTIONS, in turn; each section's
    sample under its name."""
    def run(kind: str, rnd: int) -> dict[str, Any]:
        name = f"compare-shared-{kind}-r{rnd}"
        out: dict[str, Any] = {}
        with broker_for(kind, name) as broker:
            for section, measure in (("memory", memory_on), ("tools", tools_on), ("latency", latency_on)):
                if section in sections:
                    try:
                        out[section] = measure(broker, sizes, f"{name}-{section}")
                    except Exception as exc:  # one failed section leaves the other's sample
                        out[section] = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
        return out
    return run


def section_tools(samples: dict[str, list[dict[str, Any]]], sizes: Sizes) -> dict[str, Any]:
    flat = {b: [{"producer_records_per_s": s["producer"].get("records_per_s"),
                 "consumer_records_per_s": s["consumer"].get("nMsg.sec")} if "error" not in s else s
                for s in runs] for b, runs in samples.items()}
    return {"records": sizes.tool_records, "warmup_records": sizes.tool_warmup_records, "samples": samples,
            "median": medians_of(flat, ("producer_records_per_s", "consumer_records_per_s"))}


# --- latency at a fixed offered load --------------------------------------------------------------------


def section_latency(samples: dict[str, list[dict[str, Any]]], sizes: Sizes) -> dict[str, Any]:
    return {"rate": sizes.latency_rate, "seconds": sizes.latency_seconds,
            "warmup_seconds": sizes.latency_warmup_seconds, "samples": samples,
            "median": medians_of(samples, ("records_per_s", "p50_ms", "p99_ms", "p999_ms", "max_ms"))}


def shared_broker_sections(sizes: Sizes, brokers: tuple[str, ...], sections: tuple[str, ...]) -> dict[str, Any]:
    """The memory, tools and latency sections asked for, from one fresh broker per round and kind."""
    rounds = each_round(sizes.rounds, brokers, shared_broker_run(sizes, sections))
    per_section = {section: {b: [r.get(section, r) for r in runs] for b, runs in rounds.items()}
                   for section in sections}
    build = {"memory": section_memory, "tools": section_tools, "latency": section_latency}
    return {section: build[section](samples, sizes) for section, samples in per_section.items()}


# --- the table ------------------------------------------------------------------------------------------


def fmt(value: float | None, spec: str = "{:,.0f}") -> str:
    return "-" if value is None else spec.format(value)


def ratio_text(value: float | None, base: float | None) -> str:
    return "-" if value is None or not base else f"{value / base:.2f}"


def markdown_table(results: dict[str, Any]) -> str:
    """One Markdown table per section: a column per broker, a last column minibroker / Kafka."""
    brokers = list(results["brokers"])
    head = "| | " + " | ".join(brokers) + " | minibroker / kafka |\n|---|" + "---|" * (len(brokers) + 1) + "\n"

    def row(label: str, values: dict[str, float | None], spec: str = "{:,.0f}") -> str:
        cells = [fmt(values.get(b), spec) for b in brokers]
        ratio = ratio_text(values.get("minibroker"), values.get("kafka"))
        return f"| {label} | " + " | ".join(cells) + f" | {ratio} |\n"

    parts = []
    if "startup" in results:
        med = results["startup"]["median"]
        text = head + row("spawn to first ack, ms", {b: med[b]["first_ack_ms"] for b in brokers})
        for variant in ("minibroker-in-process", "minibroker-pytest"):
            if variant in med:
                text += f"| {variant}: start to first ack, ms | {fmt(med[variant]['first_ack_ms'])} |" \
                        + " |" * len(brokers) + "\n"
        parts.append("Start to the first acknowledged produce\n\n" + text)
    if "typical" in results:
        text = head
        failures = []
        for client, data in results["typical"]["clients"].items():
            text += row(f"{client}: one typical test, median ms", {b: data["median"][b]["median_test_ms"]
                                                                  for b in brokers}, "{:,.1f}")
            text += row(f"{client}: tests run in the loop", {b: data["median"][b].get("tests_run")
                                                             for b in brokers})
            for phase in TYPICAL_PHASES:  # where a test's time goes: the clients' own timers show here
                text += row(f"{client}: ... {phase.replace('_', ' and ')}, median ms",
                            {b: next((sample["median_phase_ms"].get(phase) for sample in data["samples"][b]
                                      if "median_phase_ms" in sample), None) for b in brokers}, "{:,.0f}")
            failures += [f"- {b} with {client}: {sample['error']}" for b in brokers
                         for sample in data["samples"][b] if "error" in sample]
        parts.append(f"One typical test (median of a loop of up to {results['typical']['tests']}, at most "
                     f"{TYPICAL_LOOP_BUDGET} s)\n\n" + text + "".join(f"\n{line}" for line in failures))
    if "memory" in results:
        med = results["memory"]["median"]
        gb = results["memory"]["records"] * 1000 / 1e9
        text = head + row("idle RSS, MB", {b: med[b]["idle_rss_mb"] for b in brokers})
        text += row(f"RSS after {gb:g} GB in and out, MB", {b: med[b]["after_rss_mb"] for b in brokers})
        text += row("... beyond the data, MB", {b: med[b]["beyond_data_mb"] for b in brokers})
        parts.append("Memory\n\n" + text)
    if "throughput" in results:
        for name, data in results["throughput"].items():
            text = head
            for e in data["summary"]:
                label = f"{e['client']} {e['partitions']} p"
                text += row(f"{label}: records/s", {b: e[b]["records_per_s"] for b in brokers})
                text += row(f"{label}: broker CPU s/GB", {b: e[b]["cpu_s_per_gb"] for b in brokers}, "{:.2f}")
            parts.append(f"{name.capitalize()} throughput (1000-byte records)\n\n" + text)
    if "tools" in results:
        med = results["tools"]["median"]
        text = head + row("kafka-producer-perf-test records/s (steady state)",
                          {b: med[b]["producer_records_per_s"] for b in brokers})
        text += row("kafka-consumer-perf-test records/s", {b: med[b]["consumer_records_per_s"] for b in brokers})
        parts.append(f"Kafka's tools ({results['tools']['records']:,} records)\n\n" + text)
    if "latency" in results:
        med = results["latency"]["median"]
        text = head + row("p50 ms", {b: med[b]["p50_ms"] for b in brokers}, "{:.0f}")
        text += row("p99 ms", {b: med[b]["p99_ms"] for b in brokers}, "{:.0f}")
        parts.append(f"Produce-to-ack latency at {results['latency']['rate']:,} records/s offered (Java client)\n\n"
                     + text)
    return "\n".join(parts)


# --- plots ----------------------------------------------------------------------------------------------


def plot(results: dict[str, Any], output: Path) -> None:
    """One figure: a panel per measure, a bar per broker (and per client and partition count where they vary)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    brokers = list(results["brokers"])
    colours = {b: f"C{i}" for i, b in enumerate(brokers)}
    panels: list[tuple[str, list[str], dict[str, list[float | None]]]] = []  # title, groups, broker -> values
    if "startup" in results:
        med = results["startup"]["median"]
        panels.append(("spawn to first ack, ms (log)", ["process"], {b: [med[b]["first_ack_ms"]] for b in brokers}))
    if "typical" in results:
        clients = list(results["typical"]["clients"])
        panels.append(("one typical test, ms", clients, {b: [results["typical"]["clients"][c]["median"][b]
                                                              ["median_test_ms"] for c in clients] for b in brokers}))
    if "memory" in results:
        med = results["memory"]["median"]
        panels.append(("RSS, MB", ["idle", "after data"], {b: [med[b]["idle_rss_mb"], med[b]["after_rss_mb"]]
                                                           for b in brokers}))
    for name, data in results.get("throughput", {}).items():
        groups = [f"{e['client']}\n{e['partitions']} p" for e in data["summary"]]
        panels.append((f"{name} records/s", groups, {b: [e[b]["records_per_s"] for e in data["summary"]]
                                                     for b in brokers}))
        panels.append((f"{name} broker CPU s/GB", groups, {b: [e[b]["cpu_s_per_gb"] for e in data["summary"]]
                                                           for b in brokers}))
    if "latency" in results:
        med = results["latency"]["median"]
        panels.append((f"latency at {results['latency']['rate']:,}/s, ms", ["p50", "p99"],
                       {b: [med[b]["p50_ms"], med[b]["p99_ms"]] for b in brokers}))
    if not panels:
        return
    cols = 3
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 4 * rows), squeeze=False)
    width = 0.8 / len(brokers)
    for ax, (title, groups, values) in zip(axes.flat, panels, strict=False):
        for i, broker in enumerate(brokers):
            xs = [x + (i - (len(brokers) - 1) / 2) * width for x in range(len(groups))]
            ax.bar(xs, [v or 0.0 for v in values[broker]], width, color=colours[broker], label=broker)
        ax.set_xticks(range(len(groups)), groups, fontsize=7)
        ax.set_title(title, fontsize=10)
        if "(log)" in title:
            ax.set_yscale("log")
        ax.grid(True, axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"minibroker, Apache Kafka {KAFKA_VERSION}, kfake, Tansu: medians, {os.cpu_count()} cores shared "
                 "by broker and client" + (" (--quick: proves the harness, not a measurement)"
                                          if results.get("quick") else ""), fontsize=11)
    fig.tight_layout()
    fig.savefig(output, dpi=110)
    plt.close(fig)


def joint_name(sections: tuple[str, ...]) -> str:
    """The key of `section_seconds` for sections measured together ("memory, tools and latency")."""
    return ", ".join(sections[:-1]) + f" and {sections[-1]}" if len(sections) > 1 else sections[0]


def names_in(joint: str) -> list[str]:
    """The sections a key of `section_seconds` names (joint_name's inverse)."""
    return re.split(r", | and ", joint)


def other_sections(earlier: dict[str, Any], sections: list[str]) -> dict[str, Any]:
    """What `--update` keeps of earlier results: every section not measured again, with its seconds and run time."""
    kept: dict[str, Any] = {key: value for key, value in earlier.items() if key in SECTIONS and key not in sections}
    kept["section_seconds"] = {name: seconds for name, seconds in earlier.get("section_seconds", {}).items()
                               if not set(names_in(name)) & set(sections)}
    kept["section_runs"] = {name: when for name, when in earlier.get("section_runs", {}).items() if name in kept}
    return kept


# --- main -----------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one round: proves the harness works")
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--brokers", nargs="+", choices=ALL_BROKERS, default=list(ALL_BROKERS))
    parser.add_argument("--rounds", type=int,
                        help="runs per broker in startup, memory, tools, latency (default 5 for startup, else 3)")
    parser.add_argument("--update", action="store_true",
                        help="replace only the sections asked for in the existing results (each section's brokers "
                             "are still measured in one run)")
    parser.add_argument("--latency-rate", type=int, help="records/s offered in the latency section (default 5000)")
    parser.add_argument("--typical-tests", type=int, help="tests in each typical loop (default 50; --quick: 5)")
    parser.add_argument("--idle-wait", type=float,
                        help="wait at most this many seconds for an idle machine before each run (default 60; "
                             "--quick: 2, it measures nothing)")
    parser.add_argument("--start-timeout", type=float, help="seconds a broker may take to start (default 300)")
    parser.add_argument("--typical-worker", nargs=4, metavar=("BOOTSTRAP", "TESTS", "RECORDS", "PREFIX"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.typical_worker:
        bootstrap, tests, records, prefix = args.typical_worker
        return typical_worker(bootstrap, int(tests), int(records), prefix)

    sizes = Sizes(args.quick)
    if args.rounds:
        sizes.rounds = sizes.startup_rounds = args.rounds
    if args.typical_tests:
        sizes.typical_tests = args.typical_tests
    if args.latency_rate:
        sizes.latency_rate = args.latency_rate
    broker_module.QUIET_MAX_WAIT = args.idle_wait if args.idle_wait is not None else 2.0 if args.quick else 60.0
    if args.start_timeout:
        broker_module.BROKER_START_TIMEOUT = args.start_timeout
    brokers = tuple(args.brokers)
    out_dir = LOG_DIR if args.quick else RESULTS
    stem = "compare-quick" if args.quick else "compare"
    out_dir.mkdir(parents=True, exist_ok=True)
    LOG_DIR.mkdir(parents=True, exist_ok=True)

    started = time.monotonic()
    tansu = ensure_tansu()
    kfake = ensure_kfake() if "kfake" in brokers else None
    java_cp = java_classpath(JAVA_LIB)
    results: dict[str, Any] = {"quick": args.quick, "brokers": list(brokers), "versions": {
        "kafka": KAFKA_VERSION, "tansu": tansu, "kfake": kfake, "java_client": JAVA_LIB},
        "kafka_note": "Kafka writes its log to the page cache and does not fsync each write (its defaults)",
        "section_seconds": {}, "section_runs": {}}
    earlier_path = out_dir / f"{stem}.json"
    if args.update and earlier_path.is_file():
        earlier = json.loads(earlier_path.read_text())
        if earlier.get("brokers") != list(brokers) or earlier.get("quick") != args.quick:
            raise SystemExit(f"--update: {earlier_path} holds another set of brokers or sizes")
        results.update(other_sections(earlier, args.sections))
    run_started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    shared = tuple(name for name in SHARED_BROKER_SECTIONS if name in args.sections)
    for section in args.sections:
        if section in shared[1:]:
            continue  # measured with the first of them
        log(f"section {section}")
        t0 = time.monotonic()
        if section == "startup":
            results[section] = section_startup(sizes, brokers)
        elif section == "typical":
            results[section] = section_typical(sizes, brokers, java_cp)
        elif section == "throughput":
            results[section] = section_throughput(sizes, brokers, args.quick, out_dir, "-quick" if args.quick else "")
        else:  # memory, tools, latency: the first of them asked for runs those asked for, on one broker per round
            results.update(shared_broker_sections(sizes, brokers, shared))
            section = joint_name(shared)
        results["section_seconds"][section] = round(time.monotonic() - t0, 1)
        for name in names_in(section):
            results["section_runs"][name] = run_started
    # with --update, the sections' own times (they come from several runs)
    results["total_seconds"] = round(sum(results["section_seconds"].values()) if args.update
                                     else time.monotonic() - started, 1)

    table = markdown_table(results)
    (out_dir / f"{stem}.json").write_text(json.dumps(results, indent=2) + "\n")
    (out_dir / f"{stem}.md").write_text(table + "\n")
    try:
        plot(results, out_dir / f"{stem}.png")
    except ImportError:
        log("matplotlib missing (the `bench` extra): no plot")
    print(table)
    print(textwrap.dedent(f"""
        sections (s): {results['section_seconds']}; total {results['total_seconds']} s
        wrote {out_dir / stem}.json, .md, .png"""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
