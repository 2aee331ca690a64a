"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs answer as Kafka 4.2 does, over the wire.

Topics list every config LogConfig has, with its defaults; BROKER "<id>" lists every broker config
(read-only ones included) with sources and synonyms as ConfigHelper computes them. Broker alters get
Kafka's refusals (ConfigAdminManager, DynamicBrokerConfig: INVALID_REQUEST); configs minibroker does not
implement keep Kafka's default and any other value is refused (INVALID_CONFIG). A refused change changes
nothing.
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any

import pytest

from minibroker.protocol.errors import ErrorCode
from minibroker.protocol.messages import (
    AlterConfigsRequest,
    CreateTopicsRequest,
    DescribeConfigsRequest,
    IncrementalAlterConfigsRequest,
)
from minibroker.testing.process import start_broker
from minibroker.testing.wire import WireClient
from tests.helpers import unique_topic
from tests.integration.test_wire_protocol import create_topic

TOPIC, BROKER = 2, 4
SET, DELETE, APPEND = 0, 1, 2
DYNAMIC_TOPIC, DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, DEFAULT = 1, 2, 3, 4, 5
LONG_MAX = "9223372036854775807"

# LogConfig's non-internal configs in Kafka 4.2, plus KIP-1269's
KAFKA_TOPIC_CONFIGS = {
    "cleanup.policy", "compression.gzip.level", "compression.lz4.level", "compression.type",
    "compression.zstd.level", "delete.retention.ms", "file.delete.delay.ms", "flush.messages", "flush.ms",
    "follower.replication.throttled.replicas", "index.interval.bytes", "leader.replication.throttled.replicas",
    "local.retention.bytes", "local.retention.ms", "max.compaction.lag.ms", "max.message.bytes",
    "message.timestamp.after.max.ms", "message.timestamp.before.max.ms", "message.timestamp.type",
    "min.cleanable.dirty.ratio", "min.compaction.lag.ms", "min.insync.replicas", "preallocate",
    "remote.log.copy.disable", "remote.log.delete.on.disable", "remote.storage.enable", "retention.bytes",
    "retention.ms", "segment.bytes", "segment.index.bytes", "segment.jitter.ms", "segment.ms",
    "unclean.leader.election.enable", "producer.state.batches.to.retain",
}


def describe(wire: WireClient, resource_type: int, name: str, keys: list[str] | None = None,
             synonyms: bool = True) -> Any:
    resource = DescribeConfigsRequest.DescribeConfigsResource(resource_type=resource_type, resource_name=name,
                                                              configuration_keys=keys)
    request = DescribeConfigsRequest(resources=[resource], include_synonyms=synonyms, include_documentation=False)
    return wire.request(request, 4).results[0]


def configs(wire: WireClient, resource_type: int, name: str, keys: list[str] | None = None) -> dict[str, Any]:
    result = describe(wire, resource_type, name, keys)
    assert result.error_code == 0, result
    return {c.name: c for c in result.configs}


def synonyms_of(config: Any) -> list[tuple[str, str | None, int]]:
    return [(s.name, s.value, s.source) for s in config.synonyms]


def incremental(wire: WireClient, resource_type: int, name: str, *ops: tuple[str, int, str | None],
                validate_only: bool = False) -> Any:
    resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    request = IncrementalAlterConfigsRequest(resources=[resource(
        resource_type=resource_type, resource_name=name,
        configs=[resource.AlterableConfig(name=n, config_operation=op, value=v) for n, op, v in ops])],
        validate_only=validate_only)
    return wire.request(request, 1).responses[0]


def legacy(wire: WireClient, resource_type: int, name: str, values: dict[str, str | None]) -> Any:
    resource = AlterConfigsRequest.AlterConfigsResource
    request = AlterConfigsRequest(resources=[resource(
        resource_type=resource_type, resource_name=name,
        configs=[resource.AlterableConfig(name=n, value=v) for n, v in values.items()])], validate_only=False)
    return wire.request(request, 2).responses[0]


def error(response: Any) -> tuple[int, str | None]:
    return response.error_code, response.error_message


# -- DescribeConfigs ---------------------------------------------------------------------------------------


