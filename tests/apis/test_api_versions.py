"""ApiVersions as Apache Kafka answers it: features from v3, the KIP-848 APIs, the release profiles.

What Kafka 4.3.1 answered on the wire (tests/differential/goldens/api_versions/4.3.json): at v3 only
metadata.version 7-30 among the supported features (v3 leaves out ranges that start at 0), at v4 all seven;
finalized metadata.version 30 and level 1 of group, share, streams, transaction (formatted so, until
transactions V2) and eligible.leader.replicas; a non-negative epoch. Started with
`group.coordinator.rebalance.protocols=classic` it still advertised ConsumerGroupHeartbeat and
ConsumerGroupDescribe (0-1), answering both UNSUPPORTED_VERSION without a message.
"""

from __future__ import annotations

from typing import Any

import pytest

from minibroker.apis import advertised_ranges
from minibroker.apis.releases import LATEST, RELEASES
from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.cluster_model import Node
from minibroker.core.config import BrokerConfig
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    ApiVersionsRequest,
    ConsumerGroupDescribeRequest,
    ConsumerGroupHeartbeatRequest,
)

from .authz import call

REQUEST = ApiVersionsRequest(client_software_name="minibroker-test", client_software_version="1.0")
KAFKA_4_3_SUPPORTED = {
    "eligible.leader.replicas.version": (0, 1), "group.version": (0, 1), "kraft.version": (0, 1),
    "metadata.version": (7, 30), "share.version": (0, 1), "streams.version": (0, 1), "transaction.version": (0, 2),
}
KAFKA_4_3_FINALIZED = {
    "eligible.leader.replicas.version": 1, "group.version": 1, "metadata.version": 30, "share.version": 1,
    "streams.version": 1, "transaction.version": 2,
}


def cluster(*releases: str, **configs: Any) -> Cluster:
    nodes = [Node(index + 1, "127.0.0.1", 9092 + index, release=name) for index, name in enumerate(releases)]
    return Cluster(BrokerConfig({"node.id": 1, **configs}), clock=ManualClock(1_700_000_000_000),
                   nodes=nodes or None)


def supported(answer: Any) -> dict[str, tuple[int, int]]:
    return {entry.name: (entry.min_version, entry.max_version) for entry in answer.supported_features}


def finalized(answer: Any) -> dict[str, int]:
    assert all(entry.min_version_level == entry.max_version_level for entry in answer.finalized_features)
    return {entry.name: entry.max_version_level for entry in answer.finalized_features}


def test_v3_lists_only_the_supported_features_whose_range_starts_above_zero() -> None:
    answer = call(cluster(LATEST), REQUEST, 3)
    assert answer.error_code == 0
    assert supported(answer) == {"metadata.version": (7, 30)}
    assert finalized(answer) == KAFKA_4_3_FINALIZED
    assert answer.finalized_features_epoch >= 0


def test_v4_lists_every_supported_feature_and_the_finalized_levels() -> None:
    answer = call(cluster(LATEST), REQUEST, 4)
    assert supported(answer) == KAFKA_4_3_SUPPORTED
    assert finalized(answer) == KAFKA_4_3_FINALIZED
    assert answer.finalized_features_epoch >= 0
    assert answer.zk_migration_ready is False


def test_the_epoch_stays_while_the_levels_cannot_change() -> None:
    brokers = cluster(LATEST, LATEST)
    epochs = {call(brokers, REQUEST, 4, to=node).finalized_features_epoch for node in brokers.nodes for _ in (1, 2)}
    assert len(epochs) == 1


@pytest.mark.parametrize("version", [0, 1, 2])
def test_versions_before_3_carry_no_features(version: int) -> None:
    answer = call(cluster(LATEST), ApiVersionsRequest(), version)
    assert answer.error_code == 0 and answer.api_keys


def test_a_mixed_cluster_finalizes_only_what_every_node_supports() -> None:
    brokers = cluster(LATEST, "4.0")
    answers = [call(brokers, REQUEST, 4, to=node) for node in brokers.nodes]
    assert finalized(answers[0]) == finalized(answers[1]) == dict(RELEASES["4.0"].features.finalized)
    # each node still says what its own software supports
    assert supported(answers[0]) == KAFKA_4_3_SUPPORTED
    assert supported(answers[1]) == {name: (low, high) for name, low, high in RELEASES["4.0"].features.supported}


def test_a_2_8_node_advertises_no_features_but_an_epoch_as_a_zookeeper_broker_of_2_8_2() -> None:
    # a 2.7+ ZooKeeper cluster has feature versioning on (its /feature znode) with nothing finalized
    answer = call(cluster("2.8"), REQUEST, 3)
    assert (answer.supported_features, answer.finalized_features, answer.finalized_features_epoch) == ([], [], 0)


def test_kip848_apis_stay_advertised_with_the_consumer_protocol_off() -> None:
    classic = cluster(LATEST, **{"group.coordinator.rebalance.protocols": "classic"})
    keys = {entry.api_key: (entry.min_version, entry.max_version) for entry in call(classic, REQUEST, 4).api_keys}
    assert (keys[68], keys[69]) == ((0, 1), (0, 1))
    heartbeat = ConsumerGroupHeartbeatRequest(
        group_id="g", member_id="m-1", member_epoch=0, instance_id=None, rack_id=None, rebalance_timeout_ms=30_000,
        subscribed_topic_names=["t"], subscribed_topic_regex=None, server_assignor=None, topic_partitions=[])
    refused = call(classic, heartbeat, 1)
    assert (refused.error_code, refused.error_message) == (ErrorCode.UNSUPPORTED_VERSION, None)
    described = call(classic, ConsumerGroupDescribeRequest(group_ids=["g"], include_authorized_operations=False), 1)
    assert [(g.error_code, g.error_message) for g in described.groups] == [(ErrorCode.UNSUPPORTED_VERSION, None)]


def test_latest_speaks_as_kafka_4_3_with_kip1269() -> None:
    latest = dict((key, (low, high)) for key, low, high in advertised_ranges(LATEST))
    as_4_3 = dict((key, (low, high)) for key, low, high in advertised_ranges("4.3"))
    assert latest.pop(0) == (0, 14) and as_4_3.pop(0) == (0, 13)
    assert latest == as_4_3
    assert RELEASES[LATEST].features == RELEASES["4.3"].features


def test_delete_groups_is_advertised_up_to_what_kafka_4_3_has() -> None:
    ranges = {key: (low, high) for key, low, high in advertised_ranges(LATEST)}
    assert ranges[42] == (0, 2)
