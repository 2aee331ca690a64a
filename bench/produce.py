"""Produce benchmark: minibroker against Tansu 0.6.0 (and Kafka, kfake) with confluent-kafka and the Java client.

Usage: .venv/bin/python bench/produce.py [--quick] [--rounds N] [--records N] [--brokers ...] [--java-lib 4.3.1]
Writes bench/results/produce.json (--quick: .cache/bench-logs/produce-quick.json);
bench/README.md describes the method.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from brokers import ALL_BROKERS as BROKER_CHOICES  # noqa: E402
from brokers import (  # noqa: E402
    JAVA_LIBS,
    LOG_DIR,
    QUICK_RECORDS,
    READY_TIMEOUT,
    RECORD_SIZE,
    ROOT,
    Broker,
    BrokerSource,
    ClientProcess,
    RoundBroker,
    create_topic,
    ensure_kfake,
    ensure_tansu,
    fresh_broker,
    java_classpath,
    java_client_command,
    kafka_clients_version,
    log,
    machine_busy_seconds,
    wait_for_quiet,
)

RESULTS = ROOT / "bench" / "results" / "produce.json"
JAVA_BATCH_SIZE = 16384
# records per run: 0.3 GB, so a 10 ms tick of CPU time is about 1% of the broker's CPU in a Java run
CLIENTS = {"confluent": 300_000, "confluent-1mb": 300_000, "java": 300_000}
DEFAULT_CLIENTS = ("confluent", "java")
# librdkafka's defaults already allow 1 MB batches (batch.size 1000000) but send after linger.ms 5: this variant
# waits long enough for them to fill.
CONFLUENT_1MB = {"batch.size": 1_000_000, "linger.ms": 100}
DEFAULT_ROUNDS = 3
WARMUP_FRACTION, WARMUP_MAX = 0.1, 10_000  # untimed records sent first (JIT, connections, buffers)
PARTITIONS = (1, 6)
PARTITION_CHOICES = (1, 6, 100)
BROKERS = ("minibroker", "tansu")  # the default pair; --brokers picks from BROKER_CHOICES


# --- the confluent-kafka producer (runs in its own process) --------------------------------------


def confluent_worker(bootstrap: str, topic: str, count: int, warmup: int, variant: str = "confluent") -> int:
    """Produces `count` records with librdkafka defaults plus idempotence (`confluent-1mb`: plus CONFLUENT_1MB);
    prints a JSON result."""
    from confluent_kafka import KafkaException, Producer

    extra = CONFLUENT_1MB if variant == "confluent-1mb" else {}
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all", **extra})
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
    if client.startswith("confluent"):
        script = str(Path(__file__).resolve())
        return [sys.executable, script, "--confluent-worker", bootstrap, topic, str(count), warmup, client]
    return java_client_command(java_cp, "ProduceBench", bootstrap, topic, str(count), warmup, str(RECORD_SIZE),
                               str(JAVA_BATCH_SIZE))


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


def run_once(run: Run, count: int, java_cp: str, source: BrokerSource = fresh_broker) -> Run:
    """A broker from `source` (fresh by default), a topic, a producer; measures the timed phase. Stops every
    process it started."""
    name = f"{run.client}-p{run.partitions}-{run.broker}-r{run.round}"
    topic = f"bench-{run.client}-p{run.partitions}"
    run.quiet_wait_s = wait_for_quiet()
    with source(run, name) as broker:
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


def summarize(runs: list[Any], keys: tuple[str, ...] = SUMMARY_KEYS,
              brokers: tuple[str, ...] = BROKERS) -> list[dict[str, Any]]:
    """Median per (client, partitions, broker) over good runs, and minibroker's ratios to each other broker
    (`ratios`; the minibroker/Tansu pair also as `throughput_ratio` and `cpu_per_gb_ratio`, which plot.py reads)."""
    out = []
    for client, partitions in dict.fromkeys((r.client, r.partitions) for r in runs):
        entry: dict[str, Any] = {"client": client, "partitions": partitions}
        for broker in brokers:
            good = [r for r in runs if (r.client, r.partitions, r.broker) == (client, partitions, broker)
                    and not r.error]
            entry[broker] = {key: statistics.median(getattr(r, key) for r in good) if good else None
                             for key in keys}
            entry[broker]["runs"] = len(good)
        if "minibroker" in brokers:
            mb = entry["minibroker"]
            entry["ratios"] = {other: {"throughput": ratio(mb["records_per_s"], entry[other]["records_per_s"]),
                                       "cpu_per_gb": ratio(mb["cpu_s_per_gb"], entry[other]["cpu_s_per_gb"])}
                               for other in brokers if other != "minibroker"}
            if "tansu" in brokers:
                entry["throughput_ratio"] = entry["ratios"]["tansu"]["throughput"]
                entry["cpu_per_gb_ratio"] = entry["ratios"]["tansu"]["cpu_per_gb"]
        out.append(entry)
    return out


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def summary_table(summary: list[dict[str, Any]], latency: bool = True) -> str:
    """Medians per broker and minibroker's ratios (thr: records/s, cpu: CPU s/GB) to every other broker."""
    def num(value: float | None, fmt: str) -> str:
        return "-" if value is None else fmt.format(value)

    if not summary:
        return "(no runs)"
    brokers = [b for b in summary[0] if isinstance(summary[0][b], dict) and "runs" in summary[0][b]]
    others = list(summary[0].get("ratios", {}))
    headers = ["client", "parts", *(f"{b} rec/s" for b in brokers), *(f"{b} CPU s/GB" for b in brokers),
               *(f"mb/{o} thr" for o in others), *(f"mb/{o} cpu" for o in others)]
    headers += [f"{b} p50/p99 ms" for b in brokers] if latency else []
    rows = []
    for e in summary:
        row = [e["client"], str(e["partitions"])]
        row += [num(e[b]["records_per_s"], "{:,.0f}") for b in brokers]
        row += [num(e[b]["cpu_s_per_gb"], "{:.2f}") for b in brokers]
        row += [num(e["ratios"][o]["throughput"], "{:.2f}") for o in others]
        row += [num(e["ratios"][o]["cpu_per_gb"], "{:.2f}") for o in others]
        if latency:
            row += [f"{num(e[b]['p50_ms'], '{:.0f}')}/{num(e[b]['p99_ms'], '{:.0f}')}" for b in brokers]
        rows.append(row)
    return format_table(headers, rows)


