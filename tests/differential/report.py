"""The differential suite's coverage, computed from the scenarios, the goldens and the ledger: a Markdown report.

    .venv/bin/python -m tests.differential.report                  # print it
    .venv/bin/python -m tests.differential.report --update-readme  # write it into README.md's conformance section

Per API minibroker serves (and any other API a step sends): the versions minibroker and Apache Kafka advertise
(Kafka's from the api_versions golden), the versions some step answered without an error, the versions some step
was refused at (a non-zero error code anywhere in Kafka's recorded answer, or the connection closed), and the
served versions no step sends. Then the counts: scenarios, steps, fields compared (the leaves of Kafka's recorded
answers, which replay compares one by one), and the ledger's entries grouped by reason. The README holds this
output between two markers; tests/integration/test_readme_conformance_section.py fails when it is not current.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from minibroker.apis import advertised_ranges
from minibroker.protocol.messages import REQUESTS
from tests.reference.launcher import DEFAULT_VERSION

from .compare import LedgerEntry, leaf_count, load_ledger
from .golden import CLOSED, Golden, load_golden, stale_reason
from .scenario import Scenario, all_scenarios

README = Path(__file__).resolve().parents[2] / "README.md"
BEGIN = "<!-- conformance-report:begin (python -m tests.differential.report --update-readme) -->"
END = "<!-- conformance-report:end -->"


@dataclass
class ApiCoverage:
    """One API's row: versions served, advertised by Kafka, answered and refused in some step."""

    key: int
    name: str
    served: tuple[int, int] | None
    kafka: tuple[int, int] | None
    answered: set[int] = field(default_factory=set)
    refused: set[int] = field(default_factory=set)

    @property
    def uncovered(self) -> list[int]:
        if self.served is None:
            return []
        return [v for v in range(self.served[0], self.served[1] + 1) if v not in self.answered | self.refused]


@dataclass
class Coverage:
    kafka_version: str
    scenarios: int
    xfail: int
    steps: int
    fields: int
    recorded: int  # scenarios whose golden is current
    apis: list[ApiCoverage]
    ledger: list[LedgerEntry]


def refused(step: dict[str, Any]) -> bool:
    """Kafka refused the step: it closed the connection or put a non-zero error code somewhere in its answer."""
    return step["outcome"] == CLOSED or _has_error(step["answer"])


def _has_error(value: Any) -> bool:
    if isinstance(value, dict):
        return any((key == "error_code" and item not in (0, None)) or _has_error(item) for key, item in value.items())
    if isinstance(value, list):
        return any(_has_error(item) for item in value)
    return False


def coverage(kafka_version: str = DEFAULT_VERSION, scenarios: list[Scenario] | None = None,
             ledger: list[LedgerEntry] | None = None) -> Coverage:
    """The coverage of the scenarios, judged from their current goldens of Kafka `kafka_version`."""
    scenarios = all_scenarios() if scenarios is None else scenarios
    ledger = load_ledger() if ledger is None else ledger
    goldens: dict[str, Golden] = {}
    for scenario in scenarios:
        golden = load_golden(kafka_version, scenario.name)
        if golden is not None and stale_reason(golden, scenario, kafka_version) is None:
            goldens[scenario.name] = golden
    served = {key: (low, high) for key, low, high in advertised_ranges()}
    kafka = _kafka_ranges(goldens.get("api_versions"))
    keys = set(served) | {key for scenario in scenarios for step in scenario.steps
                          if (key := _known_key(step.sent)) is not None}
    rows = {key: ApiCoverage(key, REQUESTS[key].__name__.removesuffix("Request"), served.get(key), kafka.get(key))
            for key in sorted(keys)}
    fields = 0
    for scenario in scenarios:
        golden = goldens.get(scenario.name)
        if golden is None:
            continue
        for step, recorded in zip(scenario.steps, golden.steps, strict=True):
            fields += leaf_count(recorded["answer"])
            key = _known_key(step.sent)
            if key is None or step.sent is None:  # a raw frame naming no API the codec knows
                continue
            row, version = rows[key], step.sent[1]
            (row.refused if refused(recorded) else row.answered).add(version)
    return Coverage(kafka_version, len(scenarios), sum(1 for s in scenarios if s.xfail),
                    sum(len(s.steps) for s in scenarios), fields, len(goldens), list(rows.values()), ledger)


