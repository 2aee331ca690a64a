"""The one config registry: every broker and topic config is declared here once.

CLI flags, `server.properties`, CreateTopics, DescribeConfigs, AlterConfigs and
IncrementalAlterConfigs all go through `ConfigDef.parse`, so a bound is
enforced everywhere at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from ..protocol.errors import ErrorCode, KafkaError

LONG_MAX = 2**63 - 1
INT_MAX = 2**31 - 1


class ConfigType(IntEnum):
    """Kafka's DescribeConfigs config types."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigSource(IntEnum):
    """Kafka's DescribeConfigs config sources."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6


class ConfigError(KafkaError):
    """An invalid config name or value (INVALID_CONFIG)."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.INVALID_CONFIG, message)


@dataclass(frozen=True)
class ConfigDef:
    """One config: its name, type, default, bounds and where it may be set."""

    name: str
    type: ConfigType
    default: Any
    doc: str = ""
    minimum: int | float | None = None
    maximum: int | float | None = None
    choices: tuple[str, ...] | None = None
    dynamic: bool = False  # broker configs: settable through AlterConfigs
    broker_synonym: str | None = None  # topic configs: the broker config they fall back to

    def parse(self, raw: Any) -> Any:
        """The typed value of `raw` (a string or a Python value); ConfigError if invalid."""
        value = raw.strip() if isinstance(raw, str) else raw
        try:
            if self.type in (ConfigType.INT, ConfigType.LONG, ConfigType.SHORT):
                if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                    raise ValueError
                parsed: Any = int(value)
                limit = INT_MAX if self.type is ConfigType.INT else LONG_MAX
                if not -limit - 1 <= parsed <= limit:
                    raise ValueError
            elif self.type is ConfigType.DOUBLE:
                parsed = float(value)
            elif self.type is ConfigType.BOOLEAN:
                if isinstance(value, bool):
                    parsed = value
                elif str(value).lower() in ("true", "false"):
                    parsed = str(value).lower() == "true"
                else:
                    raise ValueError
            elif self.type is ConfigType.LIST:
                parsed = [item.strip() for item in str(value).split(",") if item.strip()]
            else:
                parsed = str(value)
        except (TypeError, ValueError):
            kind = {ConfigType.BOOLEAN: "a boolean"}.get(self.type, f"a valid {self.type.name.lower()}")
            raise ConfigError(
                f"Invalid value {raw} for configuration {self.name}: Not {kind}"
            ) from None
        if self.minimum is not None and parsed < self.minimum:
            raise ConfigError(
                f"Invalid value {raw} for configuration {self.name}: Value must be at least {self.minimum}"
            )
        if self.maximum is not None and parsed > self.maximum:
            raise ConfigError(
                f"Invalid value {raw} for configuration {self.name}: Value must be no more than {self.maximum}"
            )
        if self.choices is not None:
            items = parsed if isinstance(parsed, list) else [parsed]
            for item in items:
                if item not in self.choices:
                    raise ConfigError(
                        f"Invalid value {raw} for configuration {self.name}: "
                        f"String must be one of: {', '.join(self.choices)}"
                    )
        return parsed

    def render(self, value: Any) -> str | None:
        """The string DescribeConfigs shows for `value`."""
        if value is None:
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, list):
            return ",".join(value)
        return str(value)


_I, _L, _S, _B, _D, _LS = (
    ConfigType.INT, ConfigType.LONG, ConfigType.STRING, ConfigType.BOOLEAN, ConfigType.DOUBLE, ConfigType.LIST,
)
_TIMESTAMP_TYPES = ("CreateTime", "LogAppendTime")
_COMPRESSION = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")

