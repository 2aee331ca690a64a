"""Fixtures the integration modules share: the compiled Java test programs, the KafkaJS programs' folder and a
wire client to the broker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from minibroker.testing.wire import WireClient
from tests.integration.clients import JAVA_CURRENT, JavaClients, node_dir, require_binary


@pytest.fixture(scope="module")
def java(tmp_path_factory: pytest.TempPathFactory) -> JavaClients:
    """The Java test programs (the current client set), compiled for this module."""
    return JavaClients(Path(tmp_path_factory.mktemp("java-classes")), version=JAVA_CURRENT)


@pytest.fixture(scope="module")
def node() -> Path:
    """tests/clients/node, with KafkaJS installed."""
    require_binary("node")
    return node_dir()


@pytest.fixture
def wire(broker: Any) -> Iterator[WireClient]:
    """A wire client connected to the module's `broker`, closed after the test."""
    with WireClient(broker.host, broker.port) as client:
        yield client
