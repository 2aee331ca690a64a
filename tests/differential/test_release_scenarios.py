"""Each release profile's scenarios (scenarios/<release>/, release_scenarios.py) sent to a minibroker started
`--as-version <release>` and compared with the answers recorded from that release's Kafka: no JVM needed.

As test_replay.py does for the reference release: the golden (goldens/<Kafka version>/<scenario>.json) must be
current, minibroker runs with the configs it was recorded with, answers are normalised and judged with the
ledger. RELEASE_GAPS lists the differences of these scenarios that are intended, each with its reason; an entry
that no longer differs fails, as a stale ledger entry does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from minibroker.testing.process import BrokerProcess, start_broker
from tests.reference.launcher import RELEASE_VERSIONS

from .compare import LedgerEntry, judge, load_ledger, step_differences
from .golden import load_golden, recorded_steps, stale_reason
from .release_scenarios import release_scenarios, scenario_releases, scenarios_for
from .scenario import Scenario, run

_LAUNCHER = ("the reference's advertised.listeners is set in the launcher's server.properties (STATIC_BROKER_CONFIG, "
             "naming its port); minibroker advertises its bind address without the config being set")
#: Intended differences of the release scenarios, judged as ledger entries are.
RELEASE_GAPS = [
    LedgerEntry("release39_broker_configs", "describe-broker", "results[0].configs[name=advertised.listeners].value",
                _LAUNCHER),
    LedgerEntry("release39_broker_configs", "describe-broker",
                "results[0].configs[name=advertised.listeners].config_source", _LAUNCHER),
]


@pytest.fixture(scope="module")
def minibroker_as() -> Iterator[Callable[[str, dict[str, str]], BrokerProcess]]:
    """A minibroker process per release and set of recorded configs, started on first use."""
    started: dict[tuple[str, tuple[tuple[str, str], ...]], BrokerProcess] = {}

    def get(release: str, config: dict[str, str]) -> BrokerProcess:
        key = (release, tuple(sorted(config.items())))
        if key not in started:
            started[key] = start_broker(*(f"{name}={value}" for name, value in key[1]),
                                        extra_args=("--as-version", release))
        return started[key]

    yield get
    for process in started.values():
        process.stop()


def _params() -> list[Any]:
    params = []
    for release in scenario_releases():
        for scenario in release_scenarios(release):
            marks = [pytest.mark.xfail(reason=scenario.xfail, strict=True, raises=AssertionError)] \
                if scenario.xfail else []
            params.append(pytest.param(release, scenario, id=f"{release}:{scenario.name}", marks=marks))
    return params


@pytest.mark.parametrize(("release", "scenario"), _params())
def test_release_scenario_answers_as_recorded_kafka(release: str, scenario: Scenario,
                                                    minibroker_as: Callable[[str, dict[str, str]], BrokerProcess]
                                                    ) -> None:
    kafka_version = RELEASE_VERSIONS[release]
    golden = load_golden(kafka_version, scenario.name)
    problem = stale_reason(golden, scenario, kafka_version)
    if problem is not None:
        pytest.fail(f"{problem} (scenarios/{release}/: add --kafka-version {kafka_version} --config node.id=1)")
    assert golden is not None
    process = minibroker_as(release, golden.minibroker_config)
    names = scenario.make_vars()
    ours = recorded_steps(run(scenario, process.host, process.port, names), names)
    found = {ours_step["name"]: step_differences(ours_step, kafka_step)
             for ours_step, kafka_step in zip(ours, golden.steps, strict=True)}
    verdict = judge(scenario.name, found, [*load_ledger(), *RELEASE_GAPS])
    assert verdict.ok, (f"{scenario.name}: minibroker --as-version {release} differs from Apache Kafka {kafka_version} "
                        f"as recorded {golden.provenance.get('recorded')}:\n{verdict.report()}")


def test_every_release_with_scenarios_has_a_profile_and_its_kafka_records_them() -> None:
    releases = scenario_releases()
    assert "3.9" in releases
    for release in releases:
        assert release_scenarios(release), f"scenarios/{release}/ is empty"
        assert [s.name for s in scenarios_for(RELEASE_VERSIONS[release])] == \
            [s.name for s in release_scenarios(release)]
        for scenario in release_scenarios(release):
            assert load_golden(RELEASE_VERSIONS[release], scenario.name) is not None, scenario.name


def test_the_reference_release_records_the_top_level_scenarios() -> None:
    names = {scenario.name for scenario in scenarios_for(RELEASE_VERSIONS["4.3"])}
    assert "api_versions" in names and not names & {s.name for s in release_scenarios("3.9")}