BROKER_CONFIGS: dict[str, ConfigDef] = {c.name: c for c in [
    ConfigDef("node.id", _I, 0, "The node id of this broker", minimum=0),
    ConfigDef("broker.id", _I, 0, "Alias of node.id", minimum=0),
    ConfigDef("num.partitions", _I, 1, "Default number of partitions for new topics", minimum=1, dynamic=False),
    ConfigDef("default.replication.factor", _I, 1, "Default replication factor for new topics", minimum=1),
    ConfigDef("auto.create.topics.enable", _B, True, "Create a topic when Metadata or Produce names an unknown one"),
    ConfigDef("delete.topic.enable", _B, True, "Allow DeleteTopics"),
    ConfigDef("message.max.bytes", _I, 1048588, "Largest record batch size allowed", minimum=0, dynamic=True),
    ConfigDef("log.retention.ms", _L, 604800000, "How long to keep a batch (-1: forever)", minimum=-1,
              dynamic=True),
    ConfigDef("log.retention.bytes", _L, -1, "Largest partition size before old batches go (-1: no limit)",
              dynamic=True),
    ConfigDef("log.retention.check.interval.ms", _L, 300000, "How often retention runs", minimum=1),
    ConfigDef("log.cleanup.policy", _LS, ["delete"], "delete or compact", choices=("delete", "compact"),
              dynamic=True),
    ConfigDef("log.segment.bytes", _I, 1073741824, "Segment size; a batch set larger than this is refused",
              minimum=14, dynamic=True),
    ConfigDef("log.segment.ms", _L, 604800000, "Segment roll time", minimum=1, dynamic=True),
    ConfigDef("compression.type", _S, "producer", "Codec the broker stores batches with", choices=_COMPRESSION,
              dynamic=True),
    ConfigDef("log.message.timestamp.type", _S, "CreateTime", "CreateTime or LogAppendTime",
              choices=_TIMESTAMP_TYPES, dynamic=True),
    ConfigDef("log.message.timestamp.before.max.ms", _L, LONG_MAX, "How far in the past a record timestamp may be",
              minimum=0, dynamic=True),
    ConfigDef("log.message.timestamp.after.max.ms", _L, 3600000, "How far in the future a record timestamp may be",
              minimum=0, dynamic=True),
    ConfigDef("min.insync.replicas", _I, 1, "Replicas that must acknowledge an acks=all write", minimum=1,
              dynamic=True),
    ConfigDef("unclean.leader.election.enable", _B, False, "Allow out-of-sync replicas to lead", dynamic=True),
    ConfigDef("log.cleaner.delete.retention.ms", _L, 86400000, "Tombstone retention", minimum=0, dynamic=True),
    ConfigDef("log.cleaner.min.compaction.lag.ms", _L, 0, "Minimum compaction lag", minimum=0, dynamic=True),
    ConfigDef("log.cleaner.max.compaction.lag.ms", _L, LONG_MAX, "Maximum compaction lag", minimum=1,
              dynamic=True),
    ConfigDef("log.cleaner.min.cleanable.ratio", _D, 0.5, "Dirty ratio that triggers compaction", minimum=0,
              maximum=1, dynamic=True),
    ConfigDef("log.index.interval.bytes", _I, 4096, "Index interval", minimum=0, dynamic=True),
    ConfigDef("log.index.size.max.bytes", _I, 10485760, "Index size", minimum=4, dynamic=True),
    ConfigDef("log.flush.interval.messages", _L, LONG_MAX, "Flush interval (messages)", minimum=1, dynamic=True),
    ConfigDef("log.flush.interval.ms", _L, None, "Flush interval (ms)", dynamic=True),
    ConfigDef("log.message.downconversion.enable", _B, True, "Down-conversion (unused)", dynamic=True),
    ConfigDef("log.preallocate", _B, False, "Preallocate segments", dynamic=True),
    ConfigDef("log.segment.delete.delay.ms", _L, 60000, "Delay before a segment is deleted", minimum=0,
              dynamic=True),
    ConfigDef("log.local.retention.ms", _L, -2, "Local retention (tiered storage)", minimum=-2, dynamic=True),
    ConfigDef("log.local.retention.bytes", _L, -2, "Local retention bytes (tiered storage)", minimum=-2,
              dynamic=True),
    ConfigDef("socket.request.max.bytes", _I, 104857600, "Largest request frame accepted", minimum=1),
    ConfigDef("log.producer.state.batches.to.retain", _I, 5,
              "Batches kept per idempotent producer and partition for duplicate detection (KIP-1269)",
              minimum=5, dynamic=True),
    ConfigDef("producer.id.expiration.ms", _I, 86400000,
              "Time a producer id is kept after its last write (KIP-854)", minimum=1, dynamic=True),
    ConfigDef("producer.id.expiration.check.interval.ms", _I, 600000,
              "How often expired producer ids are removed", minimum=1),
    ConfigDef("transaction.max.timeout.ms", _I, 900000, "Largest transaction timeout a producer may ask for",
              minimum=1),
    ConfigDef("transaction.abort.timed.out.transaction.cleanup.interval.ms", _I, 10000,
              "How often transactions past their timeout are aborted", minimum=1),
    ConfigDef("transactional.id.expiration.ms", _I, 604800000,
              "Time an idle transactional id is kept", minimum=1, dynamic=True),
    ConfigDef("transaction.remove.expired.transaction.cleanup.interval.ms", _I, 3600000,
              "How often expired transactional ids are removed", minimum=1),
    ConfigDef("transaction.partition.verification.enable", _B, True,
              "Check with the coordinator that a partition is in the transaction before a transactional write",
              dynamic=True),
    ConfigDef("group.min.session.timeout.ms", _I, 6000, "Shortest session timeout a group member may ask for",
              minimum=0),
    ConfigDef("group.max.session.timeout.ms", _I, 1800000, "Longest session timeout a group member may ask for",
              minimum=0),
    ConfigDef("group.initial.rebalance.delay.ms", _I, 0,
              "Wait before the first rebalance of an empty group completes (Kafka's default is 3000; 0 here)",
              minimum=0),
    ConfigDef("group.max.size", _I, INT_MAX, "Most members a classic group may have", minimum=1),
    ConfigDef("offsets.retention.minutes", _I, 10080, "How long committed offsets of an empty group are kept",
              minimum=1),
    ConfigDef("offsets.retention.check.interval.ms", _L, 600000, "How often expired offsets are removed",
              minimum=1),
    ConfigDef("offset.metadata.max.bytes", _I, 4096, "Largest metadata string an offset commit may carry",
              minimum=0),
]}

