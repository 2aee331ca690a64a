"""The pytest fixture `kafka_reference`: one Apache Kafka node for the whole run, stopped at its end.

Tests that use it are marked `reference` (`-m "not reference"` leaves them out). Without java or the jars
the tests are skipped, or fail when CI is set (tests/integration/clients.py `missing()`).

MINIBROKER_KAFKA_REFERENCE=host:port uses a Kafka already running instead (e.g. one started with
`python -m tests.reference.launcher`, which has REFERENCE_CONFIG, while working on the differential suite).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from tests.integration.clients import missing

from .launcher import DEFAULT_VERSION, ReferenceKafka, ReferenceUnavailable
from .launcher import REFERENCE_CONFIG as _REFERENCE_CONFIG

#: Broker configs of the session's reference, on top of Kafka's defaults; set on minibroker too (the launcher's
#: REFERENCE_CONFIG: a SASL_PLAINTEXT listener and StandardAuthorizer with User:ANONYMOUS a super user).
REFERENCE_CONFIG: dict[str, str] = dict(_REFERENCE_CONFIG)
ADDRESS_ENV = "MINIBROKER_KAFKA_REFERENCE"


@dataclass
class RunningKafka:
    """A reference Kafka this run did not start (ADDRESS_ENV)."""

    host: str
    port: int
    version: str = DEFAULT_VERSION
    config: dict[str, str] = field(default_factory=dict)

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"


@pytest.fixture(scope="session")
def kafka_reference() -> Iterator[ReferenceKafka | RunningKafka]:
    """The run's Apache Kafka (4.3.1, one KRaft node on 127.0.0.1), started on first use."""
    address = os.environ.get(ADDRESS_ENV)
    if address:
        host, _, port = address.rpartition(":")
        yield RunningKafka(host, int(port), config=dict(REFERENCE_CONFIG))
        return
    try:
        kafka = ReferenceKafka.start(config=REFERENCE_CONFIG)
    except ReferenceUnavailable as exc:
        missing(str(exc))
    try:
        yield kafka
    finally:
        kafka.stop()
