"""The Apache Kafka Java client (kafka-clients 3.9) against a real broker process.

The programs live in tests/clients/java and print JSON lines; see their class comments.
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

import pytest

from tests.helpers import unique_topic
from tests.integration.clients import ClientRun, JavaClients, ok

pytestmark = pytest.mark.java

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def key(i: int) -> str:
    """Key of record number i (as Records.key in Java)."""
    return f"key-{i}"


def value(i: int) -> str:
    """Value of record number i (as Records.value in Java)."""
    return f"value-{i}-" + "payload" * 10


def admin(java: JavaClients, broker: Any, *commands: str | list[str]) -> list[dict[str, Any]]:
    """Runs AdminScenario; returns one result per command (see AdminScenario.java)."""
    return java.scenario(broker, "AdminScenario", commands)


def produce(java: JavaClients, broker: Any, topic: str, count: int, **options: str) -> list[dict[str, Any]]:
    """Runs ProduceRecords; returns the per-record acknowledgements, in record order."""
    run = java.run(broker, "ProduceRecords", topic, count, *(f"{k}={v}" for k, v in options.items())).check()
    lines = run.lines()
    assert lines[-1] == {"done": True, "sent": count, "acked": count, "failed": 0}, run.describe()
    acks = sorted(lines[:-1], key=lambda a: a["i"])
    assert [a["i"] for a in acks] == list(range(count)), run.describe()
    return acks


def consume(
    java: JavaClients, broker: Any, topic: str, expect: int
) -> tuple[list[dict[str, Any]], dict[str, Any], ClientRun]:
    """Runs ConsumeRecords; returns the records, the closing summary and the run."""
    run = java.run(broker, "ConsumeRecords", topic, f"expect={expect}").check()
    lines = run.lines()
    summary = lines[-1]
    assert summary.get("done") and not summary["timed_out"], run.describe()
    return lines[:-1], summary, run


def assert_records_match(records: list[dict[str, Any]], acks: list[dict[str, Any]], run: ClientRun) -> None:
    """Every acknowledged record is read back once, at its offset, with its key, value and header."""
    assert len(records) == len(acks), run.describe()
    by_position = {(r["partition"], r["offset"]): r for r in records}
    for ack in acks:
        i = ack["i"]
        rec = by_position.get((ack["partition"], ack["offset"]))
        assert rec is not None, f"record {i} missing at {ack}\n{run.describe()}"
        assert (rec["key"], rec["value"], rec["headers"]) == (key(i), value(i), {"i": str(i)}), rec
    per_partition: dict[int, list[int]] = defaultdict(list)
    for rec in records:
        per_partition[rec["partition"]].append(rec["offset"])
    for partition, offsets in per_partition.items():
        assert offsets == list(range(len(offsets))), f"partition {partition} offsets out of order"


def test_idempotent_producer_round_trip(java: JavaClients, broker: Any) -> None:
    """An idempotent acks=all producer writes 5000 keyed records; a group-less consumer reads them all."""
    topic = unique_topic("java-idem")
    ok(admin(java, broker, f"create {topic} 3")[0])
    count = 5000
    acks = produce(java, broker, topic, count, **{"enable.idempotence": "true", "acks": "all"})
    for partition in range(3):
        offsets = [a["offset"] for a in acks if a["partition"] == partition]
        assert offsets == list(range(len(offsets))), f"partition {partition} acks not contiguous from 0"
    assert len({a["partition"] for a in acks}) == 3, "keys should spread over all three partitions"

    records, summary, run = consume(java, broker, topic, count)
    assert_records_match(records, acks, run)
    for partition in range(3):
        sent = [a["i"] for a in acks if a["partition"] == partition]
        read = [int(r["headers"]["i"]) for r in records if r["partition"] == partition]
        assert read == sent, f"partition {partition}: records not in send order"
    assert summary["beginning"] == {"0": 0, "1": 0, "2": 0}
    assert sum(summary["end"].values()) == count


@pytest.mark.parametrize("codec", CODECS)
def test_compression_codec_round_trip(java: JavaClients, broker: Any, codec: str) -> None:
    """Records produced with each compression codec are read back unchanged."""
    topic = unique_topic(f"java-{codec}")
    ok(admin(java, broker, f"create {topic} 1")[0])
    count = 1000
    acks = produce(java, broker, topic, count, **{"compression.type": codec, "batch.size": "16384"})
    records, _, run = consume(java, broker, topic, count)
    assert_records_match(records, acks, run)


def test_admin_create_list_describe(java: JavaClients, broker: Any) -> None:
    """createTopics with partitions and a config, then listTopics and describeTopics see the topic."""
    topic = unique_topic("java-admin")
    cluster, create, listed, described, again = admin(
        java, broker, "cluster", f"create {topic} 3 retention.ms=3600000", "list", f"describe {topic}",
        f"create {topic} 1")
    nodes = ok(cluster)["nodes"]
    assert [(n["host"], n["port"]) for n in nodes] == [(broker.host, broker.port)]
    assert ok(create)["partitions"] == 3
    assert create["replication_factor"] == 1
    assert topic in ok(listed)["topics"]
    desc = ok(described)
    assert desc["name"] == topic and not desc["internal"]
    assert [p["partition"] for p in desc["partitions"]] == [0, 1, 2]
    assert all(p["leader"] == nodes[0]["id"] for p in desc["partitions"])
    assert (again["ok"], again.get("error")) == (False, "TopicExistsException")


def test_admin_create_partitions(java: JavaClients, broker: Any) -> None:
    """createPartitions grows a topic; shrinking is refused."""
    topic = unique_topic("java-grow")
    create, grow, described, shrink = admin(
        java, broker, f"create {topic} 2", f"add-partitions {topic} 5", f"describe {topic}",
        f"add-partitions {topic} 3")
    ok(create)
    ok(grow)
    assert [p["partition"] for p in ok(described)["partitions"]] == [0, 1, 2, 3, 4]
    assert (shrink["ok"], shrink.get("error")) == (False, "InvalidPartitionsException")


def test_admin_list_offsets(java: JavaClients, broker: Any) -> None:
    """listOffsets: earliest, latest, forTimestamp and maxTimestamp."""
    topic = unique_topic("java-offsets")
    base = (int(time.time()) - 60) * 1000
    results = admin(
        java, broker, f"create {topic} 1", f"produce {topic} 0 10 {base}",
        f"offsets {topic} 0 earliest", f"offsets {topic} 0 latest", f"offsets {topic} 0 {base + 3500}",
        f"offsets {topic} 0 {base}", f"offsets {topic} 0 {base + 60_000}", f"offsets {topic} 0 max")
    create, produced, earliest, latest, at_3500, at_base, after_all, max_ts = map(ok, results)
    assert produced["offsets"] == list(range(10))
    assert earliest["offset"] == 0
    assert latest["offset"] == 10
    assert (at_3500["offset"], at_3500["timestamp"]) == (4, base + 4000)
    assert (at_base["offset"], at_base["timestamp"]) == (0, base)
    assert after_all["offset"] == -1, "no record at or after the timestamp: offset -1"
    assert (max_ts["offset"], max_ts["timestamp"]) == (9, base + 9000)


def test_admin_delete_records(java: JavaClients, broker: Any) -> None:
    """deleteRecords moves the log start: listOffsets earliest and a consumer both start there."""
    topic = unique_topic("java-delrec")
    base = (int(time.time()) - 60) * 1000
    results = admin(
        java, broker, f"create {topic} 1", f"produce {topic} 0 10 {base}", f"delete-records {topic} 0 4",
        f"offsets {topic} 0 earliest", f"offsets {topic} 0 latest", f"first-offset {topic} 0")
    _, _, deleted, earliest, latest, first = map(ok, results)
    assert deleted["low_watermark"] == 4
    assert earliest["offset"] == 4
    assert latest["offset"] == 10
    assert (first["offset"], first["key"], first["value"]) == (4, key(4), value(4))


def test_admin_describe_configs(java: JavaClients, broker: Any) -> None:
    """describeConfigs reports a topic override with source DYNAMIC_TOPIC_CONFIG, the rest not."""
    topic = unique_topic("java-configs")
    _, described = map(ok, admin(java, broker, f"create {topic} 1 retention.ms=3600000", f"configs {topic}"))
    configs = described["configs"]
    assert configs["retention.ms"]["value"] == "3600000"
    assert configs["retention.ms"]["source"] == "DYNAMIC_TOPIC_CONFIG"
    others = {name: c["source"] for name, c in configs.items() if name != "retention.ms"}
    assert others, "describeConfigs should list the topic's other configs too"
    assert "DYNAMIC_TOPIC_CONFIG" not in others.values(), others


def test_admin_delete_topics(java: JavaClients, broker: Any) -> None:
    """deleteTopics removes the topic from listTopics and describeTopics."""
    topic = unique_topic("java-delete")
    create, delete, listed, described, again = admin(
        java, broker, f"create {topic} 2", f"delete {topic}", "list", f"describe {topic}", f"delete {topic}")
    ok(create)
    ok(delete)
    assert topic not in ok(listed)["topics"]
    assert (described["ok"], described.get("error")) == (False, "UnknownTopicOrPartitionException")
    assert (again["ok"], again.get("error")) == (False, "UnknownTopicOrPartitionException")


@pytest.mark.parametrize("name", ["bad topic!", "x" * 250, "..", "a/b"])
def test_admin_create_invalid_topic_name(java: JavaClients, broker: Any, name: str) -> None:
    """createTopics with an illegal name fails with InvalidTopicException and creates nothing."""
    create, listed = admin(java, broker, ["create", name, "1"], "list")
    assert (create["ok"], create.get("error")) == (False, "InvalidTopicException"), create
    assert name not in ok(listed)["topics"]


def test_auto_create_on_produce(java: JavaClients, broker: Any) -> None:
    """Producing to an unknown topic creates it; the records can be read back."""
    topic = unique_topic("java-auto")
    acks = produce(java, broker, topic, 20)
    assert topic in ok(admin(java, broker, "list")[0])["topics"]
    records, summary, run = consume(java, broker, topic, 20)
    assert_records_match(records, acks, run)
    assert list(summary["end"]) == ["0"], "auto-created with num.partitions=1"


def test_no_auto_create_when_disabled(java: JavaClients, broker_factory: Any) -> None:
    """With auto.create.topics.enable=false, producing to an unknown topic fails and creates nothing."""
    strict = broker_factory("auto.create.topics.enable=false")
    topic = unique_topic("java-noauto")
    run = java.run(strict, "ProduceRecords", topic, 1, "max.block.ms=3000")
    assert run.returncode == 1, run.describe()
    assert run.lines()[0]["error"] == "TimeoutException", run.describe()
    listed = ok(admin(java, strict, "list")[0])
    assert topic not in listed["topics"]
