"""Each scenario of tests/differential/scenarios sent to Apache Kafka and to minibroker: the same answers.

Both brokers get the same requests over the wire; both answers are decoded with minibroker's codec at the
step's version, normalised (normalise.py) and compared field by field (compare.py). A difference fails
unless ledger.json lists it with the reason it is intended; a ledger entry that no longer differs fails.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from minibroker.testing.process import BrokerProcess, start_broker

from .compare import answer_differences, judge, load_ledger
from .normalise import Normaliser
from .scenario import Scenario, all_scenarios, lookup, run

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


@pytest.mark.parametrize("scenario", [_param(s) for s in all_scenarios()])
def test_scenario_answers_as_kafka(scenario: Scenario, kafka_reference: Any,
                                   minibroker_process: BrokerProcess) -> None:
    names = scenario.make_vars()
    kafka = run(scenario, kafka_reference.host, kafka_reference.port, names)
    for answer in kafka:  # a scenario Kafka itself does not follow is a broken scenario, not a difference
        step = answer.step
        if step.expect == "closed":
            if not answer.closed:
                raise RuntimeError(f"{scenario.name}/{step.name}: Kafka did not close the connection")
        elif answer.closed:
            raise RuntimeError(f"{scenario.name}/{step.name}: Kafka closed the connection")
        elif step.until and lookup(answer.response, step.until["path"]) != step.until["equals"]:
            raise RuntimeError(f"{scenario.name}/{step.name}: Kafka never reached {step.until}")
    ours = run(scenario, minibroker_process.host, minibroker_process.port, names)
    ours_names, kafka_names = Normaliser(names), Normaliser(names)
    found = {ours_answer.step.name: answer_differences(ours_answer, kafka_answer, ours_names, kafka_names)
             for ours_answer, kafka_answer in zip(ours, kafka, strict=True)}
    verdict = judge(scenario.name, found, load_ledger())
    assert verdict.ok, f"{scenario.name} differs from Apache Kafka {kafka_reference.version}:\n{verdict.report()}"
