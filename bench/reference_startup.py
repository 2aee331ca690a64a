"""Apache Kafka beside minibroker: time from start to the first answered ApiVersions, and resident memory.

Same machine, same run:
1. Apache Kafka (the reference of tests/differential: one KRaft node, tests/reference/launcher.py): storage
   format (a JVM of its own), then JVM start to the first answered ApiVersions; RSS of the JVM then.
2. minibroker as a process (`minibroker serve`): spawn to the first answered ApiVersions; its RSS then.
3. minibroker in process: a fresh interpreter imports minibroker.testing.embedded, starts a BrokerThread and
   waits for the first answered ApiVersions; the interpreter's RSS then, and what the broker added to it.

Each also reports the CPU time (user + system) the broker used until then: wall time on a busy machine is
mostly waiting for a core, CPU time much less so.

    python bench/reference_startup.py [--rounds 5] [--kafka-rounds 1] [--kafka-version 4.3.1] [--quiet-below 1.5]

Needs scripts/install-reference-kafka.sh. Writes bench/results/reference_startup.json. Numbers, not assertions.
Before each of the three measurements it waits (at most --quiet-wait-s) for the 1-minute load average to fall
below --quiet-below, and records the load average each one started at: start-up times on a busy 2-core machine
are mostly waiting for a core.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from brokers import answers_api_versions  # noqa: E402

from tests.reference.launcher import DEFAULT_VERSION, ReferenceKafka  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "reference_startup.json"
MB = 1024 * 1024

IN_PROCESS = """
import json, os, time
import psutil
before = psutil.Process().memory_info().rss
start, cpu_start = time.monotonic(), time.process_time()
from minibroker.protocol.messages import ApiVersionsRequest
from minibroker.testing.embedded import BrokerThread
from minibroker.testing.wire import WireClient
broker = BrokerThread().start()
with WireClient("127.0.0.1", broker.port) as wire:
    assert wire.request(ApiVersionsRequest(), 0).error_code == 0
ready, cpu = time.monotonic() - start, time.process_time() - cpu_start
rss = psutil.Process().memory_info().rss
broker.stop()
print(json.dumps({"ready_s": ready, "cpu_s": cpu, "rss": rss, "rss_added": rss - before}))
"""


def kafka_round(version: str) -> dict[str, float]:
    start = time.monotonic()
    kafka = ReferenceKafka.start(version)
    try:
        total = time.monotonic() - start
        jvm = psutil.Process(kafka.pid)
        cpu = jvm.cpu_times()
        return {"ready_s": kafka.startup_s, "cpu_s": cpu.user + cpu.system, "format_s": total - kafka.startup_s,
                "rss_mb": jvm.memory_info().rss / MB}
    finally:
        kafka.stop()


def process_round() -> dict[str, float]:
    ready_file = Path(tempfile.mkdtemp(prefix="minibroker-bench-")) / "ready.json"
    start = time.monotonic()
    popen = subprocess.Popen([sys.executable, "-m", "minibroker", "serve", "--host", "127.0.0.1", "--port", "0",
                              "--ready-file", str(ready_file)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, cwd=tempfile.gettempdir())
    try:
        port = None
        while time.monotonic() - start < 60:
            if popen.poll() is not None:
                raise RuntimeError(f"minibroker exited with {popen.returncode}")
            if port is None and ready_file.exists():
                port = json.loads(ready_file.read_text())["nodes"][0]["port"]
            if port is not None and answers_api_versions(port):
                ready = time.monotonic() - start
                child = psutil.Process(popen.pid)
                cpu = child.cpu_times()
                return {"ready_s": ready, "cpu_s": cpu.user + cpu.system, "rss_mb": child.memory_info().rss / MB}
            time.sleep(0.002)
        raise RuntimeError("minibroker did not answer ApiVersions within 60 s")
    finally:
        popen.terminate()
        popen.wait(10)
        ready_file.unlink(missing_ok=True)
        ready_file.parent.rmdir()


def in_process_round() -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", IN_PROCESS], check=True, capture_output=True, text=True,
                         cwd=tempfile.gettempdir(), env={**os.environ, "PYTHONPATH": str(ROOT)})
    sample = json.loads(out.stdout)
    return {"ready_s": sample["ready_s"], "cpu_s": sample["cpu_s"], "rss_mb": sample["rss"] / MB,
            "rss_added_mb": sample["rss_added"] / MB}


def wait_quiet(below: float, limit_s: float) -> float:
    """Wait until the 1-minute load average is below `below`, or `limit_s` has passed; the load average then."""
    deadline = time.monotonic() + limit_s
    while os.getloadavg()[0] >= below and time.monotonic() < deadline:
        time.sleep(5)
    return round(os.getloadavg()[0], 2)


def medians(samples: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(statistics.median(s[key] for s in samples), 3) for key in samples[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="minibroker rounds (medians are reported)")
    parser.add_argument("--kafka-rounds", type=int, default=1, help="Kafka rounds (a JVM start is ~40-80 s here)")
    parser.add_argument("--kafka-version", default=DEFAULT_VERSION)
    parser.add_argument("--quiet-below", type=float, default=1.5,
                        help="wait for the 1-minute load average to fall below this before each measurement")
    parser.add_argument("--quiet-wait-s", type=float, default=600.0, help="wait at most this long for quiet")
    args = parser.parse_args()
    load_before = os.getloadavg()
    kafka_load = wait_quiet(args.quiet_below, args.quiet_wait_s)
    kafka = [kafka_round(args.kafka_version) for _ in range(args.kafka_rounds)]
    process_load = wait_quiet(args.quiet_below, args.quiet_wait_s)
    process = [process_round() for _ in range(args.rounds)]
    in_process_load = wait_quiet(args.quiet_below, args.quiet_wait_s)
    in_process = [in_process_round() for _ in range(args.rounds)]
    results: dict[str, Any] = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average_1m_before": round(load_before[0], 2),
                    "load_average_1m_after": round(os.getloadavg()[0], 2)},
        "kafka": {"version": args.kafka_version, "rounds": args.kafka_rounds, "load_average_1m": kafka_load,
                  **medians(kafka)},
        "minibroker_process": {"rounds": args.rounds, "load_average_1m": process_load, **medians(process)},
        "minibroker_in_process": {"rounds": args.rounds, "load_average_1m": in_process_load, **medians(in_process)},
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    k, p, i = results["kafka"], results["minibroker_process"], results["minibroker_in_process"]
    print(f"{'':34} {'first ApiVersions':>18} {'CPU':>9} {'RSS':>10}")
    print(f"{'Apache Kafka ' + k['version'] + ' (1 KRaft node)':34} {k['ready_s']:>16.2f} s {k['cpu_s']:>7.2f} s "
          f"{k['rss_mb']:>7.0f} MB   (+ storage format {k['format_s']:.1f} s)")
    print(f"{'minibroker, process':34} {p['ready_s']:>16.3f} s {p['cpu_s']:>7.2f} s {p['rss_mb']:>7.0f} MB")
    print(f"{'minibroker, in process':34} {i['ready_s']:>16.3f} s {i['cpu_s']:>7.2f} s {i['rss_mb']:>7.0f} MB"
          f"   (the broker added {i['rss_added_mb']:.0f} MB)")
    print(f"load average (1 min) at each start: Kafka {k['load_average_1m']}, process {p['load_average_1m']}, "
          f"in process {i['load_average_1m']}; {results['machine']['load_average_1m_after']} after, "
          f"on {results['machine']['cpus']} CPUs")


if __name__ == "__main__":
    main()
