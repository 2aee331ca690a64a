"""Fixtures: real broker processes on ephemeral ports, stopped by PID after use."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from minibroker.testing.process import BrokerProcess, start_broker
from tests.reference.fixtures import kafka_reference  # noqa: F401  (the run's Apache Kafka, started on first use)


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
