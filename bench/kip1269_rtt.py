"""KIP-1269 round-trip-time experiment: producer throughput and latency against RTT and in-flight requests.

A broker process (`minibroker serve`) runs behind an in-process latency proxy
(`minibroker.testing.latency_proxy`, RTT/2 each way) and advertises the proxy,
so every request of the client goes through it. For each RTT x in-flight cell:
a fresh proxy and broker, a topic with 1 partition and the topic config
producer.state.batches.to.retain=20, and the project's idempotent Producer
with max_in_flight_requests_per_connection = the cell's in-flight value. The
bench keeps a bounded number of records un-acked (the Producer has no
buffer.memory), enough to keep every in-flight slot busy with full batches.

Usage: .venv/bin/python bench/kip1269_rtt.py [--rtts 0 20 100] [--in-flight 1 5 10 20] [--seconds 8]
Prints the KIP's table as Markdown, writes bench/results/kip1269_rtt.json and bench/results/kip1269_rtt.png.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import math
import os
import platform
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import uvloop

from minibroker.client.client import KafkaClient
from minibroker.client.producer import Producer, RecordMetadata
from minibroker.client.stamping import stamp
from minibroker.protocol.messages import CreateTopicsRequest
from minibroker.testing.latency_proxy import LatencyProxy
from minibroker.testing.process import BrokerProcess, start_broker

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
WINDOW = 20  # producer.state.batches.to.retain of the topic
PARTITION = 0
GOAL_RTT_MS, GOAL_HIGH, GOAL_LOW, GOAL_RATIO = 100.0, 20, 5, 3.6


def log(msg: str) -> None:
    print(f"[kip1269-rtt] {msg}", file=sys.stderr, flush=True)


@dataclass
class Cell:
    """One RTT x in-flight measurement."""

    rtt_ms: float
    in_flight: int
    seconds: float
    records_per_request: int
    outstanding_records: int
    records: int = 0  # acknowledged inside the measured window
    records_per_s: float = 0.0
    mb_per_s: float = 0.0  # 10^6 bytes of record values per second
    ideal_records_per_s: float | None = None  # request size x in-flight / RTT; None at RTT 0 (unbounded)
    latency_ms: dict[str, float] = field(default_factory=dict)  # send() -> ack, per record
    mean_in_flight: float = 0.0  # batches of the partition in flight, sampled every 5 ms in the window
    max_in_flight_seen: int = 0  # over the whole run, warm-up included
    partition_limit: int = 0
    errors: int = 0
    load_average: float = 0.0  # 1-minute load average when the cell started (2 cores: > 2 means contention)

    @property
    def efficiency(self) -> float | None:
        return None if not self.ideal_records_per_s else self.records_per_s / self.ideal_records_per_s

    @property
    def in_flight_ok(self) -> bool:
        return self.max_in_flight_seen <= self.in_flight


def percentile(ordered: list[float], p: float) -> float:
    """Nearest-rank percentile of an ascending list."""
    if not ordered:
        return math.nan
    return ordered[max(math.ceil(p / 100 * len(ordered)) - 1, 0)]


async def create_topic(bootstrap: str, topic: str) -> None:
    """One partition, producer.state.batches.to.retain=20 as a topic config (through the proxy, like the client)."""
    client = KafkaClient(bootstrap, "kip1269-rtt-admin")
    await client.start()
    try:
        config = CreateTopicsRequest.CreatableTopic.CreatableTopicConfig
        request = CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
            name=topic, num_partitions=1, replication_factor=1, assignments=[],
            configs=[config(name="producer.state.batches.to.retain", value=str(WINDOW))])],
            timeout_ms=10_000, validate_only=False)
        response = await client.request(next(iter(client.nodes)), request, 7)
        if response.topics[0].error_code:
            raise RuntimeError(f"CreateTopics {topic}: error {response.topics[0].error_code}")
    finally:
        await client.close()


async def run_cell(rtt_ms: float, in_flight: int, args: argparse.Namespace) -> Cell:
    """Proxy + broker + producer for one cell; measures `args.seconds` after a warm-up."""
    per_request = max(args.batch_size // args.record_size, 1)
    # un-acked records the bench allows: every in-flight slot full twice over, plus the batch being filled
    outstanding = (2 * in_flight + 2) * per_request
    cell = Cell(rtt_ms, in_flight, args.seconds, per_request, outstanding, load_average=os.getloadavg()[0])
    if rtt_ms > 0:
        cell.ideal_records_per_s = per_request * in_flight / (rtt_ms / 1000)

    proxy = LatencyProxy("127.0.0.1", 0, one_way_delay_ms=rtt_ms / 2)
    await proxy.start()  # first, so the broker can advertise its port
    broker: BrokerProcess | None = None
    try:
        broker = await asyncio.to_thread(start_broker, extra_args=("--advertised-listeners", proxy.address))
        proxy.target = ("127.0.0.1", broker.port)
        topic = f"kip1269-rtt-{uuid.uuid4().hex[:8]}"
        await create_topic(proxy.address, topic)
        producer = Producer(proxy.address, max_in_flight_requests_per_connection=in_flight,
                            batch_size=args.batch_size, linger_ms=args.linger_ms)
        await producer.start()
        try:
            await measure(producer, topic, cell, args)
        finally:
            await producer.close()
        cell.max_in_flight_seen = producer.max_in_flight_seen(topic, PARTITION)
        cell.partition_limit = producer.partition_limit(topic, PARTITION)
    finally:
        await proxy.stop()
        if broker is not None:
            await asyncio.to_thread(broker.stop)
    return cell


async def measure(producer: Producer, topic: str, cell: Cell, args: argparse.Namespace,
                  expected_limit: int | None = WINDOW, name: str | None = None) -> None:
    """Send as fast as the outstanding bound allows; record acks and latencies inside the window.

    The warm-up lasts until the producer's partition limit is `expected_limit` (the window the first v14
    answer tells); `name` stamps the records."""
    value = os.urandom(args.record_size)
    name = name or f"kip1269-rtt-{cell.rtt_ms:g}ms-{cell.in_flight}"
    slots = asyncio.Semaphore(cell.outstanding_records)
    latencies: list[float] = []
    window: list[float] = []  # [start, end] once the warm-up is over
    stopping = False

    def acked(sent_at: float, future: asyncio.Future[RecordMetadata]) -> None:
        slots.release()
        now = time.perf_counter()
        if future.cancelled() or future.exception() is not None:
            cell.errors += 1
        elif window and window[0] <= now < window[1]:
            latencies.append(now - sent_at)

    async def pump() -> None:
        sequence = 0
        while not stopping:
            await slots.acquire()
            sent_at = time.perf_counter()
            future = await producer.send(topic, value, partition=PARTITION, headers=stamp(name, sequence))
            future.add_done_callback(functools.partial(acked, sent_at))
            sequence += 1
            if sequence % cell.records_per_request == 0:
                await asyncio.sleep(0)  # send() does not yield: let answers, the sender and the proxy run

    pumping = asyncio.create_task(pump())
    # warm-up: connections, the window learnt from the first v14 answer, a few round trips of steady state
    warm_until = time.perf_counter() + max(args.warmup, 5 * cell.rtt_ms / 1000)
    give_up = warm_until + 30
    while time.perf_counter() < warm_until or producer.partition_limit(topic, PARTITION) != expected_limit:
        if time.perf_counter() > give_up or pumping.done():
            break
        await asyncio.sleep(0.05)
    start = time.perf_counter()
    window[:] = [start, start + cell.seconds]
    samples: list[int] = []
    while time.perf_counter() < window[1] and not pumping.done():
        samples.append(producer.in_flight(topic, PARTITION))
        await asyncio.sleep(0.005)
    stopping = True
    pumping.cancel()
    try:
        await pumping
    except asyncio.CancelledError:
        pass

    latencies.sort()
    cell.records = len(latencies)
    cell.records_per_s = len(latencies) / cell.seconds
    cell.mb_per_s = cell.records_per_s * args.record_size / 1e6
    cell.mean_in_flight = sum(samples) / len(samples) if samples else 0.0
    if latencies:
        ms = [x * 1000 for x in latencies]
        cell.latency_ms = {"avg": sum(ms) / len(ms), "max": ms[-1], "p50": percentile(ms, 50),
                           "p95": percentile(ms, 95), "p99": percentile(ms, 99), "p99.9": percentile(ms, 99.9)}


# --- output ----------------------------------------------------------------------------------------

COLUMNS = ("RTT ms", "in-flight", "records/s", "ideal records/s", "of ideal", "MB/s", "avg latency ms",
           "max latency ms", "p50 ms", "p95 ms", "p99 ms", "p99.9 ms", "mean in flight", "max in flight seen")


def row(cell: Cell) -> list[str]:
    lat = cell.latency_ms
    ideal = "-" if cell.ideal_records_per_s is None else f"{cell.ideal_records_per_s:,.0f}"
    efficiency = "-" if cell.efficiency is None else f"{cell.efficiency:.0%}"
    seen = f"{cell.max_in_flight_seen}" + ("" if cell.in_flight_ok else " (EXCEEDS)")
    return [f"{cell.rtt_ms:g}", str(cell.in_flight), f"{cell.records_per_s:,.0f}", ideal, efficiency,
            f"{cell.mb_per_s:.2f}", *(f"{lat.get(k, math.nan):.1f}" for k in ("avg", "max", "p50", "p95", "p99")),
            f"{lat.get('p99.9', math.nan):.1f}", f"{cell.mean_in_flight:.1f}", seen]


def markdown(cells: list[Cell]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row(c)) + " |" for c in cells]
    return "\n".join(lines)


def ratios(cells: list[Cell], high: int = GOAL_HIGH, low: int = GOAL_LOW) -> dict[str, float | None]:
    """records/s at in-flight `high` over in-flight `low`, per RTT (None when a cell is missing)."""
    found: dict[str, float | None] = {}
    for rtt in sorted({c.rtt_ms for c in cells}):
        by = {c.in_flight: c.records_per_s for c in cells if c.rtt_ms == rtt}
        found[f"{rtt:g}"] = by[high] / by[low] if by.get(high) and by.get(low) else None
    return found


def plot(cells: list[Cell], path: Path) -> None:
    """Throughput against in-flight, one line per RTT, the ideal dashed beside it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for index, rtt in enumerate(sorted({c.rtt_ms for c in cells})):
        line = sorted((c for c in cells if c.rtt_ms == rtt), key=lambda c: c.in_flight)
        color = f"C{index}"
        xs = [c.in_flight for c in line]
        label = f"RTT {rtt:g} ms" + (" (through the proxy, no delay)" if rtt == 0 else "")
        ax.plot(xs, [c.records_per_s for c in line], "o-", color=color, label=label)
        if rtt > 0:
            ax.plot(xs, [c.ideal_records_per_s or math.nan for c in line], "--", color=color, alpha=0.5,
                    label=f"ideal at {rtt:g} ms (request size x in-flight / RTT)")
    ax.set_xlabel("max in-flight requests per partition (and per connection)")
    ax.set_ylabel("records/s (1000-byte records)")
    ax.set_yscale("log")
    ax.set_xticks(sorted({c.in_flight for c in cells}))
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title("KIP-1269: idempotent producer throughput vs in-flight requests, 1 partition")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --- main ------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rtts", type=float, nargs="+", default=[0, 20, 100], help="round-trip times in ms")
    parser.add_argument("--in-flight", type=int, nargs="+", default=[1, 5, 10, 20],
                        help="max_in_flight_requests_per_connection values (topic window is 20)")
    parser.add_argument("--seconds", type=float, default=8.0, help="measured seconds per cell")
    parser.add_argument("--warmup", type=float, default=2.0, help="warm-up seconds per cell (at least 5 RTTs)")
    parser.add_argument("--record-size", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=16384)
    parser.add_argument("--linger-ms", type=float, default=5.0)
    parser.add_argument("--output", type=Path, default=RESULTS / "kip1269_rtt.json")
    parser.add_argument("--plot", type=Path, default=RESULTS / "kip1269_rtt.png")
    return parser.parse_args(argv)


