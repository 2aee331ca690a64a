"""Initial feature levels chosen as `kafka-storage format --feature` chooses them: the pytest factory's
`features=` and `minibroker serve --feature`, with StorageTool's refusals (Kafka 4.3.1's messages)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import Any

from minibroker.protocol.messages import ApiVersionsRequest
from minibroker.testing.wire import WireClient


def finalized(host: str, port: int) -> dict[str, int]:
    with WireClient(host, port) as wire:
        answer = wire.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"), 4)
    return {feature.name: feature.max_version_level for feature in answer.finalized_features}


def test_an_older_metadata_version_lowers_the_other_defaults(kafka_broker_factory: Callable[..., Any]) -> None:
    broker = kafka_broker_factory(features={"metadata.version": 25})
    host, port = broker.bootstrap_servers.split(",")[0].rsplit(":", 1)
    assert finalized(host, int(port)) == {"group.version": 1, "metadata.version": 25,
                                          "transaction.version": finalized_transaction_version(broker)}


def finalized_transaction_version(broker: Any) -> int:
    """The release's own transaction.version, which metadata.version 25 keeps (its Kafka default there is 2)."""
    from minibroker.apis.releases import LATEST, release

    return min(dict(release(LATEST).features.finalized)["transaction.version"], 2)


def test_serve_refuses_an_unknown_feature_with_storage_tools_message() -> None:
    done = subprocess.run([sys.executable, "-m", "minibroker", "serve", "--port", "0", "--feature", "foo.bar=1"],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert ("refusing to start: Unsupported feature: foo.bar. Supported features are: "
            "eligible.leader.replicas.version, group.version, kraft.version, share.version, streams.version, "
            "transaction.version") in done.stderr


def test_serve_refuses_an_unmet_dependency() -> None:
    done = subprocess.run([sys.executable, "-m", "minibroker", "serve", "--port", "0", "--feature",
                           "metadata.version=21", "--feature", "eligible.leader.replicas.version=1"],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert ("eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version level 23"
            in done.stderr)
