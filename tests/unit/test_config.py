"""The config registry: parsing, bounds, sources and synonyms."""

from __future__ import annotations

import pytest

from minibroker.core.config import (
    BROKER_CONFIGS,
    BrokerConfig,
    ConfigError,
    ConfigSource,
    java_double,
    load_properties,
    parse_topic_configs,
)
from minibroker.protocol.errors import ErrorCode, KafkaError


@pytest.mark.parametrize("value", ["4", "0", "-1", "abc", "5.5", ""])
def test_batches_to_retain_below_five_or_not_an_integer_is_refused(value):
    with pytest.raises(ConfigError) as info:
        parse_topic_configs({"producer.state.batches.to.retain": value})
    assert "producer.state.batches.to.retain" in info.value.message
    assert info.value.code == 40  # INVALID_CONFIG


def test_broker_default_below_minimum_names_config_value_and_minimum():
    with pytest.raises(ConfigError) as info:
        BrokerConfig({"log.producer.state.batches.to.retain": "3"})
    assert info.value.message == (
        "Invalid value 3 for configuration log.producer.state.batches.to.retain: Value must be at least 5"
    )


def test_unknown_configs_are_refused():
    with pytest.raises(ConfigError, match="Unknown broker config"):
        BrokerConfig({"no.such.config": "1"})
    with pytest.raises(ConfigError, match="Unknown topic config"):
        parse_topic_configs({"no.such.config": "1"})


