"""The config registry: parsing, bounds, sources and synonyms."""

from __future__ import annotations

import pytest

from minibroker.core.config import BrokerConfig, ConfigError, ConfigSource, load_properties, parse_topic_configs


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
    with pytest.raises(ConfigError, match="dynamically"):
        BrokerConfig().set_dynamic("socket.request.max.bytes", "10", node_level=True)


def test_properties_file_parsing():
    text = "# comment\n! other\nnum.partitions=3\nauto.create.topics.enable : false\nlong.key = a\\\n  b\n\n"
    assert load_properties(text) == {"num.partitions": "3", "auto.create.topics.enable": "false", "long.key": "ab"}
