"""A release profile's configs are its release's: Kafka 3.9's overlay on the 4.2 tables (config_releases.py).

Facts from Kafka 3.9.1 itself (its ConfigDefs, and DescribeConfigs of a broker and a topic compared with
`minibroker serve --as-version 3.9`); the differential scenarios scenarios/3.9/release39_*_configs.json check the
same over the wire against recorded 3.9.1 answers.
"""

from __future__ import annotations

import pytest

from minibroker.core.config import (
    LONG_MAX,
    SET,
    BrokerConfig,
    ConfigError,
    ConfigSource,
    ConfigType,
    UpdateMode,
    scala_hash_map_order,
)
from minibroker.protocol.errors import ErrorCode, KafkaError
from minibroker.server.broker import cluster_config

RELEASE_39_TOPIC = ("message.format.version", "message.timestamp.difference.max.ms", "message.downconversion.enable")
RELEASE_39_BROKER = ("log.message.format.version", "log.message.timestamp.difference.max.ms",
                     "log.message.downconversion.enable", "inter.broker.protocol.version", "zookeeper.connect")


@pytest.mark.parametrize("profile", ["3.9", "2.8"])
def test_an_older_profile_knows_the_configs_kafka_4_removed(profile: str) -> None:
    config = cluster_config({}, profile)
    assert set(RELEASE_39_TOPIC) <= set(config.topic_names())
    assert set(RELEASE_39_BROKER) <= set(config.broker_names())
    assert config.topic_def("message.format.version").default == "3.0-IV1"


@pytest.mark.parametrize("profile", ["4.0", "4.2", "4.3", "latest"])
def test_a_4x_profile_refuses_them_as_unknown(profile: str) -> None:
    config = cluster_config({}, profile)
    assert not set(RELEASE_39_TOPIC) & set(config.topic_names())
    assert not set(RELEASE_39_BROKER) & set(config.broker_names())
    with pytest.raises(ConfigError, match="^Unknown topic config name: message.format.version$"):
        config.parse_topic_configs({"message.format.version": "2.8"})
    with pytest.raises(ConfigError, match="^Unknown broker config name: log.message.format.version$"):
        cluster_config({"log.message.format.version": "3.0"}, profile)


def test_configs_added_after_3_9_are_unknown_to_it() -> None:
    config = cluster_config({}, "3.9")
    names = set(config.broker_names())
    assert not {"share.coordinator.threads", "group.streams.max.size", "config.providers"} & names
    with pytest.raises(ConfigError, match="^Unknown broker config name: share.coordinator.threads$"):
        cluster_config({"share.coordinator.threads": "2"}, "3.9")
    assert "share.coordinator.threads" in cluster_config({}, "4.2").broker_names()


def test_3_9_defaults_timestamps_after_max_to_long_max_and_4_x_to_one_hour() -> None:
    old, new = cluster_config({}, "3.9"), cluster_config({}, "4.2")
    assert old["log.message.timestamp.after.max.ms"] == LONG_MAX
    assert new["log.message.timestamp.after.max.ms"] == 3_600_000
    assert old.describe_topic("message.timestamp.after.max.ms", {}).rendered == str(LONG_MAX)


def test_3_9_describes_its_broker_configs_as_kafka_3_9_does() -> None:
    config = cluster_config({}, "3.9")
    advertised = config.describe("advertised.listeners")
    assert (advertised.definition.type, advertised.definition.mode, advertised.read_only) == \
        (ConfigType.STRING, UpdateMode.PER_BROKER, False)
    assert cluster_config({}, "4.2").describe("advertised.listeners").definition.type is ConfigType.LIST
    version = config.describe("log.message.format.version")
    assert (version.rendered, version.read_only, version.source) == ("3.0-IV1", True, ConfigSource.DEFAULT_CONFIG)
    downconversion = config.describe("log.message.downconversion.enable")
    assert (downconversion.rendered, downconversion.read_only) == ("true", False)
    # defined internal in 3.9: not listed, Kafka 3.9's default
    assert "group.consumer.migration.policy" not in config.broker_names()
    assert config["group.consumer.migration.policy"] == "disabled"
    assert config["group.coordinator.rebalance.protocols"] == ["classic"]