TOPIC_CONFIGS: dict[str, ConfigDef] = {c.name: c for c in [
    ConfigDef("cleanup.policy", _LS, ["delete"], "delete or compact", choices=("delete", "compact"),
              broker_synonym="log.cleanup.policy"),
    ConfigDef("compression.type", _S, "producer", "Codec batches are stored with", choices=_COMPRESSION,
              broker_synonym="compression.type"),
    ConfigDef("max.message.bytes", _I, 1048588, "Largest record batch size allowed", minimum=0,
              broker_synonym="message.max.bytes"),
    ConfigDef("retention.ms", _L, 604800000, "How long to keep a batch (-1: forever)", minimum=-1,
              broker_synonym="log.retention.ms"),
    ConfigDef("retention.bytes", _L, -1, "Largest partition size (-1: no limit)",
              broker_synonym="log.retention.bytes"),
    ConfigDef("segment.bytes", _I, 1073741824, "Segment size", minimum=14, broker_synonym="log.segment.bytes"),
    ConfigDef("segment.ms", _L, 604800000, "Segment roll time", minimum=1, broker_synonym="log.segment.ms"),
    ConfigDef("message.timestamp.type", _S, "CreateTime", "CreateTime or LogAppendTime", choices=_TIMESTAMP_TYPES,
              broker_synonym="log.message.timestamp.type"),
    ConfigDef("message.timestamp.before.max.ms", _L, LONG_MAX, "How far in the past a timestamp may be",
              minimum=0, broker_synonym="log.message.timestamp.before.max.ms"),
    ConfigDef("message.timestamp.after.max.ms", _L, 3600000, "How far in the future a timestamp may be",
              minimum=0, broker_synonym="log.message.timestamp.after.max.ms"),
    ConfigDef("min.insync.replicas", _I, 1, "Replicas that must acknowledge acks=all", minimum=1,
              broker_synonym="min.insync.replicas"),
    ConfigDef("unclean.leader.election.enable", _B, False, "Allow out-of-sync leaders",
              broker_synonym="unclean.leader.election.enable"),
    ConfigDef("delete.retention.ms", _L, 86400000, "Tombstone retention", minimum=0,
              broker_synonym="log.cleaner.delete.retention.ms"),
    ConfigDef("min.compaction.lag.ms", _L, 0, "Minimum compaction lag", minimum=0,
              broker_synonym="log.cleaner.min.compaction.lag.ms"),
    ConfigDef("max.compaction.lag.ms", _L, LONG_MAX, "Maximum compaction lag", minimum=1,
              broker_synonym="log.cleaner.max.compaction.lag.ms"),
    ConfigDef("min.cleanable.dirty.ratio", _D, 0.5, "Dirty ratio for compaction", minimum=0, maximum=1,
              broker_synonym="log.cleaner.min.cleanable.ratio"),
    ConfigDef("index.interval.bytes", _I, 4096, "Index interval", minimum=0,
              broker_synonym="log.index.interval.bytes"),
    ConfigDef("segment.index.bytes", _I, 10485760, "Index size", minimum=4,
              broker_synonym="log.index.size.max.bytes"),
    ConfigDef("flush.messages", _L, LONG_MAX, "Flush interval (messages)", minimum=1,
              broker_synonym="log.flush.interval.messages"),
    ConfigDef("flush.ms", _L, LONG_MAX, "Flush interval (ms)", minimum=0, broker_synonym="log.flush.interval.ms"),
    ConfigDef("preallocate", _B, False, "Preallocate segments", broker_synonym="log.preallocate"),
    ConfigDef("file.delete.delay.ms", _L, 60000, "Delay before a segment is deleted", minimum=0,
              broker_synonym="log.segment.delete.delay.ms"),
    ConfigDef("segment.jitter.ms", _L, 0, "Segment roll jitter", minimum=0),
    ConfigDef("local.retention.ms", _L, -2, "Local retention", minimum=-2, broker_synonym="log.local.retention.ms"),
    ConfigDef("local.retention.bytes", _L, -2, "Local retention bytes", minimum=-2,
              broker_synonym="log.local.retention.bytes"),
    ConfigDef("message.downconversion.enable", _B, True, "Down-conversion (unused)",
              broker_synonym="log.message.downconversion.enable"),
    ConfigDef("follower.replication.throttled.replicas", _LS, [], "Throttled follower replicas"),
    ConfigDef("leader.replication.throttled.replicas", _LS, [], "Throttled leader replicas"),
    ConfigDef("remote.storage.enable", _B, False, "Tiered storage"),
    ConfigDef("producer.state.batches.to.retain", _I, 5,
              "Batches kept per idempotent producer and partition for duplicate detection (KIP-1269)",
              minimum=5, broker_synonym="log.producer.state.batches.to.retain"),
]}


