"""The Java 4.x KafkaShareConsumer against minibroker over TCP (KIP-932, issue 26), and the same run on Kafka.

tests/clients/java/v4/ShareConsume.java produces 30 records and consumes them with three share consumers of one
group on one partition. In explicit acknowledgement mode one record is RELEASEd at its first delivery, one
REJECTed, the others ACCEPTed: every record is accepted exactly once, the released one comes back with delivery
count 2, the rejected one never comes back. In implicit mode every record is delivered once. When a consumer hangs
holding records (it stops polling), they come back to the others after the acquisition lock (30 s by default)
with delivery count 2; so do records its client acquired in the background that no poll returned (seen only at
delivery count 2). Against the reference Kafka the outcomes are the same.
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
    deliveries = outcome["deliveries"]
    # what the hung consumer's poll returned comes back once its lock runs out, to another consumer, at count 2
    assert {v: d for v, d in deliveries.items() if v in held} == {v: [1, 2] for v in held}
    # Every other record is delivered once. The hung consumer's client may have acquired more than its poll
    # returned: a poll that found its buffer empty queues a ShareFetch the client's network thread may send only
    # after the answer with the held records arrived; what that one more ShareFetch acquired (at most
    # max.poll.records, one record per batch) no poll returned, and comes back after the lock at count 2 only.
    # A record delivered to a consumer that accepted it never comes back: [1, 2] outside `held` is a failure.
    others = {v: d for v, d in deliveries.items() if v not in held}
    assert all(d in ([1], [2]) for d in others.values()), json.dumps(others)
    assert sum(d == [2] for d in others.values()) <= outcome["max_poll_records"], json.dumps(others)


def test_crash_semantics_allow_only_what_the_hung_client_acquired():
    """The outcome Kafka 4.3.1 gave when the hung consumer's client sent one more ShareFetch (v4..v7 acquired, never
    returned by a poll) passes; a record redelivered after a healthy consumer got it, or more than one such
    ShareFetch's worth, fails."""
    held = ["v0", "v1", "v2", "v3"]
    deliveries = {f"v{i}": [1, 2] if i < 4 else [2] if i < 8 else [1] for i in range(COUNT)}
    outcome = {"errors": [], "accepted": COUNT, "held": held, "deliveries": deliveries, "max_poll_records": 4}
    assert_crash_semantics(outcome)
    for wrong in ({"v9": [1, 2]}, {"v8": [2]}):
        with pytest.raises(AssertionError):
            assert_crash_semantics({**outcome, "deliveries": {**deliveries, **wrong}})


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
