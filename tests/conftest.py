"""Fixtures: real broker processes on ephemeral ports, stopped by PID after use."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from hypothesis import settings

from minibroker.testing.process import BrokerProcess, start_broker
from tests.reference.fixtures import kafka_reference  # noqa: F401  (the run's Apache Kafka, started on first use)

# Hypothesis: no per-example deadline (a loaded 2-core machine took 256 ms for one that takes 8 ms: the outcome
# must not depend on the clock) and the same examples every run (derandomize: no outcome decided by chance);
# nothing is written to a .hypothesis folder.
settings.register_profile("minibroker", deadline=None, derandomize=True, database=None)
settings.load_profile("minibroker")

#: Tests that share one expensive process per run go to one pytest-xdist worker, so it starts once.
SHARED_PROCESS_GROUPS = {"kafka_reference": "kafka-reference", "spark": "spark"}


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook turns the marks into the nodeids' @group suffix
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Group the tests for `pytest -n N --dist loadgroup` (make test): a module stays on one worker, so
    its module-scoped brokers start once; the reference Kafka's tests and Spark's share one worker each."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if "kafka_reference" in fixtures:
            group = SHARED_PROCESS_GROUPS["kafka_reference"]
        elif "spark" in fixtures:
            group = SHARED_PROCESS_GROUPS["spark"]
        else:
            group = item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group(group))


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