def test_topic_lists_every_kafka_topic_config_with_kafka_defaults(wire):
    topic = unique_topic("cfg")
    create_topic(wire, topic)
    described = configs(wire, TOPIC, topic)
    assert set(described) == KAFKA_TOPIC_CONFIGS
    values = {name: (c.value, c.config_source, c.read_only, c.is_sensitive) for name, c in described.items()}
    assert values["flush.ms"] == (LONG_MAX, DEFAULT, False, False)
    assert values["flush.messages"] == (LONG_MAX, DEFAULT, False, False)
    assert values["segment.ms"] == ("604800000", DEFAULT, False, False)
    assert values["segment.jitter.ms"] == ("0", DEFAULT, False, False)
    assert values["segment.bytes"] == ("1073741824", DEFAULT, False, False)
    assert values["retention.ms"] == ("604800000", DEFAULT, False, False)
    assert values["compression.zstd.level"] == ("3", DEFAULT, False, False)
    assert values["min.cleanable.dirty.ratio"] == ("0.5", DEFAULT, False, False)
    assert values["follower.replication.throttled.replicas"] == ("", DEFAULT, False, False)
    assert values["remote.storage.enable"] == ("false", DEFAULT, False, False)
    assert described["min.cleanable.dirty.ratio"].config_type == 6  # DOUBLE
    assert described["cleanup.policy"].config_type == 7  # LIST
    # ConfigHelper.configSynonyms: null broker defaults are not synonyms, and a synonym that only a weaker
    # name sets (log.retention.hours, log.flush.scheduler.interval.ms, log.roll.hours) is dropped
    assert synonyms_of(described["flush.ms"]) == []
    assert synonyms_of(described["retention.ms"]) == []
    assert synonyms_of(described["segment.ms"]) == []
    assert synonyms_of(described["cleanup.policy"]) == [("log.cleanup.policy", "delete", DEFAULT)]
    assert synonyms_of(described["min.cleanable.dirty.ratio"]) == [("log.cleaner.min.cleanable.ratio", "0.5",
                                                                    DEFAULT)]
    assert synonyms_of(described["remote.storage.enable"]) == []


def test_broker_lists_every_kafka_broker_config_read_only_ones_included(broker, wire):
    described = configs(wire, BROKER, "0")
    assert len(described) == 343  # Kafka 4.3.1's 340 broker configs, KIP-1269's and KIP-758's two
    assert described["producer.state.mode"].value == "window"
    assert described["max.in.flight.sequence.number.per.connection"].value == "10000000"
    row = {name: (c.value, c.config_source, c.read_only, c.is_sensitive) for name, c in described.items()}
    assert row["listeners"] == (f"PLAINTEXT://127.0.0.1:{broker.port}", STATIC, False, False)
    assert synonyms_of(described["listeners"]) == [("listeners", f"PLAINTEXT://127.0.0.1:{broker.port}", STATIC),
                                                   ("listeners", "PLAINTEXT://:9092", DEFAULT)]
    assert row["advertised.listeners"] == (None, DEFAULT, True, False)
    assert row["node.id"] == ("0", STATIC, True, False)
    assert row["process.roles"] == (None, DEFAULT, True, False)
    assert row["log.dirs"] == (None, DEFAULT, True, False)
    assert row["log.retention.hours"] == ("168", DEFAULT, True, False)
    assert row["log.retention.ms"] == (None, DEFAULT, False, False)
    assert row["log.flush.interval.ms"] == (None, DEFAULT, False, False)
    assert row["num.io.threads"] == ("8", DEFAULT, False, False)
    assert row["sasl.enabled.mechanisms"] == ("GSSAPI", DEFAULT, False, False)
    assert row["authorizer.class.name"] == ("", DEFAULT, True, False)
    assert row["ssl.keystore.password"] == (None, DEFAULT, False, True)
    assert described["ssl.keystore.password"].config_type == 9  # PASSWORD
    assert row["log.cleaner.io.max.bytes.per.second"] == ("1.7976931348623157E308", DEFAULT, False, False)
    assert row["log.segment.bytes"] == ("1073741824", DEFAULT, False, False)
    assert row["group.consumer.assignment.interval.ms"] == ("1000", DEFAULT, False, False)  # new in 4.3
    assert row["message.max.bytes"] == ("1048588", DEFAULT, False, False)
    assert "log.message.downconversion.enable" not in described  # removed in Kafka 4.0
    assert synonyms_of(described["log.retention.hours"]) == [("log.retention.hours", "168", DEFAULT)]
    assert synonyms_of(described["log.retention.ms"]) == []


