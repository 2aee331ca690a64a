"""Plots the produce and consume benchmarks side by side: records/s and broker CPU s/GB, per broker.

Usage: .venv/bin/python bench/plot.py [--produce PATH] [--consume PATH] [--output PATH]
Reads bench/results/produce.json and consume.json, writes bench/results/throughput.png.
Needs matplotlib, the `bench` extra (`pip install -e '.[bench]'`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
BROKERS = {"minibroker": "C0", "tansu": "C1"}  # colour of each broker's bars
METRICS = (("records_per_s", "throughput_ratio", "records/s (higher is better)"),
           ("cpu_s_per_gb", "cpu_per_gb_ratio", "broker CPU s per GB (lower is better)"))


def load(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise SystemExit(f"{path} is missing: run bench/{path.stem}.py first")
    return dict(json.loads(path.read_text()))


def records_note(settings: dict[str, Any]) -> str:
    """'300k records' or 'confluent 300k, java 100k records', from a benchmark's settings."""
    records = settings["records"]
    if isinstance(records, dict):
        return ", ".join(f"{client} {n / 1000:g}k" for client, n in records.items()) + " records"
    return f"{records / 1000:g}k records"


def panel(ax: Any, data: dict[str, Any], metric: str, ratio_key: str) -> None:
    """Median bars per broker for each (client, partitions), every round as a dot, the ratio above."""
    summary = data["summary"]
    good = [r for r in data["runs"] if not r.get("error")]
    width = 0.38
    for i, (broker, colour) in enumerate(BROKERS.items()):
        xs = [x + (i - 0.5) * width for x in range(len(summary))]
        ax.bar(xs, [e[broker][metric] or 0.0 for e in summary], width, color=colour, label=broker)
        for x, e in zip(xs, summary, strict=True):
            rounds = [r[metric] for r in good if (r["client"], r["partitions"], r["broker"])
                      == (e["client"], e["partitions"], broker)]
            ax.plot([x] * len(rounds), rounds, "o", color="black", markersize=2.5, alpha=0.6)
    for x, e in enumerate(summary):
        tops = [r[metric] for r in good if (r["client"], r["partitions"]) == (e["client"], e["partitions"])]
        if e.get(ratio_key) is not None and tops:
            ax.annotate(f"{e[ratio_key]:.2f}", (x, max(tops)), xytext=(0, 3), textcoords="offset points",
                        ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(summary)), [f"{e['client']}\n{e['partitions']} p" for e in summary], fontsize=8)
    ax.margins(y=0.12)
    ax.grid(True, axis="y", alpha=0.3)


def plot(benchmarks: dict[str, dict[str, Any]], output: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, axes = plt.subplots(len(METRICS), len(benchmarks), figsize=(6 * len(benchmarks), 8), squeeze=False)
    for col, (name, data) in enumerate(benchmarks.items()):
        for row, (metric, ratio_key, label) in enumerate(METRICS):
            ax = axes[row][col]
            panel(ax, data, metric, ratio_key)
            ax.set_ylabel(label)
            if metric == "records_per_s":
                ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v / 1000:g}k"))
            if row == 0:
                rounds = data["settings"]["rounds"]
                ax.set_title(f"{name} ({records_note(data['settings'])}; bars: median of {rounds} "
                             f"round{'s' if rounds > 1 else ''}, dots: each round)", fontsize=10)
    axes[0][0].legend(fontsize=8, loc="upper right")
    env = next(iter(benchmarks.values()))["environment"]
    fig.suptitle(f"minibroker against Tansu {env['tansu'].split()[-1]}: {env['record_size']}-byte records, "
                 f"{env['cpus']} cores shared by broker and client; the number over each pair is "
                 "minibroker / Tansu", fontsize=11)
    fig.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(output, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--produce", type=Path, default=RESULTS / "produce.json")
    parser.add_argument("--consume", type=Path, default=RESULTS / "consume.json")
    parser.add_argument("--output", type=Path, default=RESULTS / "throughput.png")
    args = parser.parse_args(argv)
    plot({"produce": load(args.produce), "consume": load(args.consume)}, args.output)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
