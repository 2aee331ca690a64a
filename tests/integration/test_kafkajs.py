"""KafkaJS 2.2.4 against a real broker process: idempotent producer and admin client.

KafkaJS's consumer needs consumer groups, so records are read back with kafka-python
(no group: assign + seek_to_beginning). The programs live in tests/clients/node.
"""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from kafka import KafkaConsumer, TopicPartition

from tests.helpers import unique_topic
from tests.integration.clients import ClientRun, run_client
from tests.integration.clients import node_admin as admin
from tests.integration.clients import node_ok as ok

pytestmark = pytest.mark.kafkajs


def key(i: int) -> str:
    """Key of record number i (as in common.js)."""
    return f"key-{i}"


def value(i: int) -> str:
    """Value of record number i (as in common.js)."""
    return f"value-{i}-" + "payload" * 10


def run_node(node: Path, broker: Any, script: str, *args: object) -> ClientRun:
    """Runs tests/clients/node/SCRIPT with the broker's bootstrap address followed by `args`."""
    return run_client(["node", script, broker.bootstrap_servers, *(str(a) for a in args)], cwd=node, broker=broker)


def produce(node: Path, broker: Any, topic: str, count: int, codec: str) -> list[dict[str, Any]]:
    """Runs produce.js; returns the per-partition results of every send."""
    run = run_node(node, broker, "produce.js", topic, count, codec).check()
    lines = run.lines()
    assert lines[-1] == {"done": True, "sent": count, "acked": count, "failed": 0}, run.describe()
    results = lines[:-1]
    assert all(r["error_code"] == 0 for r in results), run.describe()
    return results


def read_topic(broker: Any, topic: str, expect: int, timeout: float = 60.0) -> list[Any]:
    """All records of `topic`, read with kafka-python without a consumer group."""
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap_servers, group_id=None, enable_auto_commit=False,
                             consumer_timeout_ms=1000, request_timeout_ms=30000)
    try:
        partitions = consumer.partitions_for_topic(topic)
        assert partitions, f"no partitions for {topic}"
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        records: list[Any] = []
        deadline = time.monotonic() + timeout
        while len(records) < expect and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                records.extend(batch)
        return records
    finally:
        consumer.close()


@pytest.mark.parametrize("codec", ["none", "gzip"])
def test_idempotent_producer(node: Path, broker: Any, codec: str) -> None:
    """An idempotent acks=-1 producer's records are all stored once, in order, with their contents."""
    topic = unique_topic(f"kafkajs-{codec}")
    assert ok(admin(node, broker, ("createTopics", {"topics": [{"topic": topic, "numPartitions": 2}]}))[0])
    count = 1000
    results = produce(node, broker, topic, count, codec)

    bases: dict[int, list[int]] = defaultdict(list)
    for r in results:
        bases[r["partition"]].append(r["base_offset"])
    for partition, base in bases.items():
        assert base[0] == 0 and base == sorted(set(base)), f"partition {partition}: base offsets {base}"
    offsets = ok(admin(node, broker, ("fetchTopicOffsets", topic))[0])
    assert sum(int(o["high"]) for o in offsets) == count
    assert all(int(o["low"]) == 0 for o in offsets)

    records = read_topic(broker, topic, count)
    assert len(records) == count
    seen = set()
    per_partition: dict[int, list[int]] = defaultdict(list)
    for rec in records:
        i = int(dict(rec.headers)["i"].decode())
        assert (rec.key, rec.value) == (key(i).encode(), value(i).encode())
        seen.add(i)
        per_partition[rec.partition].append(i)
        assert rec.offset == len(per_partition[rec.partition]) - 1
    assert seen == set(range(count))
    for partition, order in per_partition.items():
        assert order == sorted(order), f"partition {partition}: records out of send order"


def test_auto_create_on_produce(node: Path, broker: Any) -> None:
    """Producing to an unknown topic creates it."""
    topic = unique_topic("kafkajs-auto")
    produce(node, broker, topic, 10, "none")
    listed, offsets = admin(node, broker, ("listTopics",), ("fetchTopicOffsets", topic))
    assert topic in ok(listed)
    assert sum(int(o["high"]) for o in ok(offsets)) == 10


def test_admin_operations(node: Path, broker: Any) -> None:
    """createTopics, fetchTopicMetadata, fetchTopicOffsets, createPartitions and deleteTopics."""
    topic = unique_topic("kafkajs-admin")
    new_topic = {"topic": topic, "numPartitions": 2,
                 "configEntries": [{"name": "retention.ms", "value": "3600000"}]}
    results = admin(
        node, broker,
        ("createTopics", {"topics": [new_topic]}),
        ("createTopics", {"topics": [new_topic]}),
        ("listTopics",),
        ("fetchTopicMetadata", {"topics": [topic]}),
        ("fetchTopicOffsets", topic),
        ("createPartitions", {"topicPartitions": [{"topic": topic, "count": 4}]}),
        ("fetchTopicMetadata", {"topics": [topic]}),
        ("fetchTopicOffsets", topic),
        ("deleteTopics", {"topics": [topic]}),
        ("listTopics",),
    )
    created, again, listed, meta2, offsets2, grown, meta4, offsets4, deleted, listed_after = results
    assert ok(created) is True
    assert ok(again) is False, "createTopics on an existing topic resolves to false"
    assert topic in ok(listed)
    (meta,) = ok(meta2)["topics"]
    assert meta["name"] == topic
    assert sorted(p["partitionId"] for p in meta["partitions"]) == [0, 1]
    assert all(p["partitionErrorCode"] == 0 for p in meta["partitions"])
    empty = sorted((o["partition"], o["low"], o["high"]) for o in ok(offsets2))
    assert empty == [(0, "0", "0"), (1, "0", "0")]
    ok(grown)
    (meta,) = ok(meta4)["topics"]
    assert sorted(p["partitionId"] for p in meta["partitions"]) == [0, 1, 2, 3]
    assert sorted(o["partition"] for o in ok(offsets4)) == [0, 1, 2, 3]
    ok(deleted)
    assert topic not in ok(listed_after)


def test_admin_create_invalid_topic(node: Path, broker: Any) -> None:
    """createTopics with an illegal name is refused with INVALID_TOPIC_EXCEPTION."""
    (created,) = admin(node, broker, ("createTopics", {"topics": [{"topic": "bad topic!"}]}))
    assert not created["ok"]
    types = [e.get("type") for e in created.get("errors", [])] or [created.get("type")]
    assert types == ["INVALID_TOPIC_EXCEPTION"], created