def test_empty_configuration_keys_mean_every_config(wire):
    topic = unique_topic("cfg-keys")
    create_topic(wire, topic)
    assert set(configs(wire, TOPIC, topic, keys=[])) == KAFKA_TOPIC_CONFIGS
    assert set(configs(wire, TOPIC, topic, keys=["flush.ms", "nope"])) == {"flush.ms"}


@pytest.mark.parametrize(("name", "message"), [
    ("7", "Unexpected broker id, expected 0 or empty string, but received 7"),
    ("abc", "Broker id must be an integer, but it is: abc"),
])
def test_describe_other_broker_is_refused_as_kafka_does(wire, name, message):
    result = describe(wire, BROKER, name)
    assert (result.error_code, result.error_message, result.configs) == (ErrorCode.INVALID_REQUEST, message, [])


def test_describe_unknown_topic_has_no_message(wire):
    result = describe(wire, TOPIC, unique_topic("missing"))
    assert (result.error_code, result.error_message) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None)


# -- broker AlterConfigs / IncrementalAlterConfigs ---------------------------------------------------------


def test_dynamic_broker_configs_are_accepted_per_node_and_cluster_wide(broker_factory):
    broker = broker_factory()
    with WireClient(broker.host, broker.port) as wire:
        assert error(incremental(wire, BROKER, "0", ("num.io.threads", SET, "16"))) == (0, None)
        assert error(incremental(wire, BROKER, "", ("log.cleaner.threads", SET, "2"))) == (0, None)
        node = configs(wire, BROKER, "0")
        assert (node["num.io.threads"].value, node["num.io.threads"].config_source) == ("16", DYNAMIC_BROKER)
        assert synonyms_of(node["num.io.threads"]) == [("num.io.threads", "16", DYNAMIC_BROKER),
                                                       ("num.io.threads", "8", DEFAULT)]
        assert (node["log.cleaner.threads"].value, node["log.cleaner.threads"].config_source) == ("2",
                                                                                                 DYNAMIC_DEFAULT)
        default = configs(wire, BROKER, "")
        assert {name: (c.value, c.config_source) for name, c in default.items()} == {
            "log.cleaner.threads": ("2", DYNAMIC_DEFAULT),
            "min.insync.replicas": ("1", DYNAMIC_DEFAULT)}  # KIP-966: ELR keeps it at the cluster level
        assert synonyms_of(default["log.cleaner.threads"]) == [("log.cleaner.threads", "2", DYNAMIC_DEFAULT)]
        # legacy AlterConfigs replaces the node's whole dynamic set
        assert error(legacy(wire, BROKER, "0", {"num.network.threads": "5"})) == (0, None)
        node = configs(wire, BROKER, "0")
        assert (node["num.io.threads"].value, node["num.io.threads"].config_source) == ("8", DEFAULT)
        assert (node["num.network.threads"].value, node["num.network.threads"].config_source) == ("5",
                                                                                                 DYNAMIC_BROKER)


