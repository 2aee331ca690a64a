"""KIP-848 consumer groups through confluent-kafka (librdkafka) with `group.protocol=consumer`.

One member gets every partition at once; a second one joins and partitions move without a partition ever
owned by two members (checked on the assignments each consumer's on_assign/on_revoke saw, both consumers
polled from one thread so the callbacks form one timeline); a member leaves and the other takes its
partitions; commits resume without redelivery; a static member restarts without a rebalance; a regex
subscription picks up a topic created later; the admin client lists, describes and deletes the group. The
Java client (kafka-clients 3.9, whose AsyncKafkaConsumer speaks KIP-848 with group.protocol=consumer) consumes,
commits and resumes. The broker's heartbeat interval is lowered so that a move takes a few hundred
milliseconds instead of Kafka's default 5 s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer

from minibroker.testing.embedded import BrokerThread
from tests.helpers import unique_topic
from tests.integration import groups_common
from tests.integration.groups_common import (
    OwnershipTimeline,
    consumer_protocol_broker,  # noqa: F401  (the module's broker fixture)
    produce,
)

SETTLE = 20.0


def consumer(broker: BrokerThread, group: str, **config: Any) -> Consumer:
    return Consumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": group, "group.protocol": "consumer",
                     "auto.offset.reset": "earliest", "enable.auto.commit": False, **config})


def poll_until(consumers: list[Consumer], done: Callable[[], bool], sink: list[Any] | None = None) -> None:
    """Poll every consumer in turn until `done()` or SETTLE seconds, keeping the messages in `sink`."""
    groups_common.poll_until(consumers, done, SETTLE, None if sink is None else sink.append)


def partitions_of(timeline: OwnershipTimeline, name: str) -> set[int]:
    return timeline.partitions(name)


def test_partitions_move_between_members_never_owned_twice(broker: BrokerThread) -> None:
    topic, group = unique_topic(), unique_topic("g")
    broker.create_topic(topic, 6)
    timeline = OwnershipTimeline()
    first = consumer(broker, group)
    first.subscribe([topic], **timeline.callbacks("first"))
    started = time.monotonic()
    poll_until([first], lambda: len(timeline.owned["first"]) == 6)
    print(f"first member assigned in {time.monotonic() - started:.3f}s")
    second = consumer(broker, group)
    second.subscribe([topic], **timeline.callbacks("second"))
    poll_until([first, second], lambda: len(timeline.owned["first"]) == 3 and len(timeline.owned["second"]) == 3)
    assert partitions_of(timeline, "first") | partitions_of(timeline, "second") == set(range(6))
    second.close()  # leaves with epoch -1: the first member gets everything back
    timeline.owned["second"] = set()
    poll_until([first], lambda: len(timeline.owned["first"]) == 6)
    first.close()


def test_commits_resume_without_redelivery(broker: BrokerThread) -> None:
    topic, group = unique_topic(), unique_topic("g")
    broker.create_topic(topic, 3)
    produce(broker, topic, 0, 30, 3)
    seen: list[Any] = []
    member = consumer(broker, group)
    member.subscribe([topic])
    poll_until([member], lambda: len(seen) >= 15, seen)
    member.commit(asynchronous=False)
    committed = {(m.partition(), m.offset()) for m in seen}
    member.close()
    produce(broker, topic, 30, 30, 3)
    again: list[Any] = []
    member = consumer(broker, group)
    member.subscribe([topic])
    poll_until([member], lambda: len(committed) + len(again) >= 60, again)
    member.close()
    resumed = {(m.partition(), m.offset()) for m in again}
    assert not (resumed & committed), "records were delivered again after the commit"
    assert len(resumed | committed) == 60


def test_static_member_restarts_without_rebalance(broker: BrokerThread) -> None:
    topic, group = unique_topic(), unique_topic("g")
    broker.create_topic(topic, 4)
    timeline = OwnershipTimeline()
    member = consumer(broker, group, **{"group.instance.id": "static-1"})
    member.subscribe([topic], **timeline.callbacks("one"))
    poll_until([member], lambda: len(timeline.owned["one"]) == 4)
    epoch = broker.call(lambda: broker.cluster.groups.consumer.groups[group].group_epoch)
    member.close()  # a static member leaves with epoch -2 and keeps its partitions
    restarted = consumer(broker, group, **{"group.instance.id": "static-1"})
    restarted.subscribe([topic], **timeline.callbacks("two"))
    poll_until([restarted], lambda: len(timeline.owned["two"]) == 4)
    restarted.close()
    assert broker.call(lambda: broker.cluster.groups.consumer.groups[group].group_epoch) == epoch


def test_regex_subscription_picks_up_a_new_topic(broker: BrokerThread) -> None:
    prefix, group = unique_topic("rx"), unique_topic("g")
    broker.create_topic(f"{prefix}-a", 2)
    timeline = OwnershipTimeline()
    member = consumer(broker, group)
    member.subscribe([f"^{prefix}-.*"], **timeline.callbacks("one"))
    poll_until([member], lambda: len(timeline.owned["one"]) == 2)
    broker.create_topic(f"{prefix}-b", 3)
    poll_until([member], lambda: len(timeline.owned["one"]) == 5)
    assert {t for t, _ in timeline.owned["one"]} == {f"{prefix}-a", f"{prefix}-b"}
    member.close()


def test_admin_lists_describes_and_deletes_a_consumer_group(broker: BrokerThread) -> None:
    """librdkafka's admin client reads the group through ConsumerGroupDescribe and ListGroups v5."""
    from confluent_kafka import ConsumerGroupState, ConsumerGroupType
    from confluent_kafka.admin import AdminClient

    topic, group = unique_topic(), unique_topic("g")
    broker.create_topic(topic, 2)
    timeline = OwnershipTimeline()
    member = consumer(broker, group)
    member.subscribe([topic], **timeline.callbacks("one"))
    poll_until([member], lambda: len(timeline.owned["one"]) == 2)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    described = admin.describe_consumer_groups([group])[group].result(timeout=SETTLE)
    assert (described.state, described.type) == (ConsumerGroupState.STABLE, ConsumerGroupType.CONSUMER)
    assert [sorted(tp.partition for tp in m.assignment.topic_partitions) for m in described.members] == [[0, 1]]
    listed = admin.list_consumer_groups().result(timeout=SETTLE).valid
    assert [(g.type, g.state) for g in listed if g.group_id == group] == \
        [(ConsumerGroupType.CONSUMER, ConsumerGroupState.STABLE)]
    member.close()
    assert admin.delete_consumer_groups([group])[group].result(timeout=SETTLE) is None


