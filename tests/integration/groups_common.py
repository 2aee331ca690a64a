"""Shared by the consumer-group client tests: first-join reporting and topic creation."""

from __future__ import annotations

import json
from typing import Any

from confluent_kafka.admin import AdminClient, NewTopic

from tests.integration.clients import ROOT

JOIN_RESULTS = ROOT / ".cache" / "group-first-join"


def report_first_join(client: str, seconds: float, **extra: Any) -> None:
    """Prints the first-join time and stores it in .cache/group-first-join/CLIENT.json."""
    result = {"client": client, "first_join_s": round(seconds, 3), **extra}
    JOIN_RESULTS.mkdir(parents=True, exist_ok=True)
    (JOIN_RESULTS / f"{client}.json").write_text(json.dumps(result) + "\n")
    print(json.dumps(result))


def create_topic(broker: Any, topic: str, partitions: int) -> None:
    """Create `topic` with `partitions` partitions through the admin API."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    for future in admin.create_topics([NewTopic(topic, partitions, 1)], operation_timeout=10).values():
        future.result(timeout=30)
