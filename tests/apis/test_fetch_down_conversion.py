"""Fetch v0-3 on a 3.9 profile honours `message.downconversion.enable`, a config of Kafka 3.9 that 4.0 removed.

As Kafka 3.9.1 answers (checked against it over the wire): with the topic's config, or the broker default
`log.message.downconversion.enable`, false, a consumer's Fetch v0-3 of the topic gets UNSUPPORTED_VERSION with no
offsets and null records; v4 and later, which need no down-conversion, read as usual.
"""

from __future__ import annotations

from typing import Any

import pytest

from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.config import SET
from minibroker.protocol import records
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import FetchRequest
from minibroker.server.broker import cluster_config
from tests.apis.authz import NOW, call

TOPIC = "down"


def _cluster(topic_configs: dict[str, str | None]) -> Cluster:
    cluster = Cluster(cluster_config({"node.id": "1"}, "3.9"), clock=ManualClock(NOW))
    cluster.nodes[0].release = "3.9"
    cluster.create_topic(TOPIC, 1, configs=topic_configs)
    log = cluster.topics[TOPIC].partitions[0].log
    data = bytearray(records.build_batch([(None, b"v")], timestamp=NOW))
    log.append(data, records.read_header(data))
    log.announce_append(len(data))
    return cluster


def _fetched(cluster: Cluster, version: int) -> Any:
    part = FetchRequest.FetchTopic.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)
    answer = call(cluster, FetchRequest(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                                        isolation_level=0, topics=[FetchRequest.FetchTopic(topic=TOPIC,
                                                                                           partitions=[part])]),
                  version, principal="User:ANONYMOUS")
    [topic] = answer.responses
    [partition] = topic.partitions
    return partition


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_fetch_v0_to_v3_of_a_topic_without_down_conversion_is_unsupported_version(version: int) -> None:
    partition = _fetched(_cluster({"message.downconversion.enable": "false"}), version)
    assert (partition.error_code, partition.high_watermark, partition.records) == \
        (ErrorCode.UNSUPPORTED_VERSION, -1, None)


def test_fetch_v4_needs_no_down_conversion() -> None:
    partition = _fetched(_cluster({"message.downconversion.enable": "false"}), 4)
    assert (partition.error_code, partition.high_watermark) == (ErrorCode.NONE, 1)


def test_the_broker_default_applies_to_topics_without_their_own() -> None:
    cluster = _cluster({})
    assert _fetched(cluster, 3).error_code == ErrorCode.NONE
    cluster.config.incremental_alter_dynamic(None, [("log.message.downconversion.enable", SET, "false")])
    assert _fetched(cluster, 3).error_code == ErrorCode.UNSUPPORTED_VERSION