REFUSALS = [
    # DynamicBrokerConfig.validateConfigs, answered by ConfigAdminManager with INVALID_REQUEST
    ("0", "log.retention.hours", "24", ErrorCode.INVALID_REQUEST,
     "Cannot update these configs dynamically: [log.retention.hours]"),
    ("0", "advertised.listeners", "PLAINTEXT://elsewhere:9092", ErrorCode.INVALID_REQUEST,
     "Cannot update these configs dynamically: [advertised.listeners]"),
    ("", "num.partitions", "3", ErrorCode.INVALID_REQUEST,
     "Cannot update these configs dynamically: [num.partitions]"),
    ("0", "authorizer.class.name", "org.example.Authorizer", ErrorCode.INVALID_REQUEST,
     "Cannot update these configs dynamically: [authorizer.class.name]"),
    ("0", "ssl.keystore.location", "/tmp/ks.jks", ErrorCode.INVALID_REQUEST,
     "These security configs can be dynamically updated only per-listener using the listener prefix: "
     "[ssl.keystore.location]"),
    ("", "sasl.enabled.mechanisms", "PLAIN", ErrorCode.INVALID_REQUEST,
     "Cannot update these configs at default cluster level, broker id must be specified: "
     "[sasl.enabled.mechanisms]"),
    ("0", "num.io.threads", "abc", ErrorCode.INVALID_REQUEST,
     "Invalid value abc for configuration num.io.threads: Not a number of type INT"),
    ("", "log.producer.state.batches.to.retain", "4", ErrorCode.INVALID_REQUEST,
     "Invalid value 4 for configuration log.producer.state.batches.to.retain: Value must be at least 5"),
    ("", "log.cleanup.policy", "delete,delete", ErrorCode.INVALID_REQUEST,
     "Configuration 'log.cleanup.policy' values must not be duplicated."),
    # dynamic in Kafka, not implemented here: Kafka's default only
    ("0", "listeners", "PLAINTEXT://:19092", ErrorCode.INVALID_CONFIG,
     "minibroker does not implement dynamic updates of listeners: set it at start-up"),
    ("", "max.connections.per.ip", "0", ErrorCode.INVALID_REQUEST,
     "requirement failed: max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides "
     "property is set."),
    ("", "max.connection.creation.rate", "10", ErrorCode.INVALID_CONFIG,
     "minibroker does not implement max.connection.creation.rate; it only accepts Kafka's default, '2147483647'"),
    ("0", "sasl.enabled.mechanisms", "PLAIN", ErrorCode.INVALID_CONFIG,
     "minibroker does not implement dynamic updates of sasl.enabled.mechanisms: set it at start-up"),
    ("0", "listener.name.plaintext.max.connections", "5", ErrorCode.INVALID_CONFIG,
     "minibroker does not implement dynamic listener-specific configs: listener.name.plaintext.max.connections"),
]


@pytest.mark.parametrize(("resource", "name", "value", "code", "message"), REFUSALS)
@pytest.mark.parametrize("api", ["incremental", "legacy"])
def test_broker_alter_refusals_change_nothing(broker_factory, api, resource, name, value, code, message):
    broker = broker_factory()
    with WireClient(broker.host, broker.port) as wire:
        before = {n: (c.value, c.config_source) for n, c in configs(wire, BROKER, "0").items()}
        if api == "incremental":
            response = incremental(wire, BROKER, resource, ("background.threads", SET, "12"), (name, SET, value))
        else:  # the cluster default's whole set keeps min.insync.replicas, which ELR does not let go
            elr = {"min.insync.replicas": "1"} if resource == "" else {}
            response = legacy(wire, BROKER, resource, {**elr, "background.threads": "12", name: value})
        assert error(response) == (code, message)
        assert {n: (c.value, c.config_source) for n, c in configs(wire, BROKER, "0").items()} == before
        assert list(configs(wire, BROKER, "")) == ["min.insync.replicas"]


def test_unimplemented_dynamic_config_may_be_set_to_kafkas_default(broker_factory):
    broker = broker_factory()
    with WireClient(broker.host, broker.port) as wire:
        assert error(incremental(wire, BROKER, "", ("max.connection.creation.rate", SET, "2147483647"))) == (0, None)
        described = configs(wire, BROKER, "0", ["max.connection.creation.rate"])["max.connection.creation.rate"]
        assert (described.value, described.config_source) == ("2147483647", DYNAMIC_DEFAULT)


@pytest.mark.parametrize(("name", "message"), [
    ("5", "Unexpected broker id, expected 0, but received 5"),
    ("x", "Node id must be an integer, but it is: x"),
])
def test_alter_names_only_the_receiving_node(wire, name, message):
    assert error(incremental(wire, BROKER, name, ("num.io.threads", SET, "9"))) == (ErrorCode.INVALID_REQUEST,
                                                                                   message)
    assert error(legacy(wire, BROKER, name, {"num.io.threads": "9"})) == (ErrorCode.INVALID_REQUEST, message)
    assert configs(wire, BROKER, "0", ["num.io.threads"])["num.io.threads"].value == "8"


def test_deleting_a_read_only_or_unset_config_is_no_change(wire):
    response = incremental(wire, BROKER, "0", ("log.retention.hours", DELETE, None), ("num.io.threads", DELETE, None))
    assert error(response) == (0, None)
    assert configs(wire, BROKER, "0", ["log.retention.hours"])["log.retention.hours"].value == "168"


