"""Field-by-field comparison of normalised answers, and the divergence ledger (ledger.json).

A difference is (field path, minibroker's value, Kafka's value). Paths name array entries by their key
where the entries have one (`api_keys[api_key=18].max_version`, `topics[name=${topic}].error_code`), by
index otherwise (`records[0]`), so one missing entry does not shift every other. A ledger entry (scenario,
step or "*" for every step, path, reason) accepts the differences at its path and below it; a difference no
entry accepts fails the run, and so does an entry that accepts none, so the ledger cannot go stale.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .golden import recorded_step
from .normalise import Normaliser
from .scenario import Answer

LEDGER = Path(__file__).resolve().parent / "ledger.json"
#: The field that identifies an entry of an array with this name, where it has one.
ARRAY_KEYS: dict[str, str] = {
    "api_keys": "api_key",
    "supported_features": "name",
    "finalized_features": "name",
    "brokers": "node_id",
    "topics": "name",
    "responses": "name",
    "partitions": "partition_index",
    "partition_responses": "index",
    "configs": "name",
}
ABSENT = "<absent>"


@dataclass(frozen=True)
class Difference:
    path: str
    minibroker: Any
    kafka: Any

    def __str__(self) -> str:
        return f"{self.path}: minibroker {_show(self.minibroker)} != Kafka {_show(self.kafka)}"


@dataclass(frozen=True)
class LedgerEntry:
    scenario: str
    step: str
    path: str
    reason: str

    def accepts(self, path: str) -> bool:
        return path == self.path or path.startswith((self.path + ".", self.path + "["))


def _show(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 300 else text[:300] + "..."


def differences(minibroker: Any, kafka: Any, path: str = "") -> list[Difference]:
    """Every field where the two normalised answers differ."""
    if isinstance(minibroker, dict) and isinstance(kafka, dict):
        out = []
        for key in [*minibroker, *(k for k in kafka if k not in minibroker)]:
            sub = f"{path}.{key}" if path else key
            out += differences(minibroker.get(key, ABSENT), kafka.get(key, ABSENT), sub)
        return out
    if isinstance(minibroker, list) and isinstance(kafka, list):
        key = _array_key(path, minibroker, kafka)
        if key is None:
            out = []
            for index in range(max(len(minibroker), len(kafka))):
                out += differences(minibroker[index] if index < len(minibroker) else ABSENT,
                                   kafka[index] if index < len(kafka) else ABSENT, f"{path}[{index}]")
            return out
        ours = {str(item[key]): item for item in minibroker}
        theirs = {str(item[key]): item for item in kafka}
        out = []
        for entry in [*ours, *(k for k in theirs if k not in ours)]:
            out += differences(ours.get(entry, ABSENT), theirs.get(entry, ABSENT), f"{path}[{key}={entry}]")
        common = [k for k in ours if k in theirs]
        if not out and common != [k for k in theirs if k in ours]:
            out.append(Difference(f"{path}#order", list(ours), list(theirs)))
        return out
    if minibroker != kafka or type(minibroker) is not type(kafka):
        return [Difference(path, minibroker, kafka)]
    return []


def answer_differences(ours: Answer, kafka: Answer, ours_names: Normaliser,
                       kafka_names: Normaliser) -> list[Difference]:
    """What differs between two brokers' answers to one step, after each broker's normalisation."""
    return step_differences(recorded_step(ours, ours_names), recorded_step(kafka, kafka_names))


def step_differences(ours: dict[str, Any], kafka: dict[str, Any]) -> list[Difference]:
    """What differs between two normalised steps (golden.recorded_step: outcome and answer)."""
    if ours["outcome"] != kafka["outcome"]:
        return [Difference("<outcome>", ours["outcome"], kafka["outcome"])]
    return differences(ours["answer"], kafka["answer"])


def moved_paths(kafka_step: dict[str, Any], golden_step: dict[str, Any]) -> set[str]:
    """Where Kafka's live answer left its golden in one step ("<outcome>" when the outcome itself did)."""
    return {difference.path for difference in step_differences(kafka_step, golden_step)}


