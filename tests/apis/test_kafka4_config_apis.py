"""AlterReplicaLogDirs, ListConfigResources and GROUP config resources on decoded requests, as Kafka 4.3.1
answers them (the differential scenarios alter_replica_log_dirs, list_config_resources and group_configs
compare the same against a real broker)."""

from __future__ import annotations

from typing import Any

import pytest

from minibroker.apis.describe_log_dirs import LOG_DIR
from minibroker.core.clock import ManualClock
from minibroker.core.cluster import Cluster
from minibroker.core.cluster_model import Node
from minibroker.core.config import BrokerConfig
from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    AlterConfigsRequest,
    AlterReplicaLogDirsRequest,
    ConsumerGroupHeartbeatRequest,
    DescribeConfigsRequest,
    IncrementalAlterConfigsRequest,
    ListConfigResourcesRequest,
)

from .authz import ADMIN, NOW, Op, Type, allow, call, secured_cluster

TOPIC, BROKER, BROKER_LOGGER, GROUP = 2, 4, 8, 32
SET, DELETE, APPEND = 0, 1, 2
_Dir = AlterReplicaLogDirsRequest.AlterReplicaLogDir
_DirTopic = _Dir.AlterReplicaLogDirTopic


def cluster(*topics: str, release: str = "latest", **configs: Any) -> Cluster:
    c = Cluster(BrokerConfig({"node.id": 1, **configs}), clock=ManualClock(NOW),
                nodes=[Node(1, "127.0.0.1", 9092, release=release)])
    for name in topics:
        c.create_topic(name, 2, 1)
    return c


def move(*dirs: tuple[str, list[tuple[str, list[int]]]]) -> Any:
    return AlterReplicaLogDirsRequest(dirs=[
        _Dir(path=path, topics=[_DirTopic(name=name, partitions=parts) for name, parts in topics])
        for path, topics in dirs])


def outcome(response: Any) -> dict[tuple[str, int], int]:
    return {(r.topic_name, p.partition_index): p.error_code for r in response.results for p in r.partitions}


# -- AlterReplicaLogDirs ---------------------------------------------------------------------------------