def test_preprocess_refusals_match_kafka(wire):
    dup = incremental(wire, BROKER, "0", ("num.io.threads", SET, "9"), ("num.io.threads", SET, "10"))
    assert error(dup) == (ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
    null = incremental(wire, BROKER, "0", ("num.io.threads", SET, None), ("background.threads", SET, None))
    assert error(null) == (ErrorCode.INVALID_REQUEST, "Null value not supported for : num.io.threads, "
                                                      "background.threads")
    legacy_null = legacy(wire, BROKER, "0", {"num.io.threads": None})
    assert error(legacy_null) == (ErrorCode.INVALID_REQUEST, "Null value not supported for : num.io.threads")
    append = incremental(wire, BROKER, "0", ("num.io.threads", APPEND, "1"))
    assert error(append) == (ErrorCode.INVALID_CONFIG, "Config value append is not allowed for config key: "
                                                       "num.io.threads")
    resource = IncrementalAlterConfigsRequest.AlterConfigsResource
    twice = [resource(resource_type=BROKER, resource_name="0", configs=[resource.AlterableConfig(
        name="num.io.threads", config_operation=SET, value="9")]) for _ in range(2)]
    responses = wire.request(IncrementalAlterConfigsRequest(resources=twice, validate_only=False), 1).responses
    assert [error(r) for r in responses] == [(ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")] * 2
    assert configs(wire, BROKER, "0", ["num.io.threads"])["num.io.threads"].value == "8"


def test_validate_only_changes_nothing(wire):
    assert error(incremental(wire, BROKER, "0", ("num.io.threads", SET, "20"), validate_only=True)) == (0, None)
    assert configs(wire, BROKER, "0", ["num.io.threads"])["num.io.threads"].value == "8"


# -- topics ------------------------------------------------------------------------------------------------

TOPIC_REFUSALS = [
    ({"remote.storage.enable": "true"},
     "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage."),
    ({"segment.bytes": "1000"}, "Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576"),
    ({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"},
     "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"),
    ({"message.downconversion.enable": "true"}, "Unknown topic config name: message.downconversion.enable"),
    ({"cleanup.policy": "compact,tidy"},
     "Invalid value tidy for configuration cleanup.policy: String must be one of: compact, delete"),
    ({"leader.replication.throttled.replicas": "0-1"},
     "Invalid value 0-1 for configuration leader.replication.throttled.replicas: "
     "leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following "
     "format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."),
]


@pytest.mark.parametrize(("values", "message"), TOPIC_REFUSALS)
def test_topic_config_refusals_change_nothing(wire, values, message):
    created = unique_topic("cfg-refused")
    request = CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
        name=created, num_partitions=1, replication_factor=1, assignments=[],
        configs=[CreateTopicsRequest.CreatableTopic.CreatableTopicConfig(name=k, value=v) for k, v in values.items()])],
        timeout_ms=5000, validate_only=False)
    result = wire.request(request, 7).topics[0]
    assert (result.error_code, result.error_message) == (ErrorCode.INVALID_CONFIG, message)
    assert describe(wire, TOPIC, created).error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION

    topic = unique_topic("cfg-kept")
    create_topic(wire, topic, configs={"retention.ms": "1000"})
    ops = [(name, SET, value) for name, value in values.items()]
    assert error(incremental(wire, TOPIC, topic, *ops)) == (ErrorCode.INVALID_CONFIG, message)
    assert error(legacy(wire, TOPIC, topic, values)) == (ErrorCode.INVALID_CONFIG, message)
    described = configs(wire, TOPIC, topic)
    assert {n for n, c in described.items() if c.config_source == DYNAMIC_TOPIC} == {"retention.ms"}
    assert described["retention.ms"].value == "1000"


def test_topic_append_to_a_non_list_config_is_refused_as_the_controller_does(wire):
    topic = unique_topic("cfg-append")
    create_topic(wire, topic)
    assert error(incremental(wire, TOPIC, topic, ("retention.ms", APPEND, "5"))) == (
        ErrorCode.INVALID_CONFIG, "Can't APPEND to key retention.ms because its type is not LIST.")
    assert error(incremental(wire, TOPIC, topic, ("cleanup.policy", APPEND, "compact"))) == (0, None)
    assert configs(wire, TOPIC, topic, ["cleanup.policy"])["cleanup.policy"].value == "delete,compact"


# -- start-up (minibroker serve --set / --config) ----------------------------------------------------------


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "minibroker", "serve", "--port", "0", *args],
                          capture_output=True, text=True, timeout=30)


