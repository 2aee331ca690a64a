"""Consume benchmark: minibroker against Tansu 0.6.0 with confluent-kafka and the Java client.

Usage: .venv/bin/python bench/consume.py [--quick] [--rounds N] [--records N]
Writes bench/results/consume.json (--quick: .cache/bench-logs/consume-quick.json);
bench/README.md describes the method. The brokers, the idle wait, the CPU accounting and the
report are bench/produce.py's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from brokers import (  # noqa: E402
    LOG_DIR,
    QUICK_RECORDS,
    READY_TIMEOUT,
    RECORD_SIZE,
    ROOT,
    BrokerSource,
    ClientProcess,
    create_topic,
    fresh_broker,
    java_client_command,
    wait_for_quiet,
)
from produce import COLUMNS as PRODUCE_COLUMNS  # noqa: E402
from produce import (  # noqa: E402
    RunId,
    alternate,
    bench_parser,
    prepare,
    rates,
    report,
    timed_phase,
)

RESULTS = ROOT / "bench" / "results" / "consume.json"
CLIENTS = ("confluent", "java")
RECORDS = 300_000  # preloaded, then consumed, per run
PARTITIONS = (1, 6)
WIDE_PARTITIONS = 100  # one more row, for WIDE_CLIENTS only
WIDE_CLIENTS = ("confluent", "java")
ROUNDS = 3
CONFLUENT_BATCH = 1000  # messages per Consumer.consume() call
GROUP_ID = "bench-consume"  # confluent-kafka wants one even for assign(); nothing is committed

# produce.py's columns, with the time to the first record in place of the produce latencies
_KEPT = tuple(c for c in PRODUCE_COLUMNS if c[1] not in ("p50_ms", "p99_ms"))
COLUMNS = _KEPT[:8] + (("first ms", "first_record_ms", "{:.0f}"),) + _KEPT[8:]
SUMMARY_KEYS = ("records_per_s", "mb_per_s", "first_record_ms", "cpu_s_per_gb")


# --- the untimed preload (in this process) -----------------------------------------------------------


def preload(bootstrap: str, topic: str, partitions: int, count: int) -> None:
    """Writes `count` records of RECORD_SIZE bytes, an equal share to each partition, acks=all."""
    from confluent_kafka import KafkaException, Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "log_level": 4})
    value = os.urandom(RECORD_SIZE)
    errors: list[str] = []

    def on_delivery(err: Any, _msg: Any) -> None:
        if err is not None:
            errors.append(str(err))

    # Partition by partition, so the stored batches are full ones whatever the partition count.
    for partition in range(partitions):
        for _ in range(count // partitions + (partition < count % partitions)):
            while True:
                try:
                    producer.produce(topic, value, partition=partition, on_delivery=on_delivery)
                    break
                except BufferError:
                    producer.poll(0.005)
    unflushed = producer.flush(max(60.0, count / 1000))
    if unflushed or errors:
        raise KafkaException(f"preload: {unflushed} unflushed, {len(errors)} failed: {errors[:1]}")


# --- the confluent-kafka consumer (runs in its own process) ------------------------------------------


def confluent_worker(bootstrap: str, topic: str, count: int, timeout: float) -> int:
    """Reads `count` records from offset 0 of every partition with librdkafka defaults; prints a JSON result."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP_ID, "enable.auto.commit": False})
    # Metadata before the signal: the connection is open when the timed phase starts.
    partitions = sorted(consumer.list_topics(topic, timeout=60).topics[topic].partitions)
    print(json.dumps({"ready": True, "partitions": len(partitions)}), flush=True)
    sys.stdin.readline()

    records = value_bytes = 0
    first_s = -1.0
    errors: list[str] = []
    consume = consumer.consume
    start = time.perf_counter()
    consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
    while records < count and time.perf_counter() - start < timeout:
        for msg in consume(CONFLUENT_BATCH, 0.5):
            if msg.error() is None:
                records += 1
                value_bytes += len(msg.value() or b"")
            else:
                errors.append(str(msg.error()))
        if first_s < 0 and records:
            first_s = time.perf_counter() - start
    elapsed = time.perf_counter() - start
    consumer.close()
    result: dict[str, Any] = {"records": records, "value_bytes": value_bytes, "seconds": elapsed,
                              "first_record_ms": first_s * 1000}
    if errors:
        result["error"] = f"{len(errors)} errors, first: {errors[0]}"
    print(json.dumps(result), flush=True)
    return 0 if records >= count else 1


# --- one run ------------------------------------------------------------------------------------------


