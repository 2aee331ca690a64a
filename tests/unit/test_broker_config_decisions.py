"""Dynamic broker configs as Kafka 4.3.1 answers AlterConfigs/IncrementalAlterConfigs on a BROKER resource (names it
does not know kept, Java's HashSet in refusals, the ELR cluster-level min.insync.replicas), and the decision list
docs/broker-configs.md for the configs minibroker cannot act on."""

from __future__ import annotations

from pathlib import Path

import pytest

from minibroker.apis.releases import RELEASES
from minibroker.core.config import (
    BROKER_CONFIGS,
    DELETE,
    SET,
    BrokerConfig,
    ConfigError,
    ConfigSource,
    ConfigType,
    Support,
    decision_list,
    java_set,
    release_configs,
    unsupported_reason,
)
from minibroker.protocol.errors import ErrorCode, KafkaError
from minibroker.server.broker import cluster_config

DOCS = Path(__file__).resolve().parents[2] / "docs" / "broker-configs.md"
ELR_REFUSAL = "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."


def test_the_decision_list_is_current():
    assert DOCS.read_text() == decision_list()


@pytest.mark.parametrize("profile", [None, *RELEASES])
def test_every_dynamic_config_kept_at_kafkas_default_says_why(profile):
    configs = BROKER_CONFIGS if profile is None else release_configs(profile).broker
    refused = [name for name, d in configs.items() if d.dynamic and d.support is Support.UNSUPPORTED]
    assert refused and [name for name in refused if unsupported_reason(name) is None] == []


@pytest.mark.parametrize("name", ["group.consumer.assignment.interval.ms", "cordoned.log.dirs",
                                  "group.coordinator.cached.buffer.max.bytes"])
def test_the_decision_list_covers_the_latest_release_s_dynamic_configs(name):
    assert f"| `{name}` |" in decision_list()


@pytest.mark.parametrize(("names", "table_for", "expected"), [
    # the order Kafka 4.3.1 printed these sets in (recorded from the reference broker)
    (["ssl.keystore.type", "ssl.truststore.type", "ssl.key.password", "ssl.keystore.location"], 4,
     "[ssl.keystore.type, ssl.key.password, ssl.keystore.location, ssl.truststore.type]"),
    (["sasl.kerberos.kinit.cmd", "listeners", "ssl.protocol", "sasl.enabled.mechanisms"], 4,
     "[ssl.protocol, listeners, sasl.kerberos.kinit.cmd, sasl.enabled.mechanisms]"),
    (["log.dirs", "num.partitions", "broker.id", "auto.create.topics.enable"], 5,
     "[num.partitions, auto.create.topics.enable, broker.id, log.dirs]"),
    (["log.dirs"], 1, "[log.dirs]"),
])
def test_refusals_name_configs_as_a_java_hash_set(names, table_for, expected):
    assert java_set(names, table_for) == expected


def test_read_only_names_are_refused_in_kafkas_words():
    config = BrokerConfig()
    with pytest.raises(KafkaError) as refused:
        config.incremental_alter_dynamic(0, [("log.dirs", SET, "/x"), ("num.partitions", SET, "2")])
    assert (refused.value.code, refused.value.message) == (
        ErrorCode.INVALID_REQUEST, "Cannot update these configs dynamically: [num.partitions, log.dirs]")


def test_a_name_kafka_does_not_know_is_kept_and_listed_as_unknown():
    config = BrokerConfig()
    config.incremental_alter_dynamic(0, [("my.plugin.setting", SET, "on")])
    config.incremental_alter_dynamic(None, [("my.other.setting", SET, "x")])
    assert "my.plugin.setting" in config.broker_names(0) and "my.other.setting" in config.broker_names(0)
    entry = config.describe("my.plugin.setting", True, 0)
    assert (entry.rendered, entry.source, entry.read_only, entry.definition.sensitive, entry.definition.type) == (
        None, ConfigSource.DYNAMIC_BROKER_CONFIG, True, True, ConfigType.UNKNOWN)
    assert entry.rendered_synonyms() == [("my.plugin.setting", None, ConfigSource.DYNAMIC_BROKER_CONFIG)]
    assert config.describe("my.other.setting", per_node=False).source is ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    config.incremental_alter_dynamic(0, [("my.plugin.setting", DELETE, None)])
    assert "my.plugin.setting" not in config.broker_names(0)


def test_listener_prefixed_names_are_refused_as_start_up_only():
    with pytest.raises(ConfigError, match="minibroker does not implement dynamic listener-specific configs"):
        BrokerConfig().incremental_alter_dynamic(0, [("listener.name.plaintext.ssl.keystore.type", SET, "PKCS12")])


def test_a_release_with_elr_keeps_min_insync_replicas_at_the_cluster_level():
    config = cluster_config({"min.insync.replicas": "2"}, "latest")
    entry = config.describe("min.insync.replicas", per_node=False)
    assert (entry.value, entry.source) == (2, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    node = config.describe("min.insync.replicas", True, 0)
    assert [source for _, _, source in node.synonyms] == [ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
                                                          ConfigSource.STATIC_BROKER_CONFIG,
                                                          ConfigSource.DEFAULT_CONFIG]
    with pytest.raises(ConfigError, match=ELR_REFUSAL):
        config.incremental_alter_dynamic(None, [("min.insync.replicas", DELETE, None)], validate_only=True)
    with pytest.raises(ConfigError, match=ELR_REFUSAL):
        config.alter_dynamic(None, {"log.retention.ms": "1000"}, validate_only=True)
    config.alter_dynamic(None, {"min.insync.replicas": "1", "log.retention.ms": "1000"})
    assert config.describe("min.insync.replicas", per_node=False).value == 1


@pytest.mark.parametrize("release", ["3.9", "4.0"])
def test_a_release_without_elr_has_no_cluster_level_configs(release):
    config = cluster_config({}, release)
    assert config.dynamic_default == {}
    config.alter_dynamic(None, {"log.retention.ms": "1000"})
