"""Pipelined Produce requests on one connection: requests/s and broker CPU per request, by requests in flight.

A raw client keeps N Produce requests (acks=1, one record batch of `--batch-bytes`) in flight on one
socket: it sends N, then one more for every answer it reads, as a producer with
`max.in.flight.requests.per.connection=N` does when it never runs out of batches. This is the path a
connection's backpressure and muting sit on (server/connection.py), measured without a client library's
own cost in the way: the client only counts answer frames.

    python bench/pipelining.py [--rounds 5] [--requests 20000] [--in-flight 1 5 20] [--batch-bytes 1024 16384]
    python bench/pipelining.py --source before=/tmp/old-checkout --source after=.   # one change against another

Each round starts a fresh `minibroker serve` process, from each `--source` checkout in turn (default: this
one), so that two versions compare like with like on a busy machine. Reported per cell and source: the
median requests/s over the rounds, and the broker's CPU (psutil user + system) per request in
microseconds, the steadier figure on a shared 2-core machine. Writes bench/results/pipelining.json (or
`--output`). Numbers, not assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

from minibroker.protocol.messages import ProduceRequest
from minibroker.protocol.records import build_batch
from minibroker.testing.admin import TopicAdmin
from minibroker.testing.process import stop_process
from minibroker.testing.wire import WireClient

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "pipelining.json"
RECORD_BYTES = 1000
TOPIC = "pipelining"


def produce_frame(batch_bytes: int) -> bytes:
    """One Produce v9 frame, acks=1, one batch of about `batch_bytes` of 1000-byte values."""
    count = max(batch_bytes // RECORD_BYTES, 1)
    value = b"x" * min(RECORD_BYTES, batch_bytes)
    batch = build_batch([(None, value)] * count, timestamp=1_700_000_000_000)
    data = ProduceRequest.TopicProduceData(
        name=TOPIC, partition_data=[ProduceRequest.TopicProduceData.PartitionProduceData(index=0, records=batch)])
    request = ProduceRequest(transactional_id=None, acks=1, timeout_ms=30_000, topic_data=[data])
    encoder = WireClient.__new__(WireClient)  # its framing only
    encoder.client_id, encoder._correlation_id = "pipelining", 0
    return encoder.encode_request(request, 9, correlation_id=1)


def pipeline(sock: socket.socket, frame: bytes, in_flight: int, requests: int) -> float:
    """Send `requests` frames with at most `in_flight` unanswered; the seconds it took."""
    sent = answered = 0
    pending = bytearray()
    start = time.perf_counter()
    first = min(in_flight, requests)
    sock.sendall(frame * first)
    sent = first
    while answered < requests:
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        pending += chunk
        done = 0
        while len(pending) >= 4:
            size = struct.unpack_from(">i", pending)[0]
            if len(pending) < 4 + size:
                break
            del pending[: 4 + size]
            done += 1
        answered += done
        more = min(done, requests - sent)
        if more:
            sock.sendall(frame * more)
            sent += more
    return time.perf_counter() - start


@contextmanager
def serve(source: Path) -> Iterator[tuple[int, int]]:
    """`minibroker serve` run from the checkout `source` (its own CLI, whatever its version); (pid, port)."""
    ready = Path(tempfile.mkdtemp()) / "ready.json"
    popen = subprocess.Popen([sys.executable, "-m", "minibroker", "serve", "--host", "127.0.0.1", "--port", "0",
                              "--ready-file", str(ready)], cwd=source,  # -m runs the package found in cwd
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            if popen.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the broker from {source} did not start")
            time.sleep(0.02)
        yield popen.pid, json.loads(ready.read_text())["nodes"][0]["port"]
    finally:
        stop_process(popen)


def run_cell(in_flight: int, batch_bytes: int, requests: int, source: Path) -> dict[str, float]:
    with serve(source) as (pid, port):
        admin = TopicAdmin(f"127.0.0.1:{port}")
        try:
            admin.create_topic(TOPIC, 1)
        finally:
            admin.close()
        frame = produce_frame(batch_bytes)
        process = psutil.Process(pid)
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            pipeline(sock, frame, in_flight, min(requests // 10, 2000))  # warm-up
            before = process.cpu_times()
            seconds = pipeline(sock, frame, in_flight, requests)
            after = process.cpu_times()
        cpu = (after.user - before.user) + (after.system - before.system)
        return {"requests_per_s": requests / seconds, "broker_cpu_us_per_request": cpu / requests * 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--in-flight", type=int, nargs="+", default=[1, 5, 20])
    parser.add_argument("--batch-bytes", type=int, nargs="+", default=[1024, 16384])
    parser.add_argument("--source", action="append", default=[], metavar="NAME=DIR",
                        help="a checkout to run the broker from (repeat to alternate between several)")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    sources = {name: Path(directory).resolve() for name, _, directory in
               (item.partition("=") for item in args.source)} or {"minibroker": ROOT}
    cells: list[dict[str, Any]] = []
    print(f"{'source':>9} {'batch B':>8} {'in flight':>9} {'req/s':>9} {'CPU us/req':>10}  (medians of {args.rounds})")
    for batch_bytes in args.batch_bytes:
        for in_flight in args.in_flight:
            runs: dict[str, list[dict[str, float]]] = {name: [] for name in sources}
            for _ in range(args.rounds):
                for name, directory in sources.items():
                    runs[name].append(run_cell(in_flight, batch_bytes, args.requests, directory))
            for name, done in runs.items():
                cell = {"source": name, "batch_bytes": batch_bytes, "in_flight": in_flight,
                        "requests": args.requests,
                        "requests_per_s": round(statistics.median(r["requests_per_s"] for r in done)),
                        "broker_cpu_us_per_request": round(statistics.median(r["broker_cpu_us_per_request"]
                                                                             for r in done), 1),
                        "runs": done}
                cells.append(cell)
                print(f"{name:>9} {batch_bytes:>8} {in_flight:>9} {cell['requests_per_s']:>9} "
                      f"{cell['broker_cpu_us_per_request']:>10}", flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"load_average": os.getloadavg()[0], "cells": cells}, indent=2) + "\n")


if __name__ == "__main__":
    main()
