"""kcat (librdkafka) against a real broker process: produce with every codec, consume, list metadata."""

from __future__ import annotations

from typing import Any

import pytest

from tests.helpers import unique_topic
from tests.integration.clients import ClientRun, require_binary, run_client

pytestmark = pytest.mark.kcat

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
KCAT_TIMEOUT = 60.0


@pytest.fixture(scope="module")
def kcat() -> str:
    """The kcat executable."""
    return require_binary("kcat")


def lines_for(count: int) -> list[str]:
    """`count` keyed input lines, "key-i:value-i-payload...", for kcat -K:."""
    return [f"key-{i}:value-{i}-" + "payload" * 10 for i in range(count)]


def kcat_produce(kcat: str, broker: Any, topic: str, lines: list[str], *options: str) -> ClientRun:
    """kcat -P with keys (-K:); one message per input line."""
    run = run_client([kcat, "-P", "-b", broker.bootstrap_servers, "-t", topic, "-K", ":", *options],
                     input="".join(f"{line}\n" for line in lines), timeout=KCAT_TIMEOUT, broker=broker)
    return run.check()


def kcat_consume(kcat: str, broker: Any, topic: str) -> tuple[list[dict[str, Any]], ClientRun]:
    """kcat -C from the beginning to the end of every partition (no consumer group), as JSON messages."""
    run = run_client([kcat, "-C", "-b", broker.bootstrap_servers, "-t", topic, "-o", "beginning", "-e", "-q", "-J"],
                     timeout=KCAT_TIMEOUT, broker=broker).check()
    return run.lines(), run


def assert_read_back(messages: list[dict[str, Any]], lines: list[str], topic: str, run: ClientRun) -> None:
    """The messages are exactly the produced lines, in order, at offsets 0..n-1 of partition 0."""
    got = [f"{m['key']}:{m['payload']}" for m in messages]
    assert got == lines, run.describe(tail=2000)
    assert [m["offset"] for m in messages] == list(range(len(lines)))
    assert {(m["topic"], m["partition"]) for m in messages} == {(topic, 0)}


@pytest.mark.parametrize("codec", CODECS)
def test_produce_consume_codec(kcat: str, broker: Any, codec: str) -> None:
    """Lines produced with -z CODEC (auto-creating the topic) are consumed back exactly."""
    topic = unique_topic(f"kcat-{codec}")
    lines = lines_for(500)
    kcat_produce(kcat, broker, topic, lines, "-z", codec)
    messages, run = kcat_consume(kcat, broker, topic)
    assert_read_back(messages, lines, topic, run)


def test_idempotent_producer(kcat: str, broker: Any) -> None:
    """librdkafka's idempotent producer (InitProducerId, sequence numbers) round-trips."""
    topic = unique_topic("kcat-idem")
    lines = lines_for(2000)
    kcat_produce(kcat, broker, topic, lines, "-X", "enable.idempotence=true", "-X", "acks=all", "-z", "lz4")
    messages, run = kcat_consume(kcat, broker, topic)
    assert_read_back(messages, lines, topic, run)


def test_consume_appends_after_earlier_produce(kcat: str, broker: Any) -> None:
    """A second produce to the same topic continues at the next offset."""
    topic = unique_topic("kcat-append")
    first, second = lines_for(10), lines_for(25)[10:]
    kcat_produce(kcat, broker, topic, first)
    kcat_produce(kcat, broker, topic, second, "-z", "gzip")
    messages, run = kcat_consume(kcat, broker, topic)
    assert_read_back(messages, first + second, topic, run)


def test_metadata_lists_topic(kcat: str, broker: Any) -> None:
    """kcat -L -J lists the broker and an auto-created topic with its partition."""
    topic = unique_topic("kcat-meta")
    kcat_produce(kcat, broker, topic, lines_for(3))
    run = run_client([kcat, "-L", "-J", "-b", broker.bootstrap_servers], timeout=KCAT_TIMEOUT, broker=broker).check()
    (metadata,) = run.lines()
    brokers = metadata["brokers"]
    assert [b["name"] for b in brokers] == [broker.bootstrap_servers], metadata
    topics = {t["topic"]: t for t in metadata["topics"]}
    assert topic in topics, metadata
    entry = topics[topic]
    assert "error" not in entry, entry
    assert [p["partition"] for p in entry["partitions"]] == [0]
    assert entry["partitions"][0]["leader"] == brokers[0]["id"]

    run = run_client([kcat, "-L", "-J", "-b", broker.bootstrap_servers, "-t", topic], timeout=KCAT_TIMEOUT,
                     broker=broker).check()
    (single,) = run.lines()
    assert [t["topic"] for t in single["topics"]] == [topic]