async def run_matrix(args: argparse.Namespace) -> list[Cell]:
    cells = []
    for rtt in args.rtts:
        for in_flight in args.in_flight:
            log(f"RTT {rtt:g} ms, in-flight {in_flight}: {args.seconds:g} s")
            cell = await run_cell(rtt, in_flight, args)
            log(f"  {cell.records_per_s:,.0f} records/s, p50 {cell.latency_ms.get('p50', math.nan):.1f} ms, "
                f"mean in flight {cell.mean_in_flight:.1f}, max seen {cell.max_in_flight_seen}, "
                f"errors {cell.errors}")
            cells.append(cell)
    return cells


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    began = datetime.now(UTC)
    cells = uvloop.run(run_matrix(args))

    print(markdown(cells))
    print("\nideal = records per request x in-flight / RTT, in records/s "
          f"({cells[0].records_per_request} records of {args.record_size} bytes per {args.batch_size}-byte request); "
          "'-' at RTT 0, where it is unbounded.\n")
    found = ratios(cells)
    for rtt, ratio in found.items():
        text = "n/a" if ratio is None else f"{ratio:.2f}x"
        print(f"RTT {rtt} ms: in-flight {GOAL_HIGH} / in-flight {GOAL_LOW} = {text} (ideal {GOAL_HIGH / GOAL_LOW:g}x)")
    goal_ratio = found.get(f"{GOAL_RTT_MS:g}")
    goal_met = goal_ratio is not None and goal_ratio >= GOAL_RATIO
    if goal_ratio is not None:
        print(f"GOAL (>= {GOAL_RATIO}x at {GOAL_RTT_MS:g} ms): {'met' if goal_met else 'NOT met'}")
    broken = [c for c in cells if not c.in_flight_ok or c.errors]
    for cell in broken:
        print(f"WARNING: RTT {cell.rtt_ms:g} in-flight {cell.in_flight}: max in flight seen "
              f"{cell.max_in_flight_seen}, {cell.errors} failed records")

    payload: dict[str, Any] = {
        "experiment": "KIP-1269 RTT x in-flight, bench/kip1269_rtt.py",
        "started": began.isoformat(timespec="seconds"),
        "environment": {"python": platform.python_version(), "cpus": os.cpu_count(), "machine": platform.machine()},
        "settings": {"rtts_ms": args.rtts, "in_flight": args.in_flight, "seconds": args.seconds,
                     "warmup_s": args.warmup, "record_size": args.record_size, "batch_size": args.batch_size,
                     "linger_ms": args.linger_ms, "partitions": 1,
                     "topic_config": {"producer.state.batches.to.retain": WINDOW},
                     "broker": "python -m minibroker serve --port 0 --advertised-listeners <proxy>",
                     "proxy": "minibroker.testing.latency_proxy.LatencyProxy in the bench's process, RTT/2 each way",
                     "ideal_unit": "records/s = records per request x in-flight / RTT"},
        "cells": [asdict(c) | {"efficiency": c.efficiency, "in_flight_ok": c.in_flight_ok} for c in cells],
        "ratio_in_flight_20_over_5": found,
        "goal": {"rtt_ms": GOAL_RTT_MS, "min_ratio": GOAL_RATIO, "ratio": goal_ratio, "met": goal_met},
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(payload, indent=2) + "\n")
    log(f"wrote {args.output}")
    plot(cells, args.plot)
    log(f"wrote {args.plot}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
