"""Each scenario of tests/differential/scenarios sent to Apache Kafka and to minibroker: the same answers.

Both brokers get the same requests over the wire; both answers are decoded with minibroker's codec at the
step's version, normalised (normalise.py) and compared field by field (compare.py). A difference fails
unless ledger.json lists it with the reason it is intended; a ledger entry that no longer differs fails.
Kafka's answers are also checked against the scenario's golden (goldens/<version>/, see golden.py), so the
goldens test_replay.py compares with stay what Kafka answers; a Kafka run that differs from its golden is run
again (fresh names) before minibroker is compared, as a loaded machine can move Kafka's asynchronous steps. When
every run differs (a machine loaded throughout), a field where the live Kafka left its golden is compared with the
golden instead: what this Kafka answered on a quiet machine, for the same scenario and release.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from minibroker.testing.process import BrokerProcess, start_broker

from .compare import (
    against_golden_where_kafka_moved,
    judge,
    load_ledger,
    matches_golden_where_kafka_moved,
    step_differences,
)
from .golden import RECORD_HINT, load_golden, recorded_steps, stale_reason
from .scenario import Scenario, all_scenarios, check_followed, run

# the first test also starts the reference: storage format and JVM start are bounded at 120 s each
pytestmark = [pytest.mark.reference, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def minibroker_process(kafka_reference: Any) -> Iterator[BrokerProcess]:
    """A minibroker process with the reference's configs."""
    process = start_broker(*(f"{key}={value}" for key, value in kafka_reference.config.items()))
    yield process
    process.stop()


def _param(scenario: Scenario) -> Any:
    marks = []
    if scenario.xfail:  # a difference the lead has not yet decided on: fixed, or ledgered with its reason
        marks.append(pytest.mark.xfail(reason=scenario.xfail, strict=True, raises=AssertionError))
    return pytest.param(scenario, id=scenario.name, marks=marks)


#: Runs of a scenario against Kafka until it answers as its golden: a loaded machine can move Kafka's asynchronous
#: steps (its group coordinator learns a new topic a moment after Metadata shows it), and such a run says nothing
#: about minibroker; a Kafka that differs from its golden this many times in a row fails the test.
KAFKA_ATTEMPTS = 3


@pytest.mark.parametrize("scenario", [_param(s) for s in all_scenarios()])
def test_scenario_answers_as_kafka(scenario: Scenario, kafka_reference: Any,
                                   minibroker_process: BrokerProcess) -> None:
    names, kafka_steps = _kafka_run(scenario, kafka_reference)
    ours = recorded_steps(run(scenario, minibroker_process.host, minibroker_process.port, names), names)
    found = {ours_step["name"]: step_differences(ours_step, kafka_step)
             for ours_step, kafka_step in zip(ours, kafka_steps, strict=True)}
    changed = _golden_changes(scenario, kafka_reference.version, kafka_steps)
    golden_steps: list[dict[str, Any]] = []
    if changed:  # in every run: where Kafka left its golden, minibroker is held to the golden
        golden = load_golden(kafka_reference.version, scenario.name)
        assert golden is not None
        golden_steps = golden.steps
        found = against_golden_where_kafka_moved(found, ours, kafka_steps, golden_steps)
    verdict = judge(scenario.name, found, load_ledger())
    assert verdict.ok, f"{scenario.name} differs from Apache Kafka {kafka_reference.version}:\n{verdict.report()}"
    assert not changed or matches_golden_where_kafka_moved(ours, kafka_steps, golden_steps), (
        f"Apache Kafka {kafka_reference.version} no longer answers {scenario.name} as its golden says, and "
        "minibroker does not answer as the golden there either; re-record it or make normalise.py cover the "
        "run-dependent value:\n" + "\n".join(changed) + "\n"
        + RECORD_HINT.format(name=scenario.name, version=kafka_reference.version))


def _kafka_run(scenario: Scenario, kafka_reference: Any) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """This run's vars and Kafka's normalised answers: the first run that answers as the golden, or the last."""
    for _ in range(KAFKA_ATTEMPTS):
        names = scenario.make_vars()
        kafka = run(scenario, kafka_reference.host, kafka_reference.port, names)
        check_followed(scenario, kafka)
        kafka_steps = recorded_steps(kafka, names)
        if not _golden_changes(scenario, kafka_reference.version, kafka_steps):
            break
    return names, kafka_steps


def _golden_changes(scenario: Scenario, kafka_version: str, kafka_steps: list[dict[str, Any]]) -> list[str]:
    """Where Kafka did not answer as its golden says (when the golden is of these steps): replay compares with
    the truth. Nothing when there is no current golden: test_replay.py names the missing or outdated one."""
    golden = load_golden(kafka_version, scenario.name)
    if golden is None or stale_reason(golden, scenario, kafka_version) is not None:
        return []
    return [f"step {live['name']}: {difference.path}: live {json.dumps(difference.minibroker)} "
            f"!= golden {json.dumps(difference.kafka)}"
            for live, recorded in zip(kafka_steps, golden.steps, strict=True)
            for difference in step_differences(live, recorded)]
