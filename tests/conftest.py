"""Fixtures: real broker processes on ephemeral ports, stopped by PID after use."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from minibroker.testing.process import BrokerProcess, start_broker
from tests.reference.fixtures import kafka_reference  # noqa: F401  (the run's Apache Kafka, started on first use)
from tests.worker_scopes import ScopeWeightRecorder, make_scheduler

# Hypothesis: no per-example deadline (a loaded 2-core machine took 256 ms for one that takes 8 ms: the outcome
# must not depend on the clock), nor its other speed check, the too_slow health check (Hypothesis 6.170 fails a
# test whose first ten examples take over 30 s to generate when there is no deadline: a stalled machine's
# verdict, not the test's), and the same examples every run (derandomize: no outcome decided by chance); nothing
# is written to a .hypothesis folder.
settings.register_profile("minibroker", deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("minibroker")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--record-scope-weights", action="store_true",
                     help="write each worker scope's seconds to tests/scope_weights.json (make test's workers "
                          "take the longest scopes first)")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--record-scope-weights") and not hasattr(config, "workerinput"):  # the controller only
        config.pluginmanager.register(ScopeWeightRecorder(), "scope-weight-recorder")


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`pytest -n N`: whole worker scopes per worker, the longest first (tests/worker_scopes.py)."""
    return make_scheduler(config, log)


@pytest.fixture(scope="module")
def broker() -> Iterator[BrokerProcess]:
    """A broker process shared by the tests of one module."""
    process = start_broker()
    yield process
    process.stop()


@pytest.fixture
def broker_factory() -> Iterator[Callable[..., BrokerProcess]]:
    """Start extra brokers with `--set` configs; all are stopped after the test."""
    started: list[BrokerProcess] = []

    def factory(*set_args: str) -> BrokerProcess:
        process = start_broker(*set_args)
        started.append(process)
        return process

    yield factory
    for process in started:
        process.stop()