def against_golden_where_kafka_moved(found: dict[str, list[Any]], ours: list[dict[str, Any]],
                                     kafka_steps: list[dict[str, Any]],
                                     golden_steps: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """`found` (minibroker against the live Kafka) without the differences at fields where the live Kafka left its
    golden and minibroker answers as the golden; a difference from the golden there stays."""
    out: dict[str, list[Any]] = {}
    for ours_step, kafka_step, golden_step in zip(ours, kafka_steps, golden_steps, strict=True):
        moved = moved_paths(kafka_step, golden_step)
        from_golden = {difference.path for difference in step_differences(ours_step, golden_step)}
        out[ours_step["name"]] = [difference for difference in found[ours_step["name"]]
                                  if difference.path not in moved or difference.path in from_golden]
    return out


def matches_golden_where_kafka_moved(ours: list[dict[str, Any]], kafka_steps: list[dict[str, Any]],
                                     golden_steps: list[dict[str, Any]]) -> bool:
    """True when at every field where the live Kafka left its golden, minibroker answers as the golden: Kafka's
    departure was its timing on a loaded machine, not a change of what it answers."""
    for ours_step, kafka_step, golden_step in zip(ours, kafka_steps, golden_steps, strict=True):
        moved = moved_paths(kafka_step, golden_step)
        if moved & {difference.path for difference in step_differences(ours_step, golden_step)}:
            return False
    return True


def leaf_count(value: Any) -> int:
    """How many fields `differences` compares in one normalised answer: its leaves (an empty array is one)."""
    if isinstance(value, dict):
        return sum(leaf_count(item) for item in value.values())
    if isinstance(value, list) and value:
        return sum(leaf_count(item) for item in value)
    return 1


def _array_key(path: str, *arrays: list[Any]) -> str | None:
    """The key field of an array's entries when every entry of both has one, unique within its array."""
    key = ARRAY_KEYS.get(path.rsplit(".", 1)[-1].split("[", 1)[0])
    if key is None:
        return None
    for array in arrays:
        if not all(isinstance(item, dict) and key in item for item in array):
            return None
        if len({str(item[key]) for item in array}) != len(array):
            return None
    return key


def load_ledger(path: Path = LEDGER) -> list[LedgerEntry]:
    entries = [LedgerEntry(**entry) for entry in json.loads(path.read_text())["entries"]]
    for entry in entries:
        if not entry.reason.strip() or "not implemented" in entry.reason.lower():
            raise ValueError(f"ledger entry {entry} needs a reason the difference is intended")
    return entries


@dataclass
class Verdict:
    """The outcome of comparing one scenario: what the ledger does not accept, and its stale entries."""

    unexplained: list[tuple[str, Difference]]  # (step, difference)
    stale: list[LedgerEntry]
    accepted: list[tuple[str, Difference, LedgerEntry]]

    @property
    def ok(self) -> bool:
        return not self.unexplained and not self.stale

    def report(self) -> str:
        lines = [f"step {step}: {difference}" for step, difference in self.unexplained]
        lines += [f"stale ledger entry (no longer differs): {entry.step} {entry.path}: {entry.reason}"
                  for entry in self.stale]
        return "\n".join(lines)


def judge(scenario: str, found: dict[str, list[Difference]], ledger: list[LedgerEntry]) -> Verdict:
    """Check the differences found per step of `scenario` against the ledger."""
    entries = [entry for entry in ledger if entry.scenario == scenario]
    used: set[LedgerEntry] = set()
    unexplained, accepted = [], []
    for step, diffs in found.items():
        for difference in diffs:
            entry = next((e for e in entries if e.step in (step, "*") and e.accepts(difference.path)), None)
            if entry is None:
                unexplained.append((step, difference))
            else:
                used.add(entry)
                accepted.append((step, difference, entry))
    stale = [entry for entry in entries if entry not in used]
    return Verdict(unexplained, stale, accepted)