def test_a_topic_keeps_and_describes_3_9_configs_with_their_broker_synonyms() -> None:
    config = cluster_config({}, "3.9")
    overrides = config.parse_topic_configs({"message.format.version": "2.8",
                                            "message.timestamp.difference.max.ms": "60000"})
    entry = config.describe_topic("message.format.version", overrides)
    assert (entry.rendered, entry.source) == ("2.8", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert entry.rendered_synonyms() == [("message.format.version", "2.8", ConfigSource.DYNAMIC_TOPIC_CONFIG),
                                         ("log.message.format.version", "3.0-IV1", ConfigSource.DEFAULT_CONFIG)]
    altered = config.incremental_topic_configs(overrides, [("message.format.version", 1, None)])
    assert config.describe_topic("message.format.version", altered).rendered == "3.0-IV1"


@pytest.mark.parametrize(("value", "valid"), [
    ("2.8", True), ("2.8-IV1", True), ("3.9.1", True), ("0.10.0", True), ("0.10.0-IV0", True), ("4.0-IV1", True),
    ("banana", False), ("0.10", False), ("4.0", False), ("2.8-IV9", False), ("3", False),
])
def test_message_format_version_is_validated_as_kafka_3_9_metadata_versions(value: str, valid: bool) -> None:
    config = cluster_config({}, "3.9")
    if valid:
        assert config.parse_topic_configs({"message.format.version": value}) == {"message.format.version": value}
    else:
        with pytest.raises(ConfigError) as refused:
            config.parse_topic_configs({"message.format.version": value})
        assert refused.value.message == (f"Invalid value {value} for configuration message.format.version: "
                                         f"Version {value} is not a valid version")


def test_timestamp_difference_bounds_what_before_and_after_leave_at_long_max() -> None:
    config = cluster_config({}, "3.9")
    assert config.timestamp_bounds({}) == (LONG_MAX, LONG_MAX)
    overrides = config.parse_topic_configs({"message.timestamp.difference.max.ms": "60000",
                                            "message.timestamp.before.max.ms": "1000"})
    assert config.timestamp_bounds(overrides) == (1000, 60000)
    assert cluster_config({}, "4.2").timestamp_bounds({}) == (LONG_MAX, 3_600_000)


def test_advertised_listeners_is_dynamic_on_3_9_but_binds_once_here() -> None:
    old = cluster_config({"node.id": "1"}, "3.9")
    with pytest.raises(ConfigError, match="minibroker does not implement dynamic updates of advertised.listeners"):
        old.incremental_alter_dynamic(1, [("advertised.listeners", SET, "PLAINTEXT://h:1")])
    new = cluster_config({"node.id": "1"}, "4.2")
    with pytest.raises(KafkaError) as refused:
        new.incremental_alter_dynamic(1, [("advertised.listeners", SET, "PLAINTEXT://h:1")])
    assert refused.value.code == ErrorCode.INVALID_REQUEST


def test_3_9_lists_requested_configs_in_scala_hash_map_order_and_4_x_by_name() -> None:
    requested = ["message.format.version", "message.timestamp.after.max.ms", "message.timestamp.before.max.ms",
                 "message.timestamp.difference.max.ms"]
    # the order Kafka 3.9.1 answered (goldens/3.9.1/release39_topic_configs.json)
    assert cluster_config({}, "3.9").describe_order(requested, keyed=True) == [
        "message.format.version", "message.timestamp.before.max.ms", "message.timestamp.difference.max.ms",
        "message.timestamp.after.max.ms"]
    assert cluster_config({}, "3.9").describe_order(requested, keyed=False) == requested
    assert cluster_config({}, "4.2").describe_order(requested, keyed=True) == requested
    assert scala_hash_map_order(["log.message.format.version", "advertised.listeners",
                                 "log.message.timestamp.after.max.ms"]) == [
        "log.message.timestamp.after.max.ms", "log.message.format.version", "advertised.listeners"]


def test_the_default_broker_config_is_the_latest_release() -> None:
    assert BrokerConfig().topic_names() == cluster_config({}, "latest").topic_names()
    with pytest.raises(ConfigError):
        BrokerConfig().topic_def("message.format.version")


def test_3_9_prints_refused_names_as_a_scala_set_and_4_x_as_a_java_set() -> None:
    for profile, text in (("3.9", "Set(node.id)"), ("latest", "[node.id]")):
        with pytest.raises(KafkaError) as refused:
            cluster_config({}, profile).incremental_alter_dynamic(None, [("node.id", SET, "1")])
        assert (refused.value.code, refused.value.message) == (
            ErrorCode.INVALID_REQUEST, f"Cannot update these configs dynamically: {text}")


def test_message_downconversion_enable_is_a_3_9_topic_config_falling_back_to_the_broker_default() -> None:
    config = cluster_config({}, "3.9")
    assert config.topic_value("message.downconversion.enable", {}) is True
    config.incremental_alter_dynamic(None, [("log.message.downconversion.enable", SET, "false")])
    assert config.topic_value("message.downconversion.enable", {}) is False
    overrides = config.parse_topic_configs({"message.downconversion.enable": "true"})
    assert config.topic_value("message.downconversion.enable", overrides) is True
