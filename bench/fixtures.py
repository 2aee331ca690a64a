"""What the test fixtures cost: time to a ready broker, and the per-test overhead of `kafka_topic`.

1. In process: a fresh interpreter imports minibroker.testing.embedded and starts a BrokerThread
   (the first start, then the median of warm start/stop cycles, one node and three).
2. As a process: `minibroker serve` and Tansu 0.6.0, from spawn until the port accepts a connection,
   alternately, so the ratio compares like with like on this machine.
3. The pytest plugin: the same N empty tests run with no fixture, with `kafka_broker` and with
   `kafka_topic`; per-test overhead is the wall-time difference divided by N.

    python bench/fixtures.py [--rounds 5] [--tests 300]

Writes bench/results/fixtures.json. Numbers, not assertions: nothing here fails on speed.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from brokers import TANSU_BIN, ensure_tansu, free_port, stop_process  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "fixtures.json"

IN_PROCESS = """
import json, statistics, time
t0 = time.perf_counter()
from minibroker.testing.embedded import BrokerThread, ClusterThread
t1 = time.perf_counter()
first = BrokerThread().start()
t2 = time.perf_counter()
first.stop()
def warm(make, n):
    times = []
    for _ in range(n):
        start = time.perf_counter(); broker = make().start(); times.append(time.perf_counter() - start)
        broker.stop()
    return statistics.median(times)
one, three = warm(BrokerThread, 30), warm(ClusterThread, 30)
with BrokerThread() as broker:
    times = []
    for i in range(200):
        start = time.perf_counter()
        broker.create_topic(f"t{i}", 1); broker.delete_topic(f"t{i}")
        times.append(time.perf_counter() - start)
print(json.dumps({"import_ms": (t1 - t0) * 1e3, "first_ready_ms": (t2 - t1) * 1e3, "warm_ready_ms": one * 1e3,
                  "warm_ready_3_nodes_ms": three * 1e3, "create_delete_topic_ms": statistics.median(times) * 1e3}))
"""


def in_process(rounds: int) -> dict[str, float]:
    samples = [json.loads(subprocess.run([sys.executable, "-c", IN_PROCESS], check=True, capture_output=True,
                                         text=True, cwd=tempfile.gettempdir()).stdout) for _ in range(rounds)]
    return {key: round(statistics.median(s[key] for s in samples), 2) for key in samples[0]}


def _wait_accepting(port: int, popen: subprocess.Popen[bytes], deadline: float) -> None:
    while time.monotonic() < deadline:
        if popen.poll() is not None:
            raise RuntimeError(f"broker exited with {popen.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.002)
    raise RuntimeError("broker did not start in time")


def process_ready_ms(kind: str) -> float:
    """Spawn to first accepted connection, in ms."""
    port = free_port()
    if kind == "minibroker":
        args = [sys.executable, "-m", "minibroker", "serve", "--host", "127.0.0.1", "--port", str(port)]
    else:
        url = f"tcp://127.0.0.1:{port}"
        args = [str(TANSU_BIN), "broker", "--listener-url", url, "--advertised-listener-url", url,
                "--storage-engine", "memory://tansu/"]
    env = {**os.environ, "RUST_LOG": "warn"}
    start = time.monotonic()
    popen = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                             cwd=tempfile.gettempdir())
    try:
        _wait_accepting(port, popen, start + 30)
        return (time.monotonic() - start) * 1e3
    finally:
        stop_process(popen)


def as_process(rounds: int) -> dict[str, Any]:
    ensure_tansu()
    times: dict[str, list[float]] = {"minibroker": [], "tansu": []}
    for _ in range(rounds):
        for kind in times:
            times[kind].append(process_ready_ms(kind))
    medians = {kind: round(statistics.median(values), 1) for kind, values in times.items()}
    return {"minibroker_ms": medians["minibroker"], "tansu_ms": medians["tansu"],
            "ratio": round(medians["minibroker"] / medians["tansu"], 2)}


def _test_file(fixture: str, count: int) -> str:
    args = fixture if fixture else ""
    return "\n".join(f"def test_{i}({args}):\n    pass\n" for i in range(count))


def plugin_overhead(rounds: int, count: int) -> dict[str, Any]:
    """Wall time of N and 2N empty tests per fixture; the N-to-2N difference is the per-test cost."""
    variants = [("none", count), ("none", 2 * count), ("kafka_broker", count), ("kafka_broker", 2 * count),
                ("kafka_topic", count), ("kafka_topic", 2 * count)]
    walls: dict[tuple[str, int], list[float]] = {variant: [] for variant in variants}
    with tempfile.TemporaryDirectory() as project:
        Path(project, "pytest.ini").write_text("[pytest]\n")
        for _ in range(rounds):
            for fixture, tests in variants:
                Path(project, "test_bench.py").write_text(_test_file("" if fixture == "none" else fixture, tests))
                start = time.monotonic()
                subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", project],
                               check=True, capture_output=True, cwd=project)
                walls[(fixture, tests)].append(time.monotonic() - start)
    wall = {variant: statistics.median(values) for variant, values in walls.items()}

    def per_test_ms(fixture: str) -> float:
        """What one more test costs with `fixture` beyond a plain test, in ms."""
        def growth(name: str) -> float:
            return wall[(name, 2 * count)] - wall[(name, count)]

        extra = growth(fixture) - growth("none")
        return round(extra / count * 1e3, 3)

    return {"tests": [count, 2 * count], "wall_s": {f"{f} x{n}": round(v, 3) for (f, n), v in wall.items()},
            "session_broker_once_ms": round((wall[("kafka_broker", count)] - wall[("none", count)]) * 1e3, 1),
            "kafka_broker_per_test_ms": per_test_ms("kafka_broker"),
            "kafka_topic_per_test_ms": per_test_ms("kafka_topic")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tests", type=int, default=300)
    args = parser.parse_args()
    results = {"in_process": in_process(args.rounds), "process": as_process(args.rounds),
               "plugin": plugin_overhead(args.rounds, args.tests)}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(textwrap.dedent(f"""\
        in process: import {results['in_process']['import_ms']} ms, first BrokerThread ready \
{results['in_process']['first_ready_ms']} ms, warm {results['in_process']['warm_ready_ms']} ms \
(3 nodes {results['in_process']['warm_ready_3_nodes_ms']} ms), create+delete topic \
{results['in_process']['create_delete_topic_ms']} ms
        as a process: minibroker {results['process']['minibroker_ms']} ms, Tansu {results['process']['tansu_ms']} ms, \
ratio {results['process']['ratio']}
        plugin: kafka_broker once {results['plugin']['session_broker_once_ms']} ms, then \
{results['plugin']['kafka_broker_per_test_ms']} ms per test; \
kafka_topic {results['plugin']['kafka_topic_per_test_ms']} ms per test"""))


if __name__ == "__main__":
    main()