def alternate(cells: list[tuple[str, int, int]], rounds: int, run_one: Callable[..., Any],
              columns: tuple[tuple[str, str, str], ...] = COLUMNS, brokers: tuple[str, ...] = BROKERS,
              per_round: bool = False, bench: str = "produce") -> list[Any]:
    """Runs each (client, partitions, records) cell `rounds` times per broker, the brokers alternating.

    `run_one(client, partitions, broker, round, records, source)` gets its broker from `source(run, name)`: a fresh
    one per run (`fresh_broker`), or with `per_round` the round's `RoundBroker`, which runs every cell in turn and
    is stopped before the next broker kind starts (so one broker runs at a time either way)."""
    runs = []

    def one(client: str, partitions: int, broker: str, rnd: int, count: int, source: BrokerSource) -> None:
        log(f"{client} {partitions}p {broker} round {rnd}: {count:,} records")
        run = run_one(client, partitions, broker, rnd, count, source)
        runs.append(run)
        print(format_table([c[0] for c in columns], [run_row(run, columns)]) + "\n", flush=True)
        if run.error:
            log(f"run failed: {run.error}")

    if not per_round:
        for client, partitions, count in cells:
            for rnd in range(1, rounds + 1):
                for broker in brokers:
                    one(client, partitions, broker, rnd, count, fresh_broker)
        return runs
    for rnd in range(1, rounds + 1):
        for broker in brokers:
            shared = RoundBroker(broker, f"{bench}-{broker}-r{rnd}")
            try:
                for client, partitions, count in cells:
                    one(client, partitions, broker, rnd, count, shared.lend)
            finally:
                shared.stop()
    return runs


def report(runs: list[Any], env: dict[str, Any], settings: dict[str, Any], output: Path,
           columns: tuple[tuple[str, str, str], ...] = COLUMNS, keys: tuple[str, ...] = SUMMARY_KEYS,
           brokers: tuple[str, ...] = BROKERS) -> int:
    """Prints every run and the summary, writes the JSON; returns the exit status (1 if a run failed)."""
    summary = summarize(runs, keys, brokers)
    print("\nAll runs:\n" + format_table([c[0] for c in columns], [run_row(r, columns) for r in runs]))
    print("\nSummary (median per broker; ratios are minibroker / the other broker):\n"
          + summary_table(summary, latency="p50_ms" in keys))
    output.parent.mkdir(parents=True, exist_ok=True)
    payload = {"environment": env, "settings": settings, "runs": [vars(r) for r in runs], "summary": summary}
    output.write_text(json.dumps(payload, indent=2) + "\n")
    log(f"wrote {output}")
    return 1 if any(r.error for r in runs) else 0


def environment(tansu_version: str, java_lib: str = "3.9", kfake_version: str | None = None) -> dict[str, Any]:
    import confluent_kafka

    def git(*args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)
        return proc.stdout.strip()

    env = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "cpus": os.cpu_count(),
           "platform": platform.platform(), "python": platform.python_version(),
           "git_commit": git("rev-parse", "HEAD"),
           "git_dirty": bool(git("status", "--porcelain", "minibroker")),
           "tansu": tansu_version, "confluent_kafka": confluent_kafka.__version__,
           "librdkafka": confluent_kafka.libversion()[0], "kafka_clients": kafka_clients_version(java_lib),
           "record_size": RECORD_SIZE, "java_batch_size": JAVA_BATCH_SIZE}
    if kfake_version:
        env["kfake"] = kfake_version
    return env


