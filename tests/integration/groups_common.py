"""Shared by the consumer-group client tests: first-join reporting, topic creation, ownership timelines, polling."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

from minibroker.testing.embedded import BrokerThread
from tests.integration.clients import ROOT

JOIN_RESULTS = ROOT / ".cache" / "group-first-join"
#: Heartbeats of the consumer protocol (KIP-848) every 200 ms: assignments move within a test's patience.
CONSUMER_PROTOCOL_CONFIG = {"group.consumer.heartbeat.interval.ms": 200,
                            "group.consumer.min.heartbeat.interval.ms": 100}


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


class OwnershipTimeline:
    """Every member's owned (topic, partition)s from its confluent-kafka rebalance callbacks; an assignment of a
    partition another member still owns fails the test at once."""

    def __init__(self) -> None:
        self.owned: dict[str, set[tuple[str, int]]] = {}
        self.events: list[tuple[str, str, list[tuple[str, int]]]] = []

    def callbacks(self, name: str) -> dict[str, Callable[[Any, list[Any]], None]]:
        """`on_assign`, `on_revoke` and `on_lost` for `Consumer.subscribe` of member `name`."""
        self.owned.setdefault(name, set())

        def assign(_consumer: Any, partitions: list[Any]) -> None:
            given = {(tp.topic, tp.partition) for tp in partitions}
            for other, theirs in self.owned.items():
                assert other == name or not (theirs & given), f"{name} got {given & theirs} still owned by {other}"
            self.owned[name] |= given
            self.events.append((name, "assign", sorted(given)))

        def revoke(_consumer: Any, partitions: list[Any]) -> None:
            taken = {(tp.topic, tp.partition) for tp in partitions}
            self.owned[name] -= taken
            self.events.append((name, "revoke", sorted(taken)))

        return {"on_assign": assign, "on_revoke": revoke, "on_lost": revoke}

    def partitions(self, name: str) -> set[int]:
        """The partition numbers member `name` owns."""
        return {partition for _, partition in self.owned[name]}

    def assignments(self, name: str) -> int:
        """How many times member `name` was given partitions."""
        return sum(1 for member, kind, _ in self.events if member == name and kind == "assign")


def produce(broker: Any, topic: str, start: int, count: int, partitions: int, keyed: bool = False) -> None:
    """Values v-<start>..v-<start+count-1> (keys k-I when `keyed`), record i to partition i % `partitions`, all
    acknowledged."""
    producer = Producer({"bootstrap.servers": broker.bootstrap_servers})
    errors: list[Any] = []
    for i in range(start, start + count):
        producer.produce(topic, value=f"v-{i}".encode(), key=f"k-{i}".encode() if keyed else None,
                         partition=i % partitions, on_delivery=lambda err, _msg: errors.append(err) if err else None)
    assert producer.flush(30) == 0
    assert errors == []


def poll_until(consumers: list[Any], done: Callable[[], bool], settle: float,
               on_message: Callable[[Any], None] | None = None) -> None:
    """Poll every consumer in turn from this thread until `done()`, failing after `settle` seconds."""
    deadline = time.monotonic() + settle
    while not done():
        assert time.monotonic() < deadline, "the group did not settle"
        for each in consumers:
            message = each.poll(0.05)
            if message is not None and message.error() is None and on_message is not None:
                on_message(message)


@pytest.fixture(scope="module", name="broker")
def consumer_protocol_broker() -> Iterator[BrokerThread]:
    """The module's `broker`: an embedded broker with CONSUMER_PROTOCOL_CONFIG (import it into the module)."""
    with BrokerThread(config=CONSUMER_PROTOCOL_CONFIG).start() as running:
        yield running