# -- the Java client -------------------------------------------------------------------------------------------

class _JavaTarget:
    """What tests.integration.clients needs of a broker: its address (and a log, which a thread broker lacks)."""

    def __init__(self, broker: BrokerThread) -> None:
        self.bootstrap_servers = broker.bootstrap_servers

    def log_text(self) -> str:
        return ""


@pytest.mark.java
def test_java_consumer_with_the_consumer_protocol(broker: BrokerThread, tmp_path_factory: pytest.TempPathFactory,
                                                  ) -> None:
    """kafka-clients 3.9 speaks KIP-848 when asked (group.protocol=consumer, its AsyncKafkaConsumer)."""
    from pathlib import Path

    from tests.integration.clients import JAVA_CURRENT, JavaClients

    java = JavaClients(Path(tmp_path_factory.mktemp("java-kip848")), version=JAVA_CURRENT)  # the 4.x AsyncKafkaConsumer
    target = _JavaTarget(broker)
    topic, group = unique_topic(), unique_topic("g")
    broker.create_topic(topic, 3)
    produce(broker, topic, 0, 30, 3)
    first = java.run(target, "GroupConsumer", topic, group, "expect=30", "commit=true", "group.protocol=consumer",
                     timeout=90).check().lines()
    assigned = {p for e in first if e.get("event") == "assigned" for p in e["partitions"]}
    assert assigned == {0, 1, 2}
    assert len([e for e in first if e.get("event") == "record"]) == 30
    produce(broker, topic, 30, 9, 3)
    second = java.run(target, "GroupConsumer", topic, group, "expect=9", "linger.ms=500",
                      "group.protocol=consumer", timeout=90).check().lines()
    offsets = [e["offset"] for e in second if e.get("event") == "record"]
    assert len(offsets) == 9 and min(offsets) >= 10  # resumed after the 10 committed records per partition
