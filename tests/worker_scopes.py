"""How `make test` shares the suite out between its pytest-xdist workers.

A worker takes whole scopes (`worker_scope`): one module, so its module-scoped broker starts once, or one group
of modules that share an expensive process per run (the reference Kafka, Spark). Scopes are handed out longest
first (longest-processing-time scheduling): a long scope started last would be the run's tail while the other
worker sits idle. The lengths come from `scope_weights.json`, the seconds each scope took in a full run, written
by `pytest --record-scope-weights` (the controller sums each test's setup, call and teardown; a run of part of
the suite updates only the scopes it ran); a scope the file does not list counts as 0 s and keeps xdist's order.
"""

from __future__ import annotations

import functools
import json
from collections import OrderedDict, defaultdict
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
WEIGHTS = Path(__file__).resolve().parent / "scope_weights.json"
#: Where the tests that share one expensive process per run live: each group goes to one worker.
SPARK_TESTS = "tests/spark/"
REFERENCE_FIXTURE = "kafka_reference"


@functools.cache
def worker_scope(module_path: str) -> str:
    """The scope a module's tests belong to: "spark", "kafka-reference" or the module itself."""
    if module_path.startswith(SPARK_TESTS):
        return "spark"
    path = ROOT / module_path
    if path.suffix == ".py" and path.is_file() and REFERENCE_FIXTURE in path.read_text(encoding="utf-8"):
        return "kafka-reference"
    return module_path


def scope_of(nodeid: str) -> str:
    return worker_scope(nodeid.split("::", 1)[0])


@functools.cache
def scope_weights() -> dict[str, float]:
    """Seconds per scope from the last recorded full run (empty without the file)."""
    try:
        return {str(k): float(v) for k, v in json.loads(WEIGHTS.read_text(encoding="utf-8")).items()}
    except FileNotFoundError:
        return {}


class LongestFirstQueue(OrderedDict[str, dict[str, bool]]):
    """xdist's work queue (scope -> its tests), whose next unit is the heaviest scope left; scopes of equal
    weight (e.g. all those the weights file does not list) leave in the order xdist queued them."""

    def popitem(self, last: bool = True) -> tuple[str, dict[str, bool]]:
        if last:
            return super().popitem(last=True)
        weights = scope_weights()
        heaviest = max(self, key=lambda scope: weights.get(scope, 0.0))  # max keeps the first of equals
        return heaviest, self.pop(heaviest)


def make_scheduler(config: pytest.Config, log: Any) -> Any:
    """A LoadScopeScheduling whose scopes are worker_scope's, handed out longest first. xdist's own loadgroup
    cannot group modules under pytest 9, which no longer reads the group suffix xdist writes into an item's node
    id; its own order (most tests first) puts a 2-test Spark scope of minutes behind hundreds of quick tests."""
    from xdist.scheduler import LoadScopeScheduling

    class LongestScopeFirstScheduling(LoadScopeScheduling):
        def __init__(self, config: pytest.Config, log: Any = None) -> None:
            super().__init__(config, log)
            self.workqueue = LongestFirstQueue()

        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return LongestScopeFirstScheduling(config, log)


class ScopeWeightRecorder:
    """Sums each scope's test durations as the reports reach the controller; writes them at the end."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[scope_of(report.nodeid)] += report.duration

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # a run of part of the suite updates the scopes it ran and keeps the others' weights
        merged = {**scope_weights(), **{scope: round(seconds, 1) for scope, seconds in self.seconds.items()}}
        ranked = dict(sorted(merged.items(), key=lambda kv: -kv[1]))
        WEIGHTS.write_text(json.dumps(ranked, indent=1) + "\n", encoding="utf-8")
