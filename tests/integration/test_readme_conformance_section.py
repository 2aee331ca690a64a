"""The README's "Conformance with Apache Kafka" section is current: its report is what
`python -m tests.differential.report` prints today, and its start-up figures are the last
bench/reference_startup.py results."""

from __future__ import annotations

import json
from pathlib import Path

from tests.differential.report import BEGIN, END, coverage, markdown, readme_report
from tests.reference.launcher import DEFAULT_VERSION

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
STARTUP = ROOT / "bench" / "results" / "reference_startup.json"


def section() -> str:
    text = README.read_text()
    start = text.index("## Conformance with Apache Kafka")
    return text[start:text.index("\n## ", start + 1)]


def test_the_sections_report_is_the_report_commands_output() -> None:
    assert BEGIN in section() and END in section()
    assert readme_report(section()) == markdown(coverage()), (
        "README.md's conformance report is stale: run `.venv/bin/python -m tests.differential.report --update-readme`")


def test_the_section_names_the_reference_release_and_the_three_modes() -> None:
    text = section()
    assert f"Apache Kafka {DEFAULT_VERSION}" in text
    for command in ("tests/differential/test_scenarios.py", "tests/differential/test_replay.py",
                    "python -m tests.differential.record", "python -m tests.differential.report"):
        assert command in text, command


def test_the_sections_start_up_figures_are_the_last_measured() -> None:
    results = json.loads(STARTUP.read_text())
    kafka, process, in_process = results["kafka"], results["minibroker_process"], results["minibroker_in_process"]
    text = section()
    expected = [
        f"| Apache Kafka {kafka['version']} (one KRaft node) | {kafka['ready_s']:.1f} s | {kafka['cpu_s']:.1f} s | "
        f"{kafka['rss_mb']:.0f} MB | {kafka['load_average_1m']} |",
        f"| minibroker, a process | {process['ready_s']:.2f} s | {process['cpu_s']:.2f} s | "
        f"{process['rss_mb']:.0f} MB | {process['load_average_1m']} |",
        f"| minibroker, in process (`BrokerThread`) | {in_process['ready_s']:.2f} s | {in_process['cpu_s']:.2f} s | "
        f"{in_process['rss_mb']:.0f} MB (the broker added {in_process['rss_added_mb']:.0f} MB) | "
        f"{in_process['load_average_1m']} |",
        f"storage format {kafka['format_s']:.1f} s",
        results["when"][:10],
    ]
    for line in expected:
        assert line in text, line
