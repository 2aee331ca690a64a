"""The Java 4.x KafkaShareConsumer against minibroker over TCP (KIP-932, issue 26), and the same run on Kafka.

tests/clients/java/v4/ShareConsume.java produces 30 records and consumes them with three share consumers of one
group on one partition. In explicit acknowledgement mode one record is RELEASEd at its first delivery, one
REJECTed, the others ACCEPTed: every record is accepted exactly once, the released one comes back with delivery
count 2, the rejected one never comes back. In implicit mode every record is delivered once. When a consumer hangs
holding records (it stops polling), they come back to the others after the acquisition lock (30 s by default)
with delivery count 2. Against the reference Kafka the outcomes are the same.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.helpers import unique_topic
from tests.integration.clients import JavaClients

pytestmark = [pytest.mark.java, pytest.mark.timeout(600)]

COUNT = 30


def share_consume(java: JavaClients, target: Any, topic: str, group: str, mode: str = "explicit") -> dict[str, Any]:
    run = java.run(target, "ShareConsume", topic, group, COUNT, mode, timeout=300).check()
    lines = run.lines()
    assert len(lines) == 1, run.describe()
    return dict(lines[0])


def assert_share_semantics(outcome: dict[str, Any]) -> None:
    assert outcome["errors"] == []
    assert outcome["accepted"] == COUNT - 1  # all but the rejected one, none accepted twice
    deliveries = outcome["deliveries"]
    assert set(deliveries) == {f"v{i}" for i in range(COUNT)}
    assert deliveries.pop("v5") == [1, 2]  # released, then redelivered with a higher delivery count
    assert deliveries.pop("v7") == [1]  # rejected: never again
    assert all(counts == [1] for counts in deliveries.values()), json.dumps(deliveries)


def assert_implicit_semantics(outcome: dict[str, Any]) -> None:
    assert outcome["errors"] == []
    assert outcome["accepted"] == COUNT
    assert outcome["deliveries"] == {f"v{i}": [1] for i in range(COUNT)}


def assert_crash_semantics(outcome: dict[str, Any]) -> None:
    assert outcome["errors"] == []
    assert outcome["accepted"] == COUNT and outcome["held"]
    held = set(outcome["held"])
    assert {v: d for v, d in outcome["deliveries"].items() if v in held} == {v: [1, 2] for v in held}
    # the hung consumer's client may have fetched more in the background than its one poll returned: those come
    # back after the lock too, so a record outside `held` is delivered once, or twice with delivery count 2
    assert all(d in ([1], [1, 2]) for v, d in outcome["deliveries"].items() if v not in held)


MODES = {"explicit": assert_share_semantics, "implicit": assert_implicit_semantics, "crash": assert_crash_semantics}


@pytest.mark.parametrize("mode", ["implicit", "crash"])
def test_share_consumers_in_implicit_mode_and_with_a_hung_consumer(java, broker, mode):
    MODES[mode](share_consume(java, broker, unique_topic("share"), unique_topic("share-group"), mode))


def test_three_share_consumers_share_one_partition(java, broker):
    outcome = share_consume(java, broker, unique_topic("share"), unique_topic("share-group"))
    assert_share_semantics(outcome)
    assert outcome["consumers_with_records"] >= 2  # the partition is shared, not owned by one consumer


@pytest.mark.reference
@pytest.mark.parametrize("mode", sorted(MODES))
def test_share_consumers_on_kafka(java, kafka_reference, mode):
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    topic, group = unique_topic("share"), unique_topic("share-group")
    try:
        outcome = share_consume(java, kafka_reference, topic, group, mode)
    finally:  # leave the shared reference Kafka as it was
        admin = AdminClient({"bootstrap.servers": kafka_reference.bootstrap_servers})
        for future in admin.delete_topics([topic]).values():
            future.exception()
        for future in admin.delete_consumer_groups([group]).values():
            future.exception()
        resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=[
            ConfigEntry("share.auto.offset.reset", None, incremental_operation=AlterConfigOpType.DELETE)])
        for future in admin.incremental_alter_configs([resource]).values():
            future.exception()
    MODES[mode](outcome)