def broker_config_def(name: str) -> ConfigDef:
    """The definition of broker config `name`; ConfigError if unknown."""
    try:
        return BROKER_CONFIGS[name]
    except KeyError:
        raise ConfigError(f"Unknown broker config name: {name}") from None


def topic_config_def(name: str) -> ConfigDef:
    """The definition of topic config `name`; ConfigError if unknown."""
    try:
        return TOPIC_CONFIGS[name]
    except KeyError:
        raise ConfigError(f"Unknown topic config name: {name}") from None


def parse_topic_configs(raw: dict[str, str | None]) -> dict[str, Any]:
    """Validate a whole set of topic config overrides; ConfigError on the first bad one."""
    return {name: topic_config_def(name).parse(value) for name, value in raw.items() if value is not None}


@dataclass
class ConfigEntry:
    """A resolved config value with the source it came from and its synonyms."""

    name: str
    value: Any
    source: ConfigSource
    definition: ConfigDef
    synonyms: list[tuple[str, Any, ConfigSource]] = field(default_factory=list)

    @property
    def rendered(self) -> str | None:
        return self.definition.render(self.value)


# The configs KIP-1269 adds: a cluster speaking as an older Kafka release does not know them.
KIP1269_CONFIGS = frozenset({"producer.state.batches.to.retain", "log.producer.state.batches.to.retain"})