def test_topic_value_falls_back_through_broker_layers():
    config = BrokerConfig({"log.producer.state.batches.to.retain": "8"})
    entry = config.describe_topic("producer.state.batches.to.retain", {})
    assert (entry.value, entry.source) == (8, ConfigSource.STATIC_BROKER_CONFIG)
    config.set_dynamic("log.producer.state.batches.to.retain", "12", node_level=False)
    entry = config.describe_topic("producer.state.batches.to.retain", {})
    assert (entry.value, entry.source) == (12, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert [s[2] for s in entry.synonyms] == [ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
                                             ConfigSource.STATIC_BROKER_CONFIG, ConfigSource.DEFAULT_CONFIG]
    entry = config.describe_topic("producer.state.batches.to.retain", {"producer.state.batches.to.retain": 20})
    assert (entry.value, entry.source) == (20, ConfigSource.DYNAMIC_TOPIC_CONFIG)
    config.delete_dynamic("log.producer.state.batches.to.retain", node_level=False)
    assert config.topic_value("producer.state.batches.to.retain", {}) == 8
    assert BrokerConfig().describe_topic("producer.state.batches.to.retain", {}).source is ConfigSource.DEFAULT_CONFIG


def test_static_only_broker_config_cannot_change_dynamically():
    config = BrokerConfig()
    with pytest.raises(KafkaError) as info:
        config.set_dynamic("socket.request.max.bytes", "10", node_level=True)
    assert (info.value.code, info.value.message) == (
        ErrorCode.INVALID_REQUEST, "Cannot update these configs dynamically: [socket.request.max.bytes]")
    assert config.dynamic_node == {} and config["socket.request.max.bytes"] == 104857600


@pytest.mark.parametrize(("value", "text"), [
    (0.5, "0.5"), (1.0, "1.0"), (0.05, "0.05"), (1e7, "1.0E7"), (1.7976931348623157e308, "1.7976931348623157E308"),
    (1e-4, "1.0E-4"), (123456.5, "123456.5"),
])
def test_doubles_render_as_java_does(value, text):
    assert java_double(value) == text


@pytest.mark.parametrize(("name", "raw", "message"), [
    ("num.io.threads", "abc", "Invalid value abc for configuration num.io.threads: Not a number of type INT"),
    ("num.io.threads", "1_0", "Invalid value 1_0 for configuration num.io.threads: Not a number of type INT"),
    ("num.io.threads", "0", "Invalid value 0 for configuration num.io.threads: Value must be at least 1"),
    ("log.retention.ms", "soon", "Invalid value soon for configuration log.retention.ms: Not a number of type LONG"),
    ("offsets.topic.replication.factor", "40000",
     "Invalid value 40000 for configuration offsets.topic.replication.factor: Not a number of type SHORT"),
    ("log.cleaner.min.cleanable.ratio", "1.5",
     "Invalid value 1.5 for configuration log.cleaner.min.cleanable.ratio: Value must be no more than 1"),
    ("auto.create.topics.enable", "yes",
     "Invalid value yes for configuration auto.create.topics.enable: Expected value to be either true or false"),
    ("compression.type", "brotli", "Invalid value brotli for configuration compression.type: String must be one of: "
                                   "uncompressed, zstd, lz4, snappy, gzip, producer"),
    ("compression.gzip.level", "10",
     "Invalid value 10 for configuration compression.gzip.level: Value must be no more than 9"),
])
def test_values_are_refused_with_kafkas_config_def_messages(name, raw, message):
    with pytest.raises(ConfigError) as info:
        BROKER_CONFIGS[name].parse(raw)
    assert info.value.message == message


def test_gzip_level_minus_one_is_valid():
    assert BROKER_CONFIGS["compression.gzip.level"].parse("-1") == -1


@pytest.mark.parametrize(("settings", "message"), [
    ({"authorizer.class.name": "org.example.Authorizer"},
     "authorizer.class.name: minibroker implements only org.apache.kafka.metadata.authorizer.StandardAuthorizer "
     "(Kafka's KRaft authorizer), not org.example.Authorizer"),
    ({"process.roles": "broker,controller"}, "minibroker does not implement process.roles"),
    ({"sasl.login.refresh.buffer.seconds": "100"},
     "minibroker does not implement sasl.login.refresh.buffer.seconds; it only accepts Kafka's default, '300'"),
])
def test_unimplemented_configs_are_refused_at_start_up(settings, message):
    with pytest.raises(ConfigError) as info:
        BrokerConfig(settings)
    assert info.value.message == message


def test_inert_and_default_valued_configs_start_and_describe_as_static():
    config = BrokerConfig({"num.io.threads": "4", "log.dirs": "/var/lib/kafka", "sasl.enabled.mechanisms": "GSSAPI"})
    entry = config.describe("num.io.threads")
    assert (entry.rendered, entry.source) == ("4", ConfigSource.STATIC_BROKER_CONFIG)
    assert entry.rendered_synonyms() == [("num.io.threads", "4", ConfigSource.STATIC_BROKER_CONFIG),
                                         ("num.io.threads", "8", ConfigSource.DEFAULT_CONFIG)]
    assert config.describe("log.dirs").rendered_synonyms() == [
        ("log.dirs", "/var/lib/kafka", ConfigSource.STATIC_BROKER_CONFIG)]  # a null default is no synonym


@pytest.mark.parametrize(("settings", "retention_ms"), [
    ({}, 604800000),
    ({"log.retention.hours": "1"}, 3600000),
    ({"log.retention.hours": "1", "log.retention.minutes": "2"}, 120000),
    ({"log.retention.minutes": "2", "log.retention.ms": "5000"}, 5000),
    ({"log.retention.ms": "-7"}, -1),
])
def test_topic_retention_falls_back_through_kafkas_retention_synonyms(settings, retention_ms):
    config = BrokerConfig(settings)
    assert config.topic_value("retention.ms", {}) == retention_ms
    assert config.describe_topic("retention.ms", {}).value == retention_ms


def test_topic_synonyms_drop_what_only_a_weaker_broker_name_sets():
    config = BrokerConfig({"log.retention.hours": "1"})
    assert config.describe_topic("retention.ms", {}).synonyms == []  # ConfigHelper.configSynonyms' dropWhile
    config = BrokerConfig({"log.retention.ms": "5000", "log.retention.hours": "1"})
    assert config.describe_topic("retention.ms", {}).rendered_synonyms() == [
        ("log.retention.ms", "5000", ConfigSource.STATIC_BROKER_CONFIG),
        ("log.retention.hours", "1", ConfigSource.STATIC_BROKER_CONFIG),
        ("log.retention.hours", "168", ConfigSource.DEFAULT_CONFIG)]
    entry = BrokerConfig().describe_topic("flush.ms", {})
    assert (entry.rendered, entry.source, entry.synonyms) == (str(2**63 - 1), ConfigSource.DEFAULT_CONFIG, [])


def test_properties_file_parsing():
    text = "# comment\n! other\nnum.partitions=3\nauto.create.topics.enable : false\nlong.key = a\\\n  b\n\n"
    assert load_properties(text) == {"num.partitions": "3", "auto.create.topics.enable": "false", "long.key": "ab"}


def test_topic_values_follow_dynamic_broker_changes_at_once():
    from minibroker.core.cluster import Cluster

    cluster = Cluster()
    topic = cluster.create_topic("t", 1)
    assert topic is not None
    assert cluster.topic_config(topic, "max.message.bytes") == 1048588
    cluster.config.set_dynamic("message.max.bytes", "2000000", node_level=False)
    assert cluster.topic_config(topic, "max.message.bytes") == 2000000
    cluster.set_topic_configs(topic, {"max.message.bytes": 3000})
    assert cluster.topic_config(topic, "max.message.bytes") == 3000


def test_topic_overrides_are_replaced_never_edited_in_place():
    from minibroker.core.cluster import Cluster

    cluster = Cluster()
    topic = cluster.create_topic("t", 1, configs={"retention.ms": "1000"})
    assert topic is not None
    with pytest.raises(TypeError):
        topic.configs["retention.ms"] = 5  # type: ignore[index]