def test_an_authorizer_other_than_kafkas_standard_one_refuses_to_start():
    result = serve("--set", "authorizer.class.name=kafka.security.authorizer.AclAuthorizer")
    assert result.returncode == 2
    assert ("minibroker: refusing to start: authorizer.class.name: minibroker implements only "
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer") in result.stderr


@pytest.mark.parametrize("setting", [
    "alter.config.policy.class.name=org.example.Policy",
    "ssl.engine.factory.class=org.example.SslEngineFactory", "quota.window.num=5",
])
def test_unimplemented_config_refuses_to_start(setting):
    name = setting.partition("=")[0]
    result = serve("--set", setting)
    assert result.returncode == 2
    assert f"minibroker: refusing to start: minibroker does not implement {name}; it only accepts Kafka's default" \
        in result.stderr
    assert "listening" not in result.stderr


def test_unimplemented_config_in_properties_file_refuses_to_start(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text("num.io.threads=4\nsasl.kerberos.service.name=kafka\n")
    result = serve("--config", str(path))
    assert result.returncode == 2
    assert "minibroker does not implement sasl.kerberos.service.name; it only accepts Kafka's default, None" \
        in result.stderr


def test_inert_and_retention_synonym_configs_start_and_describe_as_static(broker_factory):
    broker = broker_factory("num.io.threads=4", "log.retention.hours=1", "log.dirs=/var/lib/kafka")
    with WireClient(broker.host, broker.port) as wire:
        node = configs(wire, BROKER, "0")
        assert (node["num.io.threads"].value, node["num.io.threads"].config_source) == ("4", STATIC)
        assert (node["log.retention.hours"].value, node["log.retention.hours"].config_source) == ("1", STATIC)
        assert (node["log.dirs"].value, node["log.dirs"].config_source) == ("/var/lib/kafka", STATIC)
        topic = unique_topic("cfg-hours")
        create_topic(wire, topic)
        retention = configs(wire, TOPIC, topic, ["retention.ms"])["retention.ms"]
        assert (retention.value, retention.config_source, synonyms_of(retention)) == ("3600000", DEFAULT, [])


# -- real clients ------------------------------------------------------------------------------------------


def test_confluent_admin_sees_kafkas_configs_and_refusals(broker):
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
    topic = unique_topic("cfg-confluent")
    with WireClient(broker.host, broker.port) as wire:
        create_topic(wire, topic)
    topic_resource = ConfigResource(ResourceType.TOPIC, topic)
    described = admin.describe_configs([topic_resource])[topic_resource].result(10)
    assert described["flush.ms"].value == LONG_MAX
    assert set(described) == KAFKA_TOPIC_CONFIGS

    node = ConfigResource(ResourceType.BROKER, "0")
    broker_configs = admin.describe_configs([node])[node].result(10)
    assert broker_configs["listeners"].value == f"PLAINTEXT://127.0.0.1:{broker.port}"
    assert broker_configs["listeners"].is_read_only is False
    assert broker_configs["advertised.listeners"].value is None
    assert broker_configs["advertised.listeners"].is_read_only is True
    assert broker_configs["ssl.keystore.password"].is_sensitive is True

    alter = ConfigResource(ResourceType.BROKER, "0", incremental_configs=[
        ConfigEntry("log.retention.hours", "1", incremental_operation=AlterConfigOpType.SET)])
    with pytest.raises(KafkaException) as info:
        admin.incremental_alter_configs([alter])[alter].result(10)
    assert info.value.args[0].name() == "INVALID_REQUEST"
    assert info.value.args[0].str() == "Cannot update these configs dynamically: [log.retention.hours]"
    unchanged = admin.describe_configs([node])[node].result(10)["log.retention.hours"]
    assert (unchanged.value, unchanged.source) == ("168", DEFAULT)


@pytest.mark.java
def test_java_admin_sees_kafkas_configs_and_refusals(tmp_path, broker):
    from tests.integration.clients import JavaClients, ok

    java = JavaClients(tmp_path)
    topic = unique_topic("cfg-java")
    results = java.scenario(broker, "Kip1269Scenario", (
        f"create {topic} 1", f"config topic {topic} flush.ms", "config broker 0 listeners",
        "config broker 0 advertised.listeners", "set broker 0 log.retention.hours 1",
        "set broker - listeners PLAINTEXT://:19092", "config broker 0 log.retention.hours",
        "set broker 0 num.io.threads 6", "config broker 0 num.io.threads",
    ), timeout=90)
    create, flush, listeners, advertised, hours, default_listeners, hours_after, threads, threads_after = results
    ok(create)
    assert (ok(flush)["value"], flush["source"], flush["synonyms"]) == (LONG_MAX, "DEFAULT_CONFIG", [])
    assert (ok(listeners)["value"], listeners["source"], listeners["read_only"]) == (
        f"PLAINTEXT://127.0.0.1:{broker.port}", "STATIC_BROKER_CONFIG", False)
    assert (ok(advertised)["value"], advertised["source"], advertised["read_only"]) == (None, "DEFAULT_CONFIG", True)
    assert (hours["ok"], hours["error"], hours["message"]) == (
        False, "InvalidRequestException", "Cannot update these configs dynamically: [log.retention.hours]")
    assert (default_listeners["ok"], default_listeners["error"], default_listeners["message"]) == (
        False, "InvalidRequestException",
        "Cannot update these configs at default cluster level, broker id must be specified: [listeners]")
    assert (ok(hours_after)["value"], hours_after["source"]) == ("168", "DEFAULT_CONFIG")
    ok(threads)
    assert (ok(threads_after)["value"], threads_after["source"]) == ("6", "DYNAMIC_BROKER_CONFIG")


@pytest.fixture(scope="module")
def two_nodes() -> Any:
    """Two nodes behind a proxy: [(node id, host, port)] of their listeners."""
    process = start_broker(extra_args=("--nodes", "2",
                                       "--advertised-listeners", "proxy.example:19092,proxy.example:19093"))
    second = re.search(r"minibroker node 1 listening on ([\d.]+):(\d+)", process.log_text())
    assert second is not None, process.log_text()
    yield [(0, process.host, process.port), (1, second[1], int(second[2]))]
    process.stop()


def test_each_node_describes_its_own_listeners_and_ids(two_nodes):
    for node_id, host, port in two_nodes:
        with WireClient(host, port) as wire:
            node = configs(wire, BROKER, str(node_id))
            other = describe(wire, BROKER, str(1 - node_id))
        assert (node["node.id"].value, node["broker.id"].value) == (str(node_id), str(node_id))
        assert (node["listeners"].value, node["listeners"].config_source) == (f"PLAINTEXT://{host}:{port}", STATIC)
        assert (node["advertised.listeners"].value, node["advertised.listeners"].config_source) == (
            f"PLAINTEXT://proxy.example:{19092 + node_id}", STATIC)
        assert (other.error_code, other.error_message) == (
            ErrorCode.INVALID_REQUEST, f"Unexpected broker id, expected {node_id} or empty string, but received "
                                       f"{1 - node_id}")


def test_a_later_node_takes_only_configs_without_effect(two_nodes):
    """The core reads configs as the first node has them, so another node refuses to hold its own values."""
    _node_id, host, port = two_nodes[1]
    with WireClient(host, port) as wire:
        refused = incremental(wire, BROKER, "1", ("log.producer.state.batches.to.retain", SET, "15"))
        assert error(refused) == (ErrorCode.INVALID_CONFIG, "minibroker applies log.producer.state.batches.to.retain "
                                                            "to the whole cluster: set it on broker 0 or as the "
                                                            "cluster default")
        assert error(incremental(wire, BROKER, "1", ("num.io.threads", SET, "3"))) == (0, None)
        node = configs(wire, BROKER, "1", ["num.io.threads", "log.producer.state.batches.to.retain"])
    assert (node["num.io.threads"].value, node["num.io.threads"].config_source) == ("3", DYNAMIC_BROKER)
    assert node["log.producer.state.batches.to.retain"].config_source == DEFAULT