class BrokerConfig:
    """Broker config values: static (start-up), dynamic cluster default, dynamic per node.

    `unknown` names configs this cluster's release lacks (KIP1269_CONFIGS on an older profile):
    they are refused as unknown and never listed.
    """

    def __init__(self, static: dict[str, Any] | None = None, unknown: frozenset[str] = frozenset()) -> None:
        self.unknown = unknown
        self.static: dict[str, Any] = {}
        self.dynamic_default: dict[str, Any] = {}
        self.dynamic_node: dict[str, Any] = {}
        for name, raw in (static or {}).items():
            self.static[name] = self.broker_def(name).parse(raw)

    def broker_def(self, name: str) -> ConfigDef:
        """The definition of broker config `name`; ConfigError if this cluster does not know it."""
        if name in self.unknown:
            raise ConfigError(f"Unknown broker config name: {name}")
        return broker_config_def(name)

    def topic_def(self, name: str) -> ConfigDef:
        """The definition of topic config `name`; ConfigError if this cluster does not know it."""
        if name in self.unknown:
            raise ConfigError(f"Unknown topic config name: {name}")
        return topic_config_def(name)

    def parse_topic_configs(self, raw: dict[str, str | None]) -> dict[str, Any]:
        """Validate a whole set of topic config overrides; ConfigError on the first bad one."""
        return {name: self.topic_def(name).parse(value) for name, value in raw.items() if value is not None}

    def broker_names(self) -> list[str]:
        """Every broker config this cluster knows, sorted."""
        return sorted(set(BROKER_CONFIGS) - self.unknown)

    def topic_names(self) -> list[str]:
        """Every topic config this cluster knows, sorted."""
        return sorted(set(TOPIC_CONFIGS) - self.unknown)

    @property
    def node_id(self) -> int:
        """The first node's id: `node.id`, or its older alias `broker.id`."""
        return int(self["node.id"] if "node.id" in self.static else self["broker.id"])

    def __getitem__(self, name: str) -> Any:
        for layer in (self.dynamic_node, self.dynamic_default, self.static):
            if name in layer:
                return layer[name]
        return BROKER_CONFIGS[name].default

    def layers(self, name: str, per_node: bool) -> list[tuple[str, Any, ConfigSource]]:
        """Every layer that sets `name`, strongest first (the synonyms DescribeConfigs lists)."""
        found = []
        if per_node and name in self.dynamic_node:
            found.append((name, self.dynamic_node[name], ConfigSource.DYNAMIC_BROKER_CONFIG))
        if name in self.dynamic_default:
            found.append((name, self.dynamic_default[name], ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG))
        if name in self.static:
            found.append((name, self.static[name], ConfigSource.STATIC_BROKER_CONFIG))
        found.append((name, BROKER_CONFIGS[name].default, ConfigSource.DEFAULT_CONFIG))
        return found

    def describe(self, name: str, per_node: bool = True) -> ConfigEntry:
        """Resolve broker config `name` with its synonyms."""
        definition = BROKER_CONFIGS[name]
        layers = self.layers(name, per_node)
        value, source = layers[0][1], layers[0][2]
        if not per_node:
            # the cluster-default resource ("") shows only its own layer, as Kafka does
            layers = [layer for layer in layers if layer[2] is ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
        return ConfigEntry(name, value, source, definition, layers)

    def describe_topic(self, name: str, overrides: dict[str, Any]) -> ConfigEntry:
        """Resolve topic config `name` given a topic's overrides."""
        definition = TOPIC_CONFIGS[name]
        synonyms: list[tuple[str, Any, ConfigSource]] = []
        if name in overrides:
            synonyms.append((name, overrides[name], ConfigSource.DYNAMIC_TOPIC_CONFIG))
        if definition.broker_synonym is not None:
            # as Kafka's ConfigHelper: every broker layer, the broker default included
            synonyms.extend(self.layers(definition.broker_synonym, per_node=True))
        if synonyms:
            value, source = synonyms[0][1], synonyms[0][2]
        else:
            value, source = definition.default, ConfigSource.DEFAULT_CONFIG
        return ConfigEntry(name, value, source, definition, synonyms)

    def topic_value(self, name: str, overrides: dict[str, Any]) -> Any:
        """The effective value of topic config `name` for a topic with `overrides`."""
        if name in overrides:
            return overrides[name]
        synonym = TOPIC_CONFIGS[name].broker_synonym
        if synonym is not None:
            return self[synonym]
        return TOPIC_CONFIGS[name].default

    def set_dynamic(self, name: str, raw: Any, *, node_level: bool) -> None:
        """Set a dynamic broker config; ConfigError if unknown, static-only or invalid."""
        definition = self.broker_def(name)
        if not definition.dynamic:
            raise ConfigError(f"Cannot update these configs dynamically: {{{name}}}")
        (self.dynamic_node if node_level else self.dynamic_default)[name] = definition.parse(raw)

    def delete_dynamic(self, name: str, *, node_level: bool) -> None:
        """Remove a dynamic broker config so the next layer shows through."""
        definition = self.broker_def(name)
        if not definition.dynamic:
            raise ConfigError(f"Cannot update these configs dynamically: {{{name}}}")
        (self.dynamic_node if node_level else self.dynamic_default).pop(name, None)


def load_properties(text: str) -> dict[str, str]:
    """Parse a Java-style `.properties` file (key=value or key: value, # and ! comments)."""
    result: dict[str, str] = {}
    pending = ""
    for raw_line in text.splitlines():
        line = raw_line.strip()
        if not pending and (not line or line.startswith(("#", "!"))):
            continue
        if line.endswith("\\"):
            pending += line[:-1]
            continue
        line = pending + line
        pending = ""
        for index, char in enumerate(line):
            if char in "=:":
                result[line[:index].strip()] = line[index + 1 :].strip()
                break
        else:
            result[line] = ""
    return result
