"""KIP-848 online migration through confluent-kafka (librdkafka): classic and consumer-protocol members together.

A `group.protocol=classic` consumer owns every partition; a `group.protocol=consumer` one joins the same group,
which becomes a consumer group: the partitions are shared without a partition ever owned by two members (both
consumers polled from one thread, so their rebalance callbacks form one timeline) and every record is read
exactly once. When the consumer-protocol member leaves, the group is classic again and the classic member
takes every partition back. Heartbeat intervals are lowered so each move takes a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer

from minibroker.testing.embedded import BrokerThread
from tests.helpers import unique_topic
from tests.integration import groups_common
from tests.integration.groups_common import (
    OwnershipTimeline,
    consumer_protocol_broker,  # noqa: F401  (the module's broker fixture)
    produce,
)

SETTLE = 30.0


def consumer(broker: BrokerThread, group: str, protocol: str) -> Consumer:
    config: dict[str, Any] = {"bootstrap.servers": broker.bootstrap_servers, "group.id": group,
                              "group.protocol": protocol, "auto.offset.reset": "earliest",
                              "enable.auto.commit": False}
    if protocol == "classic":
        config.update({"heartbeat.interval.ms": 200, "session.timeout.ms": 6000})
    return Consumer(config)


def poll_until(consumers: list[Consumer], done: Callable[[], bool], sink: list[Any]) -> None:
    """Poll every consumer in turn until `done()` or SETTLE seconds, keeping (partition, offset) in `sink`."""
    groups_common.poll_until(consumers, done, SETTLE, lambda m: sink.append((m.partition(), m.offset())))


def group_type(broker: BrokerThread, group: str) -> str | None:
    def look() -> str | None:
        if group in broker.cluster.groups.consumer.groups:
            return "consumer"
        return "classic" if group in broker.cluster.groups.groups else None
    return broker.call(look)


def test_classic_group_upgrades_and_downgrades_online(broker: BrokerThread) -> None:
    topic, group = unique_topic(), unique_topic("g")
    broker.create_topic(topic, 4)
    timeline = OwnershipTimeline()
    seen: list[Any] = []
    produce(broker, topic, 0, 20, 4)
    classic = consumer(broker, group, "classic")
    classic.subscribe([topic], **timeline.callbacks("classic"))
    poll_until([classic], lambda: len(seen) == 20 and timeline.partitions("classic") == set(range(4)), seen)
    classic.commit(asynchronous=False)
    assert group_type(broker, group) == "classic"

    modern = consumer(broker, group, "consumer")
    modern.subscribe([topic], **timeline.callbacks("modern"))
    both = [classic, modern]
    poll_until(both, lambda: len(timeline.partitions("classic")) == 2 and len(timeline.partitions("modern")) == 2,
               seen)
    assert group_type(broker, group) == "consumer"
    assert timeline.partitions("classic") | timeline.partitions("modern") == set(range(4))
    produce(broker, topic, 20, 20, 4)
    poll_until(both, lambda: len(seen) >= 40, seen)
    for each in both:
        each.commit(asynchronous=False)

    modern.close()  # the last consumer-protocol member leaves: the group is classic again
    timeline.owned["modern"] = set()
    assert group_type(broker, group) == "classic"
    # the classic group rebalances: the member takes every partition back, from the committed offsets (what it
    # read after its last commit would be read again, as after any eager rebalance, so produce after it)
    rebalances = timeline.assignments("classic")
    poll_until([classic], lambda: timeline.assignments("classic") > rebalances
               and timeline.partitions("classic") == set(range(4)), seen)
    produce(broker, topic, 40, 8, 4)
    poll_until([classic], lambda: len(seen) >= 48, seen)
    classic.close()
    assert len(seen) == len(set(seen)) == 48, "a record was read twice or not at all"