def _known_key(sent: tuple[int, int] | None) -> int | None:
    """The API key a step sends, where it is one of Kafka's (a raw step may send another)."""
    return sent[0] if sent is not None and sent[0] in REQUESTS else None


def _kafka_ranges(golden: Golden | None) -> dict[int, tuple[int, int]]:
    """Kafka's advertised ranges, from the highest-version step of the api_versions golden."""
    if golden is None:
        return {}
    answer = max(golden.steps, key=lambda step: step["version"])["answer"] or {}
    return {int(item["api_key"]): (item["min_version"], item["max_version"]) for item in answer.get("api_keys", [])}


def versions_text(versions: set[int] | list[int]) -> str:
    """Versions as ranges: "0-4, 6"."""
    ordered = sorted(set(versions))
    if not ordered:
        return "—"
    runs: list[list[int]] = []
    for version in ordered:
        if runs and version == runs[-1][-1] + 1:
            runs[-1].append(version)
        else:
            runs.append([version])
    return ", ".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def _range_text(bounds: tuple[int, int] | None) -> str:
    return "—" if bounds is None else versions_text(list(range(bounds[0], bounds[1] + 1)))


def markdown(report: Coverage) -> str:
    """The report as Markdown: the counts, the API table, the ledger grouped by reason."""
    covered = [row for row in report.apis if row.answered or row.refused]
    served = [row for row in report.apis if row.served is not None]
    lines = [
        f"Against Apache Kafka {report.kafka_version}: {report.scenarios} scenarios ({report.xfail} with a known "
        f"difference, marked xfail), {report.steps} steps, {report.fields:,} fields compared; "
        f"{report.recorded} of {report.scenarios} scenarios have a current golden. "
        f"{len([r for r in covered if r.served is not None])} of the {len(served)} APIs minibroker serves are "
        f"sent in some step.",
        "",
        "| API (key) | minibroker serves | Kafka advertises | answered in a step | refused in a step | not sent |",
        "|---|---|---|---|---|---|",
    ]
    for row in report.apis:
        lines.append(f"| {row.name} ({row.key}) | {_range_text(row.served)} | {_range_text(row.kafka)} | "
                     f"{versions_text(row.answered)} | {versions_text(row.refused)} | "
                     f"{versions_text(row.uncovered) if row.uncovered else '—'} |")
    by_reason: dict[str, list[LedgerEntry]] = defaultdict(list)
    for entry in report.ledger:
        by_reason[entry.reason].append(entry)
    lines += ["", f"The ledger (`tests/differential/ledger.json`): {len(report.ledger)} intended differences, "
                  f"{len(by_reason)} reasons.", ""]
    for reason, entries in sorted(by_reason.items(), key=lambda item: (-len(item[1]), item[0])):
        scenarios = ", ".join(f"`{name}`" for name in dict.fromkeys(entry.scenario for entry in entries))
        lines.append(f"- {reason} ({len(entries)} {'entry' if len(entries) == 1 else 'entries'}: {scenarios})")
    return "\n".join(lines) + "\n"


def readme_report(text: str) -> str:
    """The report as the README holds it, between the markers."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end].strip("\n") + "\n"


def update_readme(path: Path = README) -> bool:
    """Write the current report between the README's markers; whether it changed."""
    text = path.read_text()
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    updated = text[:start] + "\n" + markdown(coverage()) + text[end:]
    if updated != text:
        path.write_text(updated)
    return updated != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update-readme", action="store_true", help="write the report into README.md")
    args = parser.parse_args(argv)
    if args.update_readme:
        print("README.md updated" if update_readme() else "README.md already current")
    else:
        print(markdown(coverage()), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
