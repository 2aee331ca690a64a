"""Records/s through three share consumers of one share group on one partition (KIP-932), minibroker beside
Apache Kafka 4.3.1 in the same run (issue 26).

Usage: .venv/bin/python bench/share_groups.py [--quick] [--rounds N] [--records N]

Per round and broker (fresh brokers, alternating, an idle wait before each): one topic of one partition, its
records produced first (100-byte values in 16 KB batches, the Java producer's default size), the
group's `share.auto.offset.reset` set to earliest, then three confluent-kafka `ShareConsumer`s in one group
(implicit acknowledgement, one thread each) until every record is taken. The rate is counted from the first
record any consumer got to the last one: a share group's first member gets its partition a heartbeat after
joining (`group.share.heartbeat.interval.ms`, 5 s on both brokers), and that wait is reported apart. Broker CPU
seconds are the broker process's over the consuming. Kafka acquires whole stored batches, so the three consumers
take turns batch by batch on both brokers.

Writes bench/results/share_groups.json (--quick: .cache/bench-logs/share_groups-quick.json). Numbers, not
assertions.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.brokers import KAFKA_VERSION, create_topic, log, start_broker, wait_for_quiet  # noqa: E402

BROKERS = ("minibroker", "kafka")
CONSUMERS = 3
VALUE = b"x" * 100
BATCH_BYTES = 16_384
GROUP = "bench-share"


def _set_earliest(bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    earliest = ConfigResource(ResourceType.GROUP, GROUP, incremental_configs=[
        ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)])
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 4})  # kept until the futures are done
    for done in admin.incremental_alter_configs([earliest]).values():
        done.result(30)


def _produce(bootstrap: str, topic: str, records: int) -> None:
    from confluent_kafka import Producer

    # 16 KB batches (the Java producer's default): Kafka hands out whole stored batches, and librdkafka's 1 MB
    # ones would give a consumer thousands of records at a time
    producer = Producer({"bootstrap.servers": bootstrap, "log_level": 4, "batch.size": BATCH_BYTES})
    for _ in range(records):
        while True:
            try:
                producer.produce(topic, VALUE)
                break
            except BufferError:
                producer.poll(0.05)
    if producer.flush(120):
        raise RuntimeError("records were not acknowledged")


def one_round(kind: str, records: int, rnd: int) -> dict[str, Any]:
    """One fresh broker: produce, then three share consumers take every record; the rate and the CPU."""
    from confluent_kafka import ShareConsumer

    broker = start_broker(kind, f"share-{kind}-{rnd}")
    try:
        bootstrap, topic = broker.bootstrap_servers, f"share-bench-{rnd}"
        create_topic(bootstrap, topic, 1)
        _set_earliest(bootstrap)
        _produce(bootstrap, topic, records)
        taken = [0] * CONSUMERS
        first: list[float] = []
        last = [0.0]
        lock = threading.Lock()
        done = threading.Event()
        deadline = time.monotonic() + 300

        def consume(index: int) -> None:
            consumer = ShareConsumer({"bootstrap.servers": bootstrap, "group.id": GROUP, "log_level": 4})
            consumer.subscribe([topic])
            try:
                while not done.is_set() and time.monotonic() < deadline:
                    got = [m for m in consumer.poll(0.2) if m.error() is None]
                    if got:
                        with lock:
                            if done.is_set():
                                break  # the others took the rest: records this one held come back on close
                            now = time.monotonic()
                            if not first:
                                first.append(now)
                            last[0] = now
                            taken[index] += len(got)
                            if sum(taken) >= records:
                                done.set()
            finally:
                consumer.close()

        cpu_before, started = broker.cpu_seconds(), time.monotonic()
        threads = [threading.Thread(target=consume, args=(i,)) for i in range(CONSUMERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        cpu = broker.cpu_seconds() - cpu_before
        total = sum(taken)
        if total < records or not first:
            return {"error": f"took {total} of {records} records in 300 s", "taken": taken}
        span = max(last[0] - first[0], 1e-6)
        return {"records": total, "records_per_s": round((total - 1) / span), "first_record_s":
                round(first[0] - started, 2), "per_consumer": taken, "broker_cpu_s": round(cpu, 2)}
    finally:
        broker.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="few records, one round: proves the harness works")
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--records", type=int)
    args = parser.parse_args(argv)
    rounds = args.rounds or (1 if args.quick else 3)
    records = args.records or (20_000 if args.quick else 300_000)
    samples: dict[str, list[dict[str, Any]]] = {kind: [] for kind in BROKERS}
    for rnd in range(1, rounds + 1):
        for kind in BROKERS:
            wait_for_quiet()
            try:
                sample = one_round(kind, records, rnd)
            except Exception as exc:  # a failed run is reported, the others go on
                sample = {"error": repr(exc)}
            log(f"share groups {kind} round {rnd}: {sample}")
            samples[kind].append(sample)
    summary = {}
    for kind, runs in samples.items():
        good = [run for run in runs if "error" not in run]
        summary[kind] = {
            "records_per_s": statistics.median(r["records_per_s"] for r in good) if good else None,
            "broker_cpu_s_per_million": statistics.median(
                r["broker_cpu_s"] * 1e6 / r["records"] for r in good) if good else None,
            "first_record_s": statistics.median(r["first_record_s"] for r in good) if good else None}
    result = {"kafka_version": KAFKA_VERSION, "records": records, "value_bytes": len(VALUE), "batch_bytes": BATCH_BYTES,
              "consumers": CONSUMERS, "rounds": rounds, "summary": summary, "samples": samples}
    out = (ROOT / ".cache" / "bench-logs" / "share_groups-quick.json" if args.quick
           else ROOT / "bench" / "results" / "share_groups.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
