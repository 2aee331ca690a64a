"""Fixtures: real broker processes on ephemeral ports, stopped by PID after use."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from minibroker.testing.process import BrokerProcess, start_broker
from tests.reference.fixtures import kafka_reference  # noqa: F401  (the run's Apache Kafka, started on first use)

# Hypothesis: no per-example deadline (a loaded 2-core machine took 256 ms for one that takes 8 ms: the outcome
# must not depend on the clock) and the same examples every run (derandomize: no outcome decided by chance);
# nothing is written to a .hypothesis folder.
settings.register_profile("minibroker", deadline=None, derandomize=True, database=None)
settings.load_profile("minibroker")

#: Where the tests that share one expensive process per run live: each group goes to one pytest-xdist worker.
SPARK_TESTS = "tests/spark/"
REFERENCE_FIXTURE = "kafka_reference"


@functools.cache
def worker_scope(module_path: str) -> str:
    """The scope `make test`'s workers share out whole: the module, so its module-scoped brokers start once,
    except that every module using the reference Kafka is one scope and every Spark module another, so each
    of those JVMs starts once per run."""
    if module_path.startswith(SPARK_TESTS):
        return "spark"
    path = Path(module_path)
    if path.suffix == ".py" and path.is_file() and REFERENCE_FIXTURE in path.read_text(encoding="utf-8"):
        return "kafka-reference"
    return module_path


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`pytest -n N`: whole scopes (worker_scope) per worker. xdist's own loadgroup cannot do this under
    pytest 9, which no longer reads the group suffix xdist writes into an item's node id."""
    from xdist.scheduler import LoadScopeScheduling

    class SharedProcessScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_scope(nodeid.split("::", 1)[0])

    return SharedProcessScheduling(config, log)


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
