"""Each scenario sent to minibroker and compared with Apache Kafka's recorded answers: no JVM needed.

The goldens (goldens/<Kafka version>/<scenario>.json, written by `python -m tests.differential.record`) hold
Kafka's normalised answers; minibroker's answers are normalised the same way and judged with the same ledger
as the live comparison (test_scenarios.py). A scenario without a golden, or changed since its golden was
recorded, fails with the command that records it; a golden without a scenario fails too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from minibroker.testing.process import BrokerProcess, start_broker
from tests.reference.launcher import DEFAULT_VERSION

from .compare import judge, load_ledger, step_differences
from .golden import Golden, golden_path, load_golden, recorded_steps, recorded_versions, stale_reason
from .release_scenarios import scenarios_for
from .scenario import Scenario, all_scenarios, run

#: The Kafka release minibroker is replayed against (goldens of other releases are kept for reference).
KAFKA_VERSION = DEFAULT_VERSION
SCENARIOS = all_scenarios()


@pytest.fixture(scope="module")
def minibroker_with() -> Iterator[Callable[[dict[str, str]], BrokerProcess]]:
    """A minibroker process per set of configs the goldens were recorded with, started on first use."""
    started: dict[tuple[tuple[str, str], ...], BrokerProcess] = {}

    def get(config: dict[str, str]) -> BrokerProcess:
        key = tuple(sorted(config.items()))
        if key not in started:
            started[key] = start_broker(*(f"{name}={value}" for name, value in key))
        return started[key]

    yield get
    for process in started.values():
        process.stop()


def _param(scenario: Scenario) -> Any:
    marks = []
    if scenario.xfail:  # as in the live comparison: a known difference the lead has not yet decided on
        marks.append(pytest.mark.xfail(reason=scenario.xfail, strict=True, raises=AssertionError))
    return pytest.param(scenario, id=scenario.name, marks=marks)


@pytest.mark.parametrize("scenario", [_param(s) for s in SCENARIOS])
def test_scenario_answers_as_recorded_kafka(scenario: Scenario,
                                            minibroker_with: Callable[[dict[str, str]], BrokerProcess]) -> None:
    golden = load_golden(KAFKA_VERSION, scenario.name)
    problem = stale_reason(golden, scenario, KAFKA_VERSION)
    if problem is not None:
        pytest.fail(problem)
    assert golden is not None
    process = minibroker_with(golden.minibroker_config)
    names = scenario.make_vars()
    ours = recorded_steps(run(scenario, process.host, process.port, names), names)
    found = {ours_step["name"]: step_differences(ours_step, kafka_step)
             for ours_step, kafka_step in zip(ours, golden.steps, strict=True)}
    verdict = judge(scenario.name, found, load_ledger())
    assert verdict.ok, (f"{scenario.name} differs from Apache Kafka {KAFKA_VERSION} as recorded "
                        f"{golden.provenance.get('recorded')}:\n{verdict.report()}")


def test_every_golden_belongs_to_a_scenario() -> None:
    for version in recorded_versions():  # a release profile's Kafka (3.9.1) records scenarios/<release>/
        names = {scenario.name for scenario in scenarios_for(version)}
        orphans = sorted(path.stem for path in golden_path(version, "x").parent.glob("*.json")
                         if path.stem not in names)
        assert not orphans, f"goldens of Apache Kafka {version} without a scenario (delete them): {orphans}"


def test_the_reference_release_has_goldens() -> None:
    assert KAFKA_VERSION in recorded_versions()


def _some_golden() -> tuple[Scenario, Golden]:
    scenario = next(s for s in SCENARIOS if len(s.steps) > 1 and load_golden(KAFKA_VERSION, s.name))
    golden = load_golden(KAFKA_VERSION, scenario.name)
    assert golden is not None
    return scenario, golden


def test_a_scenario_changed_since_its_golden_fails_replay_saying_how_to_record_it() -> None:
    scenario, golden = _some_golden()
    assert stale_reason(golden, scenario, KAFKA_VERSION) is None
    first = scenario.steps[0]
    changed = replace(scenario, steps=[replace(first, version=first.version + 1), *scenario.steps[1:]])
    problem = stale_reason(golden, changed, KAFKA_VERSION)
    assert problem is not None and "changed since its golden" in problem
    assert f"python -m tests.differential.record --scenario {scenario.name}" in problem


def test_a_scenario_without_a_golden_fails_replay_saying_how_to_record_it() -> None:
    scenario, _ = _some_golden()
    problem = stale_reason(None, scenario, KAFKA_VERSION)
    assert problem is not None and "has no golden" in problem
    assert f"--scenario {scenario.name}" in problem


def test_a_description_or_xfail_change_keeps_the_golden() -> None:
    scenario, golden = _some_golden()
    assert stale_reason(golden, replace(scenario, description="other words", xfail="a reason"),
                        KAFKA_VERSION) is None
