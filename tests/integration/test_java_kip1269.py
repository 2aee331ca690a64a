"""KIP-1269 (`producer.state.batches.to.retain`) through the Apache Kafka Java client (kafka-clients 4.3.1;
the legacy `Admin.alterConfigs`, gone from 4.x, through 3.9.1).

The topic config `producer.state.batches.to.retain` (INT, minimum 5) falls back to the dynamic broker
config `log.producer.state.batches.to.retain` (default 5). The scenarios run tests/clients/java/
Kip1269Scenario.java, which prints one JSON line per command (see its class comment).
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import unique_topic
from tests.integration.clients import JAVA_OLD, JavaClients, ok

pytestmark = pytest.mark.java

CONFIG = "producer.state.batches.to.retain"
BROKER_CONFIG = "log.producer.state.batches.to.retain"

#: Record i of the produce command goes to partition PATTERN[i % 10] (as Kip1269Scenario.PATTERN).
PATTERN = (0, 0, 0, 0, 1, 1, 1, 2, 2, 3)


@pytest.fixture(scope="module")
def java_old(tmp_path_factory: pytest.TempPathFactory) -> JavaClients:
    """The Java test programs compiled against kafka-clients 3.9.1, the last with Admin.alterConfigs."""
    return JavaClients(Path(tmp_path_factory.mktemp("java-classes-3.9")), version=JAVA_OLD)


def scenario(java: JavaClients, broker: Any, *commands: str) -> list[dict[str, Any]]:
    """Runs Kip1269Scenario with space-separated commands; returns one result per command."""
    return java.scenario(broker, "Kip1269Scenario", commands, timeout=90)


def refused(result: dict[str, Any], value: str, name: str = CONFIG, minimum: int | None = 5,
            error: str = "InvalidConfigurationException") -> None:
    """Asserts a command failed with `error` naming the config, the value and the minimum.

    A topic value is refused with InvalidConfigurationException (the controller's LogConfig.validate); a broker
    value with InvalidRequestException, as Kafka's ConfigAdminManager wraps DynamicBrokerConfig's refusals.
    """
    assert not result["ok"], f"{result['cmd']!r} should have been refused: {result}"
    assert result["error"] == error, result
    message = result["message"]
    assert name in message, message
    assert re.search(rf"(?<![\w.]){re.escape(value)}(?![\w.])", message), f"value {value!r} not in {message!r}"
    if minimum is not None:
        assert re.search(rf"(?<![\w.]){minimum}(?![\w.])", message), f"minimum {minimum} not in {message!r}"


def synonym(name: str, value: str, source: str) -> dict[str, str]:
    return {"name": name, "value": value, "source": source}


def strip_broker_default(synonyms: list[dict[str, str]]) -> list[dict[str, str]]:
    """The synonyms without the trailing DEFAULT_CONFIG entry of the broker config.

    Kafka ends a topic config's synonyms with the broker default (`log.producer.state.batches.to.retain`=5,
    DEFAULT_CONFIG); test_topic_synonyms_end_with_the_broker_default checks that entry separately.
    """
    if synonyms and synonyms[-1] == synonym(BROKER_CONFIG, "5", "DEFAULT_CONFIG"):
        return synonyms[:-1]
    return synonyms


def assert_config(result: dict[str, Any], value: str, source: str, synonyms: list[dict[str, str]]) -> None:
    """A describeConfigs result has this value, source and (apart from the broker default) these synonyms."""
    ok(result)
    assert result["present"], f"{result['cmd']}: config missing"
    assert (result["value"], result["source"]) == (value, source), result
    assert result["default"] == (source == "DEFAULT_CONFIG"), result
    assert (result["read_only"], result["sensitive"], result["type"]) == (False, False, "INT"), result
    assert strip_broker_default(result["synonyms"]) == synonyms, result


def test_topic_override_set_and_delete(java: JavaClients, broker: Any) -> None:
    """createTopics with the config, incrementalAlterConfigs SET and DELETE; no static value."""
    topic, plain = unique_topic("k1269-topic"), unique_topic("k1269-plain")
    results = scenario(
        java, broker,
        f"create {topic} 1 {CONFIG}=20", f"config topic {topic} {CONFIG}",
        f"set topic {topic} {CONFIG} 30", f"config topic {topic} {CONFIG}",
        f"delete topic {topic} {CONFIG}", f"config topic {topic} {CONFIG}",
        f"create {plain} 1", f"config topic {plain} {CONFIG}",
        f"config broker 0 {BROKER_CONFIG}",
    )
    create, created, _, after_set, _, after_delete, _, plain_desc, broker_desc = results
    assert ok(create)["partitions"] == 1
    assert_config(created, "20", "DYNAMIC_TOPIC_CONFIG", [synonym(CONFIG, "20", "DYNAMIC_TOPIC_CONFIG")])
    ok(results[2])
    assert_config(after_set, "30", "DYNAMIC_TOPIC_CONFIG", [synonym(CONFIG, "30", "DYNAMIC_TOPIC_CONFIG")])
    ok(results[4])
    assert_config(after_delete, "5", "DEFAULT_CONFIG", [])
    ok(results[6])
    assert_config(plain_desc, "5", "DEFAULT_CONFIG", [])
    ok(broker_desc)
    assert (broker_desc["value"], broker_desc["source"], broker_desc["read_only"]) == ("5", "DEFAULT_CONFIG", False)
    assert broker_desc["synonyms"] == [synonym(BROKER_CONFIG, "5", "DEFAULT_CONFIG")]


def test_legacy_alter_configs_from_a_3_9_client(java_old: JavaClients, broker: Any) -> None:
    """The legacy AlterConfigs request, which a 3.9 client still sends (Admin.alterConfigs is gone from 4.x):
    a topic value is set; values below 5 are refused, on a topic and on the broker default, changing nothing."""
    topic = unique_topic("k1269-legacy")
    results = scenario(
        java_old, broker,
        f"create {topic} 1 {CONFIG}=20", f"legacy topic {topic} {CONFIG}=2", f"config topic {topic} {CONFIG}",
        f"legacy topic {topic} {CONFIG}=25", f"config topic {topic} {CONFIG}",
        f"legacy broker - {BROKER_CONFIG}=2", f"config broker 0 {BROKER_CONFIG}",
    )
    create, legacy2, after_legacy2, legacy25, after_legacy25, broker_legacy2, broker_desc = results
    ok(create)
    refused(legacy2, "2")
    assert_config(after_legacy2, "20", "DYNAMIC_TOPIC_CONFIG", [synonym(CONFIG, "20", "DYNAMIC_TOPIC_CONFIG")])
    ok(legacy25)
    assert_config(after_legacy25, "25", "DYNAMIC_TOPIC_CONFIG", [synonym(CONFIG, "25", "DYNAMIC_TOPIC_CONFIG")])
    refused(broker_legacy2, "2", name=BROKER_CONFIG, error="InvalidRequestException")
    assert (ok(broker_desc)["value"], broker_desc["source"]) == ("5", "DEFAULT_CONFIG"), broker_desc


def test_topic_override_with_static_broker_value(java: JavaClients, broker_factory: Any) -> None:
    """With `--set log.producer.state.batches.to.retain=8`, the topic synonyms and the DELETE fallback show it."""
    broker = broker_factory(f"{BROKER_CONFIG}=8")
    topic, plain = unique_topic("k1269-static"), unique_topic("k1269-static-plain")
    results = scenario(
        java, broker,
        f"create {topic} 2 {CONFIG}=20", f"config topic {topic} {CONFIG}",
        f"set topic {topic} {CONFIG} 30", f"config topic {topic} {CONFIG}",
        f"delete topic {topic} {CONFIG}", f"config topic {topic} {CONFIG}",
        f"create {plain} 1", f"config topic {plain} {CONFIG}",
        f"config broker 0 {BROKER_CONFIG}",
    )
    create, created, set_, after_set, delete, after_delete, create_plain, plain_desc, broker_desc = results
    static = synonym(BROKER_CONFIG, "8", "STATIC_BROKER_CONFIG")
    assert ok(create)["partitions"] == 2
    assert_config(created, "20", "DYNAMIC_TOPIC_CONFIG", [synonym(CONFIG, "20", "DYNAMIC_TOPIC_CONFIG"), static])
    ok(set_)
    assert_config(after_set, "30", "DYNAMIC_TOPIC_CONFIG", [synonym(CONFIG, "30", "DYNAMIC_TOPIC_CONFIG"), static])
    ok(delete)
    assert_config(after_delete, "8", "STATIC_BROKER_CONFIG", [static])
    ok(create_plain)
    assert_config(plain_desc, "8", "STATIC_BROKER_CONFIG", [static])
    ok(broker_desc)
    assert (broker_desc["value"], broker_desc["source"], broker_desc["read_only"]) == (
        "8", "STATIC_BROKER_CONFIG", False)
    assert broker_desc["synonyms"] == [static, synonym(BROKER_CONFIG, "5", "DEFAULT_CONFIG")]


def test_refused_values(java: JavaClients, broker: Any) -> None:
    """Values below 5 or not an integer: InvalidConfigurationException; nothing is created or changed."""
    bad4, bad_abc, bad_validate = (unique_topic(f"k1269-bad{i}") for i in range(3))
    topic = unique_topic("k1269-keep")
    results = scenario(
        java, broker,
        f"create {bad4} 1 {CONFIG}=4", f"exists {bad4}",
        f"create {bad_abc} 1 {CONFIG}=abc", f"exists {bad_abc}",
        f"validate-create {bad_validate} 1 {CONFIG}=4",
        f"create {topic} 1 {CONFIG}=20",
        f"set topic {topic} {CONFIG} 3", f"config topic {topic} {CONFIG}",
        f"set topic {topic} {CONFIG} abc", f"set topic {topic} {CONFIG} 4", f"config topic {topic} {CONFIG}",
        f"set topic {topic} {CONFIG} 5", f"config topic {topic} {CONFIG}",
        f"exists {bad_validate}",
    )
    (create4, exists4, create_abc, exists_abc, validate4, create, set3, after_set3,
     set_abc, set4, after_more, set5, after_set5, exists_validate) = results
    refused(create4, "4")
    assert ok(exists4)["exists"] is False
    refused(create_abc, "abc", minimum=None)
    assert ok(exists_abc)["exists"] is False
    refused(validate4, "4")
    assert ok(exists_validate)["exists"] is False
    ok(create)
    kept = [synonym(CONFIG, "20", "DYNAMIC_TOPIC_CONFIG")]
    refused(set3, "3")
    assert_config(after_set3, "20", "DYNAMIC_TOPIC_CONFIG", kept)
    refused(set_abc, "abc", minimum=None)
    refused(set4, "4")
    assert_config(after_more, "20", "DYNAMIC_TOPIC_CONFIG", kept)
    ok(set5)  # the minimum itself is accepted
    assert_config(after_set5, "5", "DYNAMIC_TOPIC_CONFIG", [synonym(CONFIG, "5", "DYNAMIC_TOPIC_CONFIG")])


def test_broker_resource_dynamic_values(java: JavaClients, broker_factory: Any) -> None:
    """log.producer.state.batches.to.retain set on BROKER "" and "0": topics without an override follow it."""
    broker = broker_factory()
    before, pinned, after = (unique_topic(f"k1269-{n}") for n in ("before", "pinned", "after"))
    results = scenario(
        java, broker,
        f"create {before} 1", f"create {pinned} 1 {CONFIG}=20",
        f"set broker - {BROKER_CONFIG} 12",
        f"create {after} 1", f"config topic {after} {CONFIG}", f"config topic {before} {CONFIG}",
        f"config topic {pinned} {CONFIG}", f"config broker 0 {BROKER_CONFIG}",
        f"set broker 0 {BROKER_CONFIG} 15", f"config topic {after} {CONFIG}", f"config broker 0 {BROKER_CONFIG}",
        f"delete broker 0 {BROKER_CONFIG}", f"config topic {after} {CONFIG}",
        f"set broker - {BROKER_CONFIG} 4", f"set broker 0 {BROKER_CONFIG} abc",
        f"config topic {after} {CONFIG}",
        f"delete broker - {BROKER_CONFIG}", f"config topic {after} {CONFIG}", f"config topic {pinned} {CONFIG}",
    )
    (create_before, create_pinned, set_default, create_after, after_desc, before_desc, pinned_desc, broker_desc,
     set_node, after_node, broker_node, delete_node, after_node_deleted, set4, set_abc,
     after_refused, delete_default, after_default_deleted, pinned_final) = results
    for r in (create_before, create_pinned, set_default, create_after, set_node, delete_node, delete_default):
        ok(r)
    default12 = synonym(BROKER_CONFIG, "12", "DYNAMIC_DEFAULT_BROKER_CONFIG")
    node15 = synonym(BROKER_CONFIG, "15", "DYNAMIC_BROKER_CONFIG")
    assert_config(after_desc, "12", "DYNAMIC_DEFAULT_BROKER_CONFIG", [default12])
    assert_config(before_desc, "12", "DYNAMIC_DEFAULT_BROKER_CONFIG", [default12])
    assert_config(pinned_desc, "20", "DYNAMIC_TOPIC_CONFIG", [synonym(CONFIG, "20", "DYNAMIC_TOPIC_CONFIG"), default12])
    ok(broker_desc)
    assert (broker_desc["value"], broker_desc["source"]) == ("12", "DYNAMIC_DEFAULT_BROKER_CONFIG"), broker_desc
    assert broker_desc["synonyms"] == [default12, synonym(BROKER_CONFIG, "5", "DEFAULT_CONFIG")]

    assert_config(after_node, "15", "DYNAMIC_BROKER_CONFIG", [node15, default12])
    ok(broker_node)
    assert (broker_node["value"], broker_node["source"]) == ("15", "DYNAMIC_BROKER_CONFIG"), broker_node
    assert broker_node["synonyms"] == [node15, default12, synonym(BROKER_CONFIG, "5", "DEFAULT_CONFIG")]
    assert_config(after_node_deleted, "12", "DYNAMIC_DEFAULT_BROKER_CONFIG", [default12])

    refused(set4, "4", name=BROKER_CONFIG, error="InvalidRequestException")
    refused(set_abc, "abc", name=BROKER_CONFIG, minimum=None, error="InvalidRequestException")
    assert_config(after_refused, "12", "DYNAMIC_DEFAULT_BROKER_CONFIG", [default12])

    assert_config(after_default_deleted, "5", "DEFAULT_CONFIG", [])
    assert_config(pinned_final, "20", "DYNAMIC_TOPIC_CONFIG", [synonym(CONFIG, "20", "DYNAMIC_TOPIC_CONFIG")])


def test_idempotent_producer_with_window_20(java: JavaClients, broker: Any) -> None:
    """40,000 records from one idempotent producer (5 in flight, acks=all) to 4 partitions with window 20.

    A group-less consumer reads every record exactly once, in order; describeProducers shows the one
    producer on each partition with the last sequence it sent there.
    """
    topic, empty = unique_topic("k1269-idem"), unique_topic("k1269-empty")
    count = 40_000
    per_partition = {str(p): sum(1 for i in range(count) if PATTERN[i % len(PATTERN)] == p) for p in range(4)}
    started_ms = int(time.time() * 1000)
    results = scenario(
        java, broker,
        f"create {topic} 4 {CONFIG}=20", f"config topic {topic} {CONFIG}", f"create {empty} 2",
        f"produce {topic} {count} batch.size=1024 linger.ms=2",
        f"consume {topic} 4 {count}",
        f"producers {topic} 4", f"producers {empty} 2",
    )
    finished_ms = int(time.time() * 1000)
    create, described, create_empty, produced, consumed, producers, empty_producers = map(ok, results)
    assert create["partitions"] == 4 and create_empty["partitions"] == 2
    assert (described["value"], described["source"]) == ("20", "DYNAMIC_TOPIC_CONFIG")

    assert (produced["sent"], produced["acked"], produced["failed"]) == (count, count, 0), produced
    assert produced["offset_mismatches"] == 0 and produced["problems"] == [], produced
    assert produced["per_partition"] == per_partition
    metrics = produced["metrics"]
    assert metrics["record-send-total"] == count, metrics
    assert (metrics["record-error-total"], metrics["record-retry-total"]) == (0, 0), metrics
    assert metrics["records-per-request-avg"] < count / 50, f"expected many produce requests: {metrics}"
    producer_id, epoch = produced["producer_id"], produced["producer_epoch"]
    assert isinstance(producer_id, int) and producer_id >= 0, produced
    assert epoch == 0, produced

    assert not consumed["timed_out"], consumed
    assert (consumed["total"], consumed["bad"], consumed["problems"]) == (count, 0, []), consumed
    assert consumed["next_offsets"] == per_partition, consumed
    assert consumed["end_offsets"] == per_partition, consumed

    states = producers["partitions"]
    assert sorted(states) == ["0", "1", "2", "3"]
    for partition, sent in per_partition.items():
        active = states[partition]
        assert len(active) == 1, f"partition {partition}: {active}"
        state = active[0]
        assert (state["producer_id"], state["producer_epoch"]) == (producer_id, 0), state
        assert state["last_sequence"] == sent - 1, f"partition {partition}: {state}"
        assert started_ms - 5000 <= state["last_timestamp"] <= finished_ms + 5000, state
        assert state["txn_start_offset"] is None, state
        assert state["coordinator_epoch"] is None, state
    assert empty_producers["partitions"] == {"0": [], "1": []}


def test_topic_synonyms_end_with_the_broker_default(java: JavaClients, broker: Any) -> None:
    """As Kafka: a topic config's synonyms end with the broker config's DEFAULT_CONFIG entry.

    Kafka's ConfigHelper.configSynonyms adds `staticDefaultConfigs` (the broker defaults) with source
    DEFAULT_CONFIG after the dynamic and static layers, also for TOPIC resources.
    """
    topic, plain = unique_topic("k1269-syn"), unique_topic("k1269-syn-plain")
    _, with_override, _, without = map(ok, scenario(
        java, broker,
        f"create {topic} 1 {CONFIG}=20", f"config topic {topic} {CONFIG}",
        f"create {plain} 1", f"config topic {plain} {CONFIG}",
    ))
    default5 = synonym(BROKER_CONFIG, "5", "DEFAULT_CONFIG")
    assert with_override["synonyms"] == [synonym(CONFIG, "20", "DYNAMIC_TOPIC_CONFIG"), default5]
    assert (without["value"], without["source"]) == ("5", "DEFAULT_CONFIG")
    assert without["synonyms"] == [default5]


def test_cluster_default_resource_lists_only_its_own_layer(java: JavaClients, broker_factory: Any) -> None:
    """As Kafka: describeConfigs on BROKER "" shows only the cluster-default layer as synonyms.

    Kafka's createBrokerConfigEntry(perBrokerConfig = false) keeps only DYNAMIC_DEFAULT_BROKER_CONFIG synonyms.
    """
    broker = broker_factory(f"{BROKER_CONFIG}=8")
    _, described = map(ok, scenario(
        java, broker, f"set broker - {BROKER_CONFIG} 12", f"config broker - {BROKER_CONFIG}",
    ))
    assert (described["value"], described["source"]) == ("12", "DYNAMIC_DEFAULT_BROKER_CONFIG")
    assert described["synonyms"] == [synonym(BROKER_CONFIG, "12", "DYNAMIC_DEFAULT_BROKER_CONFIG")]