# --- main -------------------------------------------------------------------------------------------


def bench_parser(doc: str | None, rounds: int, records_help: str, clients: list[str], results: Path,
                 worker_args: tuple[str, ...], default_clients: list[str] | None = None) -> argparse.ArgumentParser:
    """The options of the throughput benchmarks here (this one and consume.py), --partitions aside."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help=f"1 round of {QUICK_RECORDS:,} records per run")
    parser.add_argument("--rounds", type=int, help=f"runs per broker for each client and topic (default {rounds})")
    parser.add_argument("--records", type=int, help=records_help)
    parser.add_argument("--clients", nargs="+", choices=sorted(clients), default=default_clients or clients)
    parser.add_argument("--brokers", nargs="+", choices=BROKER_CHOICES, default=list(BROKERS),
                        help=f"brokers to alternate (default {' '.join(BROKERS)})")
    parser.add_argument("--java-lib", choices=sorted(JAVA_LIBS), default="3.9",
                        help="the kafka-clients set the Java program runs with (default 3.9, the old figures)")
    parser.add_argument("--output", type=Path, help=f"JSON output path (default {results.relative_to(ROOT)})")
    parser.add_argument("--wide-clients", nargs="+", choices=sorted(clients), metavar="CLIENT",
                        help="the clients that also run on 100 partitions (default: every client asked for)")
    parser.add_argument("--broker-per-round", action="store_true",
                        help="one broker per round and kind runs every client and partition count in turn, its "
                             "topics deleted after each run (default: a fresh broker per run)")
    parser.add_argument("--confluent-worker", nargs=len(worker_args), metavar=worker_args, help=argparse.SUPPRESS)
    return parser


def prepare(clients: list[str], brokers: tuple[str, ...] = BROKERS,
            java_lib: str = "3.9") -> tuple[dict[str, Any], str]:
    """Tansu, kfake and, if needed, the compiled Java programs; returns the environment and the Java classpath."""
    tansu_version = ensure_tansu()
    kfake_version = ensure_kfake() if "kfake" in brokers else None
    java_cp = java_classpath(java_lib) if "java" in clients else ""
    env = environment(tansu_version, java_lib, kfake_version)
    log(f"{tansu_version}; kafka-clients {env['kafka_clients']}; librdkafka {env['librdkafka']}")
    return env, java_cp


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = bench_parser(__doc__, DEFAULT_ROUNDS, "records per run (overrides the per-client default)",
                          list(CLIENTS), RESULTS, ("BOOTSTRAP", "TOPIC", "COUNT", "WARMUP", "VARIANT"),
                          list(DEFAULT_CLIENTS))
    parser.add_argument("--partitions", nargs="+", type=int, choices=PARTITION_CHOICES, default=list(PARTITIONS))
    parser.add_argument("--client-records", nargs="+", default=[], metavar="CLIENT=N",
                        help="records per run of one client, over --records (e.g. java=30000: the Java client's "
                             "16 KB batches make its runs the slowest)")
    return parser.parse_args(argv)


def client_records(args: argparse.Namespace) -> dict[str, int]:
    """Records per run of each client asked for: --client-records, else --records, else the client's default."""
    chosen = {}
    for item in args.client_records:
        client, _, count = item.partition("=")
        if client not in CLIENTS or not count.isdigit():
            raise SystemExit(f"--client-records: {item!r} is not CLIENT=N with CLIENT one of {', '.join(CLIENTS)}")
        chosen[client] = int(count)
    return {c: chosen.get(c) or args.records or (QUICK_RECORDS if args.quick else CLIENTS[c]) for c in args.clients}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.confluent_worker:
        bootstrap, topic, count, warmup, variant = args.confluent_worker
        return confluent_worker(bootstrap, topic, int(count), int(warmup), variant)

    rounds = args.rounds or (1 if args.quick else DEFAULT_ROUNDS)
    records = client_records(args)
    output = args.output or (LOG_DIR / "produce-quick.json" if args.quick else RESULTS)
    brokers = tuple(args.brokers)
    env, java_cp = prepare(args.clients, brokers, args.java_lib)

    wide = args.wide_clients or args.clients
    cells = [(client, partitions, records[client]) for client in args.clients for partitions in args.partitions
             if partitions < 100 or client in wide]
    runs = alternate(cells, rounds, lambda client, partitions, broker, rnd, count, source:
                     run_once(Run(client, partitions, broker, rnd), count, java_cp, source), COLUMNS, brokers,
                     args.broker_per_round)
    settings = {"rounds": rounds, "quick": args.quick, "records": records, "brokers": list(brokers),
                "java_lib": args.java_lib, "confluent_1mb": CONFLUENT_1MB, "broker_per_round": args.broker_per_round,
                "warmup_records": {c: min(WARMUP_MAX, int(n * WARMUP_FRACTION)) for c, n in records.items()}}
    return report(runs, env, settings, output, COLUMNS, SUMMARY_KEYS, brokers)


if __name__ == "__main__":
    sys.exit(main())