@pytest.mark.parametrize("version", [1, 2])
def test_alter_replica_log_dirs_to_the_dir_a_replica_is_in_is_none(version: int) -> None:
    c = cluster("t")
    answer = call(c, move((LOG_DIR, [("t", [0, 1, 7, -1]), ("missing", [0])])), version)
    assert outcome(answer) == {("t", 0): 0, ("t", 1): 0, ("t", 7): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                               ("t", -1): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                               ("missing", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}


@pytest.mark.parametrize("path", ["/no/such/dir", "kafka-logs", LOG_DIR + "/"])
def test_alter_replica_log_dirs_to_another_path_is_log_dir_not_found_before_the_partition(path: str) -> None:
    answer = call(cluster("t"), move((path, [("t", [0]), ("missing", [0])])), 2)
    assert outcome(answer) == {("t", 0): ErrorCode.LOG_DIR_NOT_FOUND, ("missing", 0): ErrorCode.LOG_DIR_NOT_FOUND}


def test_alter_replica_log_dirs_answers_a_partition_once_for_the_last_dir_naming_it() -> None:
    answer = call(cluster("t"), move((LOG_DIR, [("t", [0, 0, 1])]), ("/other", [("t", [0])])), 2)
    assert [(r.topic_name, [(p.partition_index, p.error_code) for p in r.partitions]) for r in answer.results] == \
        [("t", [(0, ErrorCode.LOG_DIR_NOT_FOUND), (1, 0)])]


def test_alter_replica_log_dirs_needs_alter_on_the_cluster() -> None:
    c = secured_cluster()
    c.create_topic("t", 1, 1)
    assert outcome(call(c, move((LOG_DIR, [("t", [0])])), 2)) == {("t", 0): ErrorCode.CLUSTER_AUTHORIZATION_FAILED}
    allow(c, "User:alice", Op.ALTER, Type.CLUSTER, "kafka-cluster")
    assert outcome(call(c, move((LOG_DIR, [("t", [0])])), 2)) == {("t", 0): 0}


# -- ListConfigResources ---------------------------------------------------------------------------------

def listed(c: Cluster, version: int, *types: int, principal: str = ADMIN) -> tuple[int, list[tuple[str, int]]]:
    answer = call(c, ListConfigResourcesRequest(resource_types=list(types)), version, principal=principal)
    return answer.error_code, [(r.resource_name, r.resource_type if version >= 1 else 16)
                               for r in answer.config_resources]


def test_list_config_resources_v1_lists_groups_with_configs_the_node_and_topics() -> None:
    c = cluster("b", "a")
    set_group(c, "g", "consumer.heartbeat.interval.ms", "6000")
    assert listed(c, 1) == (0, [("g", GROUP), ("1", BROKER_LOGGER), ("1", BROKER), ("a", TOPIC), ("b", TOPIC)])
    assert listed(c, 1, TOPIC, GROUP, TOPIC) == (0, [("g", GROUP), ("a", TOPIC), ("b", TOPIC)])
    assert listed(c, 0) == (0, [])  # client metrics resources only: none


@pytest.mark.parametrize("types", [[5], [0], [BROKER, 64]])
def test_list_config_resources_of_a_type_kafka_does_not_list_is_unsupported_version(types: list[int]) -> None:
    assert listed(cluster("a"), 1, *types) == (ErrorCode.UNSUPPORTED_VERSION, [])


def test_list_config_resources_needs_describe_configs_on_the_cluster() -> None:
    c = secured_cluster()
    assert listed(c, 1, BROKER, principal="User:alice") == (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, [])


def test_list_config_resources_is_served_at_v0_until_kafka_4_1_adds_v1() -> None:
    """Key 74 was ListClientMetricsResources v0 before 4.1 renamed it: real Kafka 3.9.1 advertises it too, and
    AlterReplicaLogDirs v0 (removed by KIP-896 in 4.0) — both as recorded in goldens/api_versions/."""
    from minibroker.apis import advertised_ranges
    ranges = {release: {key: (low, high) for key, low, high in advertised_ranges(release)}
              for release in ("3.9", "4.0", "4.1", "latest")}
    assert (ranges["3.9"][74], ranges["4.0"][74], ranges["4.1"][74], ranges["latest"][74]) == \
        ((0, 0), (0, 0), (0, 1), (0, 1))
    assert (ranges["3.9"][34], ranges["4.0"][34], ranges["latest"][34]) == ((0, 2), (1, 2), (1, 2))


# -- GROUP configs -----------------------------------------------------------------------------------------

def set_group(c: Cluster, group: str, name: str, value: str | None, op: int = SET,
              validate_only: bool = False, version: int = 1) -> tuple[int, str | None]:
    request = IncrementalAlterConfigsRequest(resources=[IncrementalAlterConfigsRequest.AlterConfigsResource(
        resource_type=GROUP, resource_name=group,
        configs=[IncrementalAlterConfigsRequest.AlterConfigsResource.AlterableConfig(
            name=name, config_operation=op, value=value)])], validate_only=validate_only)
    response = call(c, request, version, principal=ADMIN).responses[0]
    return response.error_code, response.error_message


def describe_group(c: Cluster, group: str, *keys: str, version: int = 4) -> Any:
    request = DescribeConfigsRequest(resources=[DescribeConfigsRequest.DescribeConfigsResource(
        resource_type=GROUP, resource_name=group, configuration_keys=list(keys) or None)],
        include_synonyms=True, include_documentation=False)
    return call(c, request, version, principal=ADMIN).results[0]


def test_describe_configs_of_a_group_never_configured_shows_the_broker_defaults() -> None:
    c = cluster(**{"group.consumer.session.timeout.ms": 50_000})
    result = describe_group(c, "nobody")
    assert (result.error_code, result.error_message) == (0, "")
    configs = {config.name: config for config in result.configs}
    assert list(configs)[:2] == ["consumer.session.timeout.ms", "consumer.assignment.interval.ms"]
    assert len(configs) == 17
    session = configs["consumer.session.timeout.ms"]
    assert (session.value, session.config_source, session.read_only, session.config_type) == ("50000", 4, False, 3)
    assert [(s.name, s.value, s.source) for s in session.synonyms] == [
        ("group.consumer.session.timeout.ms", "50000", 4), ("group.consumer.session.timeout.ms", "45000", 5)]
    reset = configs["share.auto.offset.reset"]
    assert [(s.name, s.value, s.source) for s in reset.synonyms] == [("share.auto.offset.reset", "latest", 5)]


def test_group_config_set_is_described_as_a_dynamic_group_config() -> None:
    c = cluster()
    assert set_group(c, "g", "consumer.session.timeout.ms", "50000") == (0, None)
    config = describe_group(c, "g", "consumer.session.timeout.ms").configs[0]
    assert (config.value, config.config_source) == ("50000", 8)
    assert [(s.name, s.value, s.source) for s in config.synonyms] == [
        ("consumer.session.timeout.ms", "50000", 8), ("group.consumer.session.timeout.ms", "45000", 5)]


@pytest.mark.parametrize(("name", "value", "op", "message"), [
    ("consumer.session.timeout.ms", "1000", SET,
     "consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms"),
    ("consumer.heartbeat.interval.ms", "999999", SET,
     "consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms"),
    ("no.such", "1", SET, "Unknown group config name: no.such"),
    ("consumer.heartbeat.interval.ms", "soon", SET,
     "Invalid value soon for configuration consumer.heartbeat.interval.ms: Not a number of type INT"),
    ("consumer.heartbeat.interval.ms", "6000", APPEND,
     "Can't APPEND to key consumer.heartbeat.interval.ms because its type is not LIST."),
])
def test_group_config_refusals_store_nothing(name: str, value: str, op: int, message: str) -> None:
    c = cluster()
    assert set_group(c, "g", name, value, op) == (ErrorCode.INVALID_CONFIG, message)
    assert c.config.groups == {}


def test_group_session_timeout_must_exceed_the_heartbeat_interval() -> None:
    c = cluster(**{"group.consumer.max.heartbeat.interval.ms": 60_000})
    assert set_group(c, "g", "consumer.heartbeat.interval.ms", "45000") == (
        ErrorCode.INVALID_CONFIG, "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms")


def test_group_configs_of_the_empty_group_name_are_refused() -> None:
    c = cluster()
    assert set_group(c, "", "consumer.heartbeat.interval.ms", "6000") == (
        ErrorCode.INVALID_REQUEST, "Default group resources are not allowed.")
    result = describe_group(c, "")
    assert (result.error_code, result.error_message) == (ErrorCode.INVALID_REQUEST, "Group name must not be empty")


def test_every_group_config_kafka_has_is_acted_on_and_accepted() -> None:
    c = cluster()
    assert set_group(c, "g", "share.session.timeout.ms", "50000") == (0, None)
    assert set_group(c, "g", "share.renew.acknowledge.enable", "false") == (0, None)  # KIP-1222 renewals off
    assert set_group(c, "g", "share.renew.acknowledge.enable", "true") == (0, None)


def test_legacy_alter_configs_replaces_a_groups_configs_and_delete_removes_the_resource() -> None:
    c = cluster()
    set_group(c, "g", "consumer.session.timeout.ms", "50000")
    request = AlterConfigsRequest(resources=[AlterConfigsRequest.AlterConfigsResource(
        resource_type=GROUP, resource_name="g",
        configs=[AlterConfigsRequest.AlterConfigsResource.AlterableConfig(
            name="consumer.heartbeat.interval.ms", value="6000")])], validate_only=False)
    assert call(c, request, 2, principal=ADMIN).responses[0].error_code == 0
    assert c.config.groups == {"g": {"consumer.heartbeat.interval.ms": 6000}}
    assert set_group(c, "g", "consumer.heartbeat.interval.ms", None, DELETE) == (0, None)
    assert listed(c, 1, GROUP) == (0, [])


def test_a_node_speaking_as_3_9_refuses_group_configs() -> None:
    c = cluster(release="3.9")
    assert set_group(c, "g", "consumer.heartbeat.interval.ms", "6000")[0] == ErrorCode.INVALID_CONFIG
    assert c.config.groups == {}


def heartbeat(group: str, member: str, epoch: int) -> Any:
    fields: dict[str, Any] = dict(group_id=group, member_id=member, member_epoch=epoch, instance_id=None,
                                  rack_id=None, rebalance_timeout_ms=-1, subscribed_topic_names=None,
                                  subscribed_topic_regex=None, server_assignor=None, topic_partitions=None)
    if epoch == 0:
        fields.update(rebalance_timeout_ms=30_000, subscribed_topic_names=["t"], topic_partitions=[])
    return ConsumerGroupHeartbeatRequest(**fields)


def test_consumer_group_uses_its_configured_heartbeat_interval_and_session_timeout() -> None:
    c = cluster("t")
    set_group(c, "g", "consumer.heartbeat.interval.ms", "6000")
    set_group(c, "g", "consumer.session.timeout.ms", "50000")
    assert call(c, heartbeat("g", "a", 0), 1).heartbeat_interval_ms == 6000
    assert call(c, heartbeat("other", "b", 0), 1).heartbeat_interval_ms == 5000
    c.clock.advance(46_000)  # type: ignore[attr-defined]
    c.tick()  # past the broker's 45 s, within the group's 50 s
    assert call(c, heartbeat("g", "a", 1), 1).error_code == 0
    assert call(c, heartbeat("other", "b", 1), 1).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    c.clock.advance(50_000)  # type: ignore[attr-defined]
    c.tick()
    assert call(c, heartbeat("g", "a", 1), 1).error_code == ErrorCode.UNKNOWN_MEMBER_ID