@dataclass
class Run(RunId):
    """The measurements of one consume run."""

    records: int = 0
    value_bytes: int = 0  # record values consumed: the GB of CPU s/GB and MB/s
    seconds: float = 0.0
    records_per_s: float = 0.0
    mb_per_s: float = 0.0
    first_record_ms: float = 0.0  # from assign to the first record in the client's hands
    broker_cpu_s: float = 0.0
    cpu_s_per_gb: float = 0.0
    client_cpu_s: float = 0.0
    broker_rss_mb: float = 0.0
    other_cpu_s: float = 0.0  # CPU used by every other process during the run: noise on a shared machine
    quiet_wait_s: float = 0.0  # time spent waiting for an idle machine before the timed phase
    preload_s: float = 0.0  # untimed
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def consume_timeout(count: int) -> float:
    return 60.0 + count / 1000


def client_command(client: str, bootstrap: str, topic: str, count: int, java_cp: str) -> list[str]:
    timeout = str(consume_timeout(count))
    if client == "confluent":
        script = str(Path(__file__).resolve())
        return [sys.executable, script, "--confluent-worker", bootstrap, topic, str(count), timeout]
    return java_client_command(java_cp, "ConsumeBench", bootstrap, topic, str(count), timeout)


def run_once(run: Run, count: int, java_cp: str, source: BrokerSource = fresh_broker) -> Run:
    """A broker from `source` (fresh by default), a topic and its preload, then a consumer reads it all; measures
    that read only."""
    name = f"consume-{run.client}-p{run.partitions}-{run.broker}-r{run.round}"
    topic = f"bench-{run.client}-p{run.partitions}"
    with source(run, name) as broker:
        create_topic(broker.bootstrap_servers, topic, run.partitions)
        start = time.perf_counter()
        preload(broker.bootstrap_servers, topic, run.partitions, count)
        run.preload_s = time.perf_counter() - start
        with ClientProcess(client_command(run.client, broker.bootstrap_servers, topic, count, java_cp),
                           LOG_DIR / f"{name}.client.log") as client:
            client.read_json(READY_TIMEOUT, broker)
            # After the preload and the client's start-up (a JVM), both of which leave work behind.
            run.quiet_wait_s = wait_for_quiet()
            result = timed_phase(run, broker, client, consume_timeout(count) + 30.0)
        run.records = int(result["records"])
        run.value_bytes = int(result["value_bytes"])
        run.seconds = float(result["seconds"])
        run.first_record_ms = float(result["first_record_ms"])
        rates(run, run.value_bytes)
        if run.records != count or run.value_bytes != count * RECORD_SIZE or result.get("error"):
            run.error = (f"{run.records}/{count} records, {run.value_bytes} value bytes: "
                         f"{result.get('error')}")
    return run


# --- main ---------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = bench_parser(__doc__, ROUNDS, f"records per run (default {RECORDS:,})", list(CLIENTS), RESULTS,
                          ("BOOTSTRAP", "TOPIC", "COUNT", "TIMEOUT"))
    parser.add_argument("--partitions", nargs="+", type=int, default=[*PARTITIONS, WIDE_PARTITIONS],
                        help=f"partition counts (default {' '.join(map(str, PARTITIONS))} {WIDE_PARTITIONS}; "
                             f"{WIDE_PARTITIONS} only with {', '.join(WIDE_CLIENTS)})")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.confluent_worker:
        bootstrap, topic, count, timeout = args.confluent_worker
        return confluent_worker(bootstrap, topic, int(count), float(timeout))

    rounds = args.rounds or (1 if args.quick else ROUNDS)
    records = args.records or (QUICK_RECORDS if args.quick else RECORDS)
    output = args.output or (LOG_DIR / "consume-quick.json" if args.quick else RESULTS)
    brokers = tuple(args.brokers)
    env, java_cp = prepare(args.clients, brokers, args.java_lib)
    del env["java_batch_size"]  # a producer setting

    wide = args.wide_clients or WIDE_CLIENTS
    cells = [(client, partitions, records) for client in args.clients for partitions in args.partitions
             if partitions != WIDE_PARTITIONS or client in wide]
    runs = alternate(cells, rounds, lambda client, partitions, broker, rnd, count, source:
                     run_once(Run(client, partitions, broker, rnd), count, java_cp, source), COLUMNS, brokers,
                     args.broker_per_round, "consume")
    settings = {"rounds": rounds, "quick": args.quick, "records": records, "brokers": list(brokers),
                "java_lib": args.java_lib, "broker_per_round": args.broker_per_round,
                "confluent_consume_batch": CONFLUENT_BATCH, "gb": "record value bytes consumed / 1e9"}
    return report(runs, env, settings, output, COLUMNS, SUMMARY_KEYS, brokers)


if __name__ == "__main__":
    sys.exit(main())
