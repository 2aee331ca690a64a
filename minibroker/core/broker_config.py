"""A cluster's broker, topic and group config values, as Kafka's layers, describe and update paths give them.

Mirrors `KafkaConfig` and `DynamicBrokerConfig` (the layers a broker config is read from: per-node dynamic,
cluster-default dynamic, static, default; synonyms; the dynamic-update checks), `ConfigHelper` (DescribeConfigs'
sources, synonyms and order), `ConfigAdminManager` (AlterConfigs and IncrementalAlterConfigs on a broker),
`LogConfig.validate` (topic overrides) and `GroupConfig`/`GroupConfigManager` (group configs).

Over 500 lines for a reason: `BrokerConfig` is one object whose layers every method reads and writes, and
every caller (core, apis, server) holds that one object; splitting its methods across modules would only
spread one state over several files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from ..protocol.errors import ErrorCode, KafkaError
from .acls import STANDARD_AUTHORIZER, AclError, parse_super_users
from .config_def import (
    NO_DEFAULT,
    ConfigDef,
    ConfigError,
    ConfigType,
    Support,
    UpdateMode,
    java_set,
    refuse_unsupported,
    scala_hash_map_order,
)
from .config_registry import (
    AUTHORIZER_CONFIGS,
    BROKER_CONFIGS,
    GROUP_CONFIGS,
    LISTENER_ONLY_SECURITY_CONFIGS,
    PER_NODE_CONFIGS,
    STARTUP_ONLY,
    TOPIC_CONFIGS,
    release_configs,
)
from .listeners import ListenerConfigError, advertised_listeners, parse_listeners, parse_protocol_map

LONG_MAX = 2**63 - 1
MIN_INSYNC_REPLICAS = "min.insync.replicas"
LISTENER_PREFIX = "listener.name."
DIFFERENCE_MAX_MS = "message.timestamp.difference.max.ms"  # Kafka 3.9's; 4.0 removed it


class ConfigSource(IntEnum):
    """Kafka's DescribeConfigs config sources."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    DYNAMIC_CLIENT_METRICS_CONFIG = 7
    DYNAMIC_GROUP_CONFIG = 8


# KafkaConfig.validateValues: a limit of 0 per IP only makes sense with overrides that let some in
ZERO_CONNECTIONS_PER_IP = ("requirement failed: max.connections.per.ip can be set to zero only if "
                           "max.connections.per.ip.overrides property is set.")

# GroupConfig.validateValues: (group config, broker config bounding it from below, from above)
_GROUP_BOUNDS = (
    ("consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms",
     "group.consumer.max.heartbeat.interval.ms"),
    ("consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
    ("consumer.assignment.interval.ms", "group.consumer.min.assignment.interval.ms",
     "group.consumer.max.assignment.interval.ms"),
    ("share.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"),
    ("share.session.timeout.ms", "group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"),
    ("share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms",
     "group.share.max.record.lock.duration.ms"),
    ("share.delivery.count.limit", "group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit"),
    ("share.partition.max.record.locks", "group.share.min.partition.max.record.locks",
     "group.share.max.partition.max.record.locks"),
    ("share.assignment.interval.ms", "group.share.min.assignment.interval.ms",
     "group.share.max.assignment.interval.ms"),
    ("streams.heartbeat.interval.ms", "group.streams.min.heartbeat.interval.ms",
     "group.streams.max.heartbeat.interval.ms"),
    ("streams.session.timeout.ms", "group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"),
    ("streams.num.standby.replicas", None, "group.streams.max.standby.replicas"),
)
# GroupConfig.validateValues: (session timeout, heartbeat interval) that must be greater than it
_GROUP_SESSION_OVER_HEARTBEAT = (("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"),
                                 ("share.session.timeout.ms", "share.heartbeat.interval.ms"),
                                 ("streams.session.timeout.ms", "streams.heartbeat.interval.ms"))

# IncrementalAlterConfigs operations (AlterConfigOp.OpType)
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def _broker_synonym_names(name: str) -> list[str]:
    """DynamicBrokerConfig.brokerConfigSynonyms: the names one broker setting may be given by, strongest first."""
    for group in (["log.roll.ms", "log.roll.hours"], ["log.roll.jitter.ms", "log.roll.jitter.hours"],
                  ["log.retention.ms", "log.retention.minutes", "log.retention.hours"]):
        if name in group:
            return group
    if name == "log.flush.interval.ms":  # log.flush.scheduler.interval.ms is its default
        return ["log.flush.interval.ms", "log.flush.scheduler.interval.ms"]
    return [name]


@dataclass
class ConfigEntry:
    """A resolved config value with the source it came from and its synonyms (strongest first)."""

    name: str
    value: Any
    source: ConfigSource
    definition: ConfigDef
    synonyms: list[tuple[str, Any, ConfigSource]] = field(default_factory=list)
    read_only: bool = False

    @property
    def rendered(self) -> str | None:
        return None if self.definition.sensitive else self.definition.render(self.value)

    def rendered_synonyms(self) -> list[tuple[str, str | None, ConfigSource]]:
        """The synonyms as DescribeConfigs lists them (no values for sensitive configs)."""
        return [(name, None if self.definition.sensitive else _definition(name, self.definition).render(value), source)
                for name, value, source in self.synonyms]


def _definition(name: str, fallback: ConfigDef) -> ConfigDef:
    return BROKER_CONFIGS.get(name) or TOPIC_CONFIGS.get(name) or GROUP_CONFIGS.get(name) or fallback


Layer = dict[str, Any]


class BrokerConfig:
    """Broker config values in Kafka's layers: per-node dynamic, cluster-default dynamic, static, default.

    `profile` is the cluster's release profile (`--as-version`): its release's configs are the ones known,
    described, validated and defaulted (release_configs). `unknown` names further configs this cluster's
    release lacks (KIP1269_CONFIGS on an older profile); with the configs the release's overlay removes, they
    are refused as unknown and never listed. `elr`: the release finalizes eligible.leader.replicas.version 1
    (KIP-966), so the cluster default holds min.insync.replicas, which cannot be removed.
    """

    def __init__(self, static: Mapping[str, Any] | None = None, unknown: frozenset[str] = frozenset(),
                 elr: bool = False, profile: str | None = None) -> None:
        configs = release_configs(profile)
        self.profile = profile
        self.broker_configs = configs.broker
        self.topic_configs = configs.topic
        self.unknown = unknown | configs.removed
        self._hash_ordered = configs.hash_ordered
        self.elr = elr
        self.static: Layer = {}
        self.dynamic_default: Layer = {}
        self.dynamic_node: dict[int, Layer] = {}
        self.groups: dict[str, Layer] = {}  # GROUP resources' configs, by group id (set or not, a group may exist)
        self.version = 0  # bumped by every change of a dynamic layer, so readers can cache effective values
        # `listener.name.<listener>.<config>`: a config for one listener only (Kafka's ListenerName.configPrefix)
        self.listener_static: dict[str, Layer] = {}
        for name, raw in (static or {}).items():
            if name.startswith(LISTENER_PREFIX):
                self._add_listener_config(name, raw)
                continue
            definition = self.broker_def(name)
            value = definition.parse(raw)
            refuse_unsupported(definition, value)
            self.static[name] = value
        queued, request_max = self["queued.max.request.bytes"], self["socket.request.max.bytes"]
        if 0 < queued < request_max:  # KafkaConfig.validateValues
            raise ConfigError("requirement failed: queued.max.request.bytes must be larger or equal to "
                              "socket.request.max.bytes")
        if self["max.connections.per.ip"] == 0 and not self["max.connections.per.ip.overrides"]:
            raise ConfigError(ZERO_CONNECTIONS_PER_IP)
        self._validate_authorizer()
        try:
            self.protocol_map = parse_protocol_map(self["listener.security.protocol.map"])
            # without `listeners`, the --host/--port shorthand's one PLAINTEXT listener: Kafka's default value
            self.listeners = parse_listeners(self["listeners"], self.protocol_map) if "listeners" in self.static else []
            advertised = self.static.get("advertised.listeners")
            self.advertised = advertised_listeners(
                advertised, self.listeners or parse_listeners(self["listeners"], self.protocol_map),
                self.protocol_map) if advertised else []
        except ListenerConfigError as exc:
            raise ConfigError(str(exc)) from None
        # the first node's id: `node.id`, or its older alias `broker.id`, else 0
        node_id = self.static["node.id"] if "node.id" in self.static else self.static.get("broker.id", 0)
        self._node_id = int(node_id)
        if elr:  # the controller writes its min.insync.replicas as the cluster's when ELR is enabled at format
            self.dynamic_default[MIN_INSYNC_REPLICAS] = self[MIN_INSYNC_REPLICAS]

    def _validate_authorizer(self) -> None:
        """Kafka instantiates `authorizer.class.name` at start-up and fails on a class it cannot load."""
        name = self["authorizer.class.name"]
        if name and name != STANDARD_AUTHORIZER:
            raise ConfigError(f"authorizer.class.name: minibroker implements only {STANDARD_AUTHORIZER} "
                              f"(Kafka's KRaft authorizer), not {name}")
        try:
            parse_super_users(self["super.users"])
        except AclError as exc:
            raise ConfigError(f"super.users: {exc}") from None

    def listener_config_def(self, name: str) -> tuple[str, str, ConfigDef]:
        """(listener, config, definition) of `listener.name.<listener>.<config>`, parsed as <config> is (a SASL
        mechanism may precede `sasl.jaas.config`, as in `listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config`)."""
        listener, _, config = name[len(LISTENER_PREFIX):].partition(".")
        base = config
        mechanism, _, rest = config.partition(".")
        if rest == "sasl.jaas.config" and mechanism:
            base = rest
        if not listener or base not in self.broker_configs or base in self.unknown:
            raise ConfigError(f"Unknown broker config name: {name}")
        return listener, config, self.broker_def(base)

    def _add_listener_config(self, name: str, raw: Any) -> None:
        """Keep `listener.name.<listener>.<config>` for that listener (see `listener_value`)."""
        listener, config, definition = self.listener_config_def(name)
        value = definition.parse(raw)
        refuse_unsupported(definition, value)
        self.listener_static.setdefault(listener, {})[config] = value

    def listener_value(self, listener: str, name: str) -> Any:
        """Config `name` as listener `listener` sees it: its `listener.name.` override, else the broker's."""
        overrides = self.listener_static.get(listener.lower(), {})
        return overrides[name] if name in overrides else self.value(name)

    # -- definitions -----------------------------------------------------------------------------------------

    def broker_def(self, name: str) -> ConfigDef:
        """The definition of broker config `name`; ConfigError if this cluster does not know it."""
        if name in self.unknown or name not in self.broker_configs:
            raise ConfigError(f"Unknown broker config name: {name}")
        return self.broker_configs[name]

    def dynamic_def(self, name: str) -> ConfigDef:
        """The definition of a dynamic broker config `name`: Kafka's, or a custom one's of the UNKNOWN type."""
        if name in self.broker_configs and name not in self.unknown:
            return self.broker_configs[name]
        return ConfigDef(name, ConfigType.UNKNOWN, None, support=Support.INERT)

    def topic_def(self, name: str) -> ConfigDef:
        """The definition of topic config `name`; ConfigError if this cluster does not know it."""
        if name in self.unknown or name not in self.topic_configs:  # LogConfig.validateNames
            raise ConfigError(f"Unknown topic config name: {name}")
        return self.topic_configs[name]

    def _set_text(self, names: list[str], table_for: int = 0) -> str:
        """A set of config names as this release's DynamicBrokerConfig prints it in a refusal: Kafka 4's Java
        HashSet `[a, b]` (java_set), 3.9's Scala Set `Set(a, b)` (up to four names in the order the request's
        properties gave them, which for more than one name may not be the JVM's)."""
        if self._hash_ordered:
            return f"Set({', '.join(dict.fromkeys(names))})"
        return java_set(names, table_for)

    def describe_order(self, names: list[str], keyed: bool) -> list[str]:
        """`names` in the order DescribeConfigs lists them: by name, or for a release that lists the requested
        configs (`keyed`) from a Scala HashMap (3.9's ConfigHelper), in that map's order."""
        return scala_hash_map_order(names) if keyed and self._hash_ordered else names

    def broker_names(self, node_id: int | None = None) -> list[str]:
        """The broker configs DescribeConfigs lists for a node: every non-internal one, internal ones once set,
        and the custom (unknown) ones set dynamically on the node or the cluster default."""
        known = [name for name, d in self.broker_configs.items() if name not in self.unknown and name not in
                 AUTHORIZER_CONFIGS and (not d.internal or name in self.static)]
        node_layer = self.dynamic_node.get(self._node_id if node_id is None else node_id, {})
        custom = {name for layer in (self.dynamic_default, node_layer) for name in layer
                  if self.dynamic_def(name).type is ConfigType.UNKNOWN}
        return known + sorted(custom)

    def topic_names(self) -> list[str]:
        """Every topic config this cluster knows, sorted."""
        return [name for name in self.topic_configs if name not in self.unknown]

    # -- values ----------------------------------------------------------------------------------------------

    @property
    def node_id(self) -> int:
        """The first node's id: `node.id`, or its older alias `broker.id`, else 0."""
        return self._node_id

    def _layers(self, node_id: int | None, node_static: Layer | None = None) -> list[tuple[Layer, ConfigSource]]:
        node = self._node_id if node_id is None else node_id
        static = {**self.static, **node_static} if node_static else self.static
        return [(self.dynamic_node.get(node, {}), ConfigSource.DYNAMIC_BROKER_CONFIG),
                (self.dynamic_default, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
                (static, ConfigSource.STATIC_BROKER_CONFIG)]

    def value(self, name: str, node_id: int | None = None, node_static: Layer | None = None) -> Any:
        """The value of broker config `name` on a node: its strongest layer, else the default (None if none).

        The core reads values without a node, as the first node has them: the cluster's topics, groups and
        transactions live in one process, not on separate brokers.
        """
        if name in self.unknown:  # a newer release's config, set here as a custom one: never read
            return BROKER_CONFIGS[name].default  # as 4.2 has it: what the core does without the config
        # the layers of _layers, unrolled: the core reads values on every request
        if self.dynamic_node:
            node_layer = self.dynamic_node.get(self._node_id if node_id is None else node_id)
            if node_layer and name in node_layer:
                return node_layer[name]
        if name in self.dynamic_default:
            return self.dynamic_default[name]
        if node_static and name in node_static:
            return node_static[name]
        if name in self.static:
            return self.static[name]
        default = self.broker_configs[name].default
        return None if default is NO_DEFAULT else default

    def __getitem__(self, name: str) -> Any:
        return self.value(name)

    def _log_default(self, name: str, node_id: int | None) -> Any:
        """What KafkaConfig.extractLogConfigMap gives topics for broker setting `name` (its synonyms resolved)."""
        get = self.value
        if name == "log.retention.ms":  # KafkaConfig.logRetentionTimeMillis
            millis = get(name, node_id)
            if millis is None:
                minutes = get("log.retention.minutes", node_id)
                millis = minutes * 60_000 if minutes is not None else get("log.retention.hours", node_id) * 3_600_000
            return -1 if millis < 0 else millis
        if name in ("log.roll.ms", "log.roll.jitter.ms"):
            millis = get(name, node_id)
            return millis if millis is not None else get(name.replace(".ms", ".hours"), node_id) * 3_600_000
        if name == "log.flush.interval.ms":
            millis = get(name, node_id)
            return millis if millis is not None else get("log.flush.scheduler.interval.ms", node_id)
        return get(name, node_id)

    def topic_value(self, name: str, overrides: Mapping[str, Any], node_id: int | None = None) -> Any:
        """The effective value of topic config `name` for a topic with `overrides` (LogConfig.fromProps)."""
        if name in overrides:
            return overrides[name]
        definition = self.topic_configs[name]
        if definition.broker_synonym is not None:
            return self._log_default(definition.broker_synonym, node_id)
        return definition.default

    def timestamp_bounds(self, overrides: Mapping[str, Any]) -> tuple[int, int]:
        """(before, after): how far a record's timestamp may lie behind or ahead of the broker's clock on a topic
        with `overrides`; where a release knows message.timestamp.difference.max.ms (before 4.0), it is the bound
        a side left at Long.MAX_VALUE takes (LogConfig.getMessageTimestampBeforeMaxMs/AfterMaxMs)."""
        before = self.topic_value("message.timestamp.before.max.ms", overrides)
        after = self.topic_value("message.timestamp.after.max.ms", overrides)
        if DIFFERENCE_MAX_MS in self.topic_configs and DIFFERENCE_MAX_MS not in self.unknown:
            difference = self.topic_value(DIFFERENCE_MAX_MS, overrides)
            before = difference if before == LONG_MAX else before
            after = difference if after == LONG_MAX else after
        return before, after

    # -- DescribeConfigs (ConfigHelper) ----------------------------------------------------------------------

    def _synonyms(self, name: str, node_id: int | None,
                  node_static: Layer | None) -> list[tuple[str, Any, ConfigSource]]:
        """ConfigHelper.configSynonyms: every layer that sets `name` or a synonym, strongest first."""
        custom = self.dynamic_def(name).type is ConfigType.UNKNOWN
        names = [name] if custom else [n for n in _broker_synonym_names(name) if n not in self.unknown]
        found = [(n, layer[n], source) for layer, source in self._layers(node_id, node_static)
                 for n in names if n in layer]
        for n in [] if custom else names:  # DynamicBrokerConfig.staticDefaultConfigs holds no null defaults
            default = self.broker_configs[n].default
            if default is not None and default is not NO_DEFAULT:
                found.append((n, default, ConfigSource.DEFAULT_CONFIG))
        while found and found[0][0] != name:  # as Kafka: drop what a stronger synonym set
            found.pop(0)
        return found

    def describe(self, name: str, per_node: bool = True, node_id: int | None = None,
                 node_static: Layer | None = None) -> ConfigEntry:
        """Broker config `name` as DescribeConfigs shows it on BROKER "<id>" (per_node) or "" (cluster default)."""
        definition = self.dynamic_def(name)
        synonyms = self._synonyms(name, node_id, node_static)
        if not per_node:  # the cluster-default resource shows only its own layer
            synonyms = [s for s in synonyms if s[2] is ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
            value = self.dynamic_default.get(name)
        else:
            value = self.value(name, node_id, node_static)
        source = synonyms[0][2] if synonyms else ConfigSource.DEFAULT_CONFIG
        return ConfigEntry(name, value, source, definition, synonyms, read_only=not definition.dynamic)

    def describe_topic(self, name: str, overrides: Mapping[str, Any], node_id: int | None = None,
                       node_static: Layer | None = None) -> ConfigEntry:
        """Topic config `name` of a topic with `overrides` (ConfigHelper.createTopicConfigEntry)."""
        definition = self.topic_configs[name]
        synonyms: list[tuple[str, Any, ConfigSource]] = []
        if name in overrides:
            synonyms.append((name, overrides[name], ConfigSource.DYNAMIC_TOPIC_CONFIG))
        if definition.broker_synonym is not None and definition.broker_synonym not in self.unknown:
            synonyms.extend(self._synonyms(definition.broker_synonym, node_id, node_static))
        source = synonyms[0][2] if synonyms else ConfigSource.DEFAULT_CONFIG
        value = self.topic_value(name, overrides, node_id)
        return ConfigEntry(name, value, source, definition, synonyms)

    # -- topic overrides (LogConfig.validate) ----------------------------------------------------------------

    def parse_topic_configs(self, raw: Mapping[str, str | None]) -> dict[str, Any]:
        """Validate a whole set of topic config overrides; ConfigError (INVALID_CONFIG) with Kafka's message."""
        parsed = {name: self.topic_def(name).parse(value) for name, value in raw.items() if value is not None}
        effective = {name: self.topic_value(name, parsed) for name in ("min.compaction.lag.ms",
                                                                       "max.compaction.lag.ms")}
        if effective["min.compaction.lag.ms"] > effective["max.compaction.lag.ms"]:  # LogConfig.validateValues
            raise ConfigError(f"conflict topic config setting min.compaction.lag.ms "
                              f"({effective['min.compaction.lag.ms']}) > max.compaction.lag.ms "
                              f"({effective['max.compaction.lag.ms']})")
        if parsed.get("remote.storage.enable"):  # remote.log.storage.system.enable is false here
            raise ConfigError("Tiered Storage functionality is disabled in the broker. "
                              "Topic cannot be configured with remote log storage.")
        return parsed

    def incremental_topic_configs(self, current: Mapping[str, Any], ops: Iterable[tuple[str, int, str | None]]
                                  ) -> dict[str, Any]:
        """A topic's overrides after IncrementalAlterConfigs `ops` (ConfigurationControlManager); ConfigError."""
        props = {name: self.topic_configs[name].render(value) for name, value in current.items()}
        for name, op, value in ops:
            if op == SET:
                props[name] = value
            elif op == DELETE:
                props.pop(name, None)
            else:
                definition = self.topic_configs.get(name) if name not in self.unknown else None
                if definition is None or definition.type is not ConfigType.LIST:
                    verb = "APPEND" if op == APPEND else "SUBTRACT"
                    raise ConfigError(f"Can't {verb} to key {name} because its type is not LIST.")
                base = props.get(name)
                if base is None:
                    base = definition.render(definition.default) or ""
                parts = [part for part in base.split(",") if part]
                items = (value or "").split(",")
                if op == APPEND:
                    present = set(parts)
                    for item in items:
                        if item not in present:
                            present.add(item)
                            parts.append(item)
                else:
                    # each item removes the first occurrence left of it, as list.remove would one by one
                    to_remove = Counter(items)
                    kept = []
                    for part in parts:
                        if to_remove[part] > 0:
                            to_remove[part] -= 1
                        else:
                            kept.append(part)
                    parts = kept
                props[name] = ",".join(parts)
        return self.parse_topic_configs(props)

    # -- dynamic broker configs (ConfigAdminManager, DynamicBrokerConfig) ------------------------------------

    def dynamic_layer(self, node_id: int | None) -> Layer:
        """The dynamic configs of BROKER "<node_id>", or of the cluster default ("") for None."""
        return self.dynamic_default if node_id is None else self.dynamic_node.get(node_id, {})

    def validate_dynamic(self, props: Mapping[str, Any], node_id: int | None) -> Layer:
        """The parsed layer `props` would make for BROKER "<node_id>" or ""; KafkaError if Kafka or we refuse it.

        Kafka's own refusals (DynamicBrokerConfig.validateConfigs, which ConfigAdminManager answers with
        INVALID_REQUEST) come first, in Kafka's order; then minibroker's: configs it does not implement
        (INVALID_CONFIG, see the decision list in docs/broker-configs.md). A name Kafka does not know is kept
        as Kafka keeps it (a custom config for a plugin; nothing reads it) and listed as its UNKNOWN type.
        """
        known = {name: self.broker_configs[name] for name in props
                 if name in self.broker_configs and name not in self.unknown}
        read_only = [name for name, d in known.items() if not d.dynamic]
        if read_only:
            raise KafkaError(ErrorCode.INVALID_REQUEST, f"Cannot update these configs dynamically: "
                                                        f"{self._set_text(read_only, len(props))}")
        listener_only = [name for name in props if name in LISTENER_ONLY_SECURITY_CONFIGS]
        if listener_only:
            raise KafkaError(ErrorCode.INVALID_REQUEST, "These security configs can be dynamically updated only "
                             f"per-listener using the listener prefix: {self._set_text(listener_only)}")
        parsed: Layer = {}
        for name, definition in known.items():
            try:
                parsed[name] = definition.parse(props[name])
            except ConfigError as exc:
                raise KafkaError(ErrorCode.INVALID_REQUEST, exc.message) from None
        if node_id is None:
            per_broker = [name for name, d in known.items() if d.mode is UpdateMode.PER_BROKER]
            if per_broker:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "Cannot update these configs at default cluster level, "
                                 f"broker id must be specified: {self._set_text(per_broker)}")
        for name in props:
            if name not in known:
                if name.startswith(LISTENER_PREFIX):  # listeners bind once here, with their start-up configs
                    raise ConfigError(f"minibroker does not implement dynamic listener-specific configs: {name}")
                parsed[name] = str(props[name])
        per_ip = parsed.get("max.connections.per.ip", self["max.connections.per.ip"])
        if per_ip == 0 and not parsed.get("max.connections.per.ip.overrides", self["max.connections.per.ip.overrides"]):
            raise KafkaError(ErrorCode.INVALID_REQUEST, ZERO_CONNECTIONS_PER_IP)
        if node_id is None and self.elr and MIN_INSYNC_REPLICAS not in parsed:  # ConfigurationControlManager
            raise ConfigError("Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")
        for name, definition in known.items():
            value = parsed[name]
            refuse_unsupported(definition, value)
            if name in STARTUP_ONLY:
                raise ConfigError(f"minibroker does not implement dynamic updates of {name}: set it at start-up")
            if (node_id not in (None, self._node_id) and definition.support is Support.IMPLEMENTED
                    and name not in PER_NODE_CONFIGS):
                # the core reads configs as the first node has them (see value()), except those read per node
                raise ConfigError(f"minibroker applies {name} to the whole cluster: set it on broker "
                                  f"{self._node_id} or as the cluster default")
        return parsed

    def replace_dynamic(self, node_id: int | None, layer: Layer) -> None:
        """Make `layer` (validated) the dynamic configs of BROKER "<node_id>" or ""."""
        self.version += 1
        if node_id is None:
            self.dynamic_default = dict(layer)
        elif layer:
            self.dynamic_node[node_id] = dict(layer)
        else:
            self.dynamic_node.pop(node_id, None)

    def alter_dynamic(self, node_id: int | None, configs: Mapping[str, str], validate_only: bool = False) -> None:
        """Legacy AlterConfigs: the dynamic configs of BROKER "<node_id>" or "" become exactly `configs`."""
        layer = self.validate_dynamic(configs, node_id)
        if not validate_only:
            self.replace_dynamic(node_id, layer)

    def incremental_alter_dynamic(self, node_id: int | None, ops: Iterable[tuple[str, int, str | None]],
                                  validate_only: bool = False) -> None:
        """IncrementalAlterConfigs on BROKER "<node_id>" or "" (ConfigAdminManager.prepareIncrementalConfigs)."""
        props: dict[str, Any] = {name: self.dynamic_def(name).render(value)
                                 for name, value in self.dynamic_layer(node_id).items()}
        for name, op, value in ops:
            if op == SET:
                props[name] = value
            elif op == DELETE:  # a name that is not set (read-only or unknown ones included) is no change
                props.pop(name, None)
            elif op in (APPEND, SUBTRACT):
                definition = self.broker_def(name)
                verb = "append" if op == APPEND else "subtract"
                if definition.type is not ConfigType.LIST:
                    raise ConfigError(f"Config value {verb} is not allowed for config key: {name}")
                base = props.get(name)
                if base is None:
                    base = definition.render(definition.default) or ""
                items = (value or "").split(",")
                if op == APPEND:
                    parts = [part for part in base.split(",") if part] if base else []
                    parts += [item for item in items if item not in parts]
                else:
                    parts = base.split(",")
                    for item in items:
                        if item in parts:
                            parts.remove(item)
                props[name] = ",".join(parts)
            else:
                raise KafkaError(ErrorCode.INVALID_REQUEST, f"Unknown operations type {op}")
        layer = self.validate_dynamic(props, node_id)
        if not validate_only:
            self.replace_dynamic(node_id, layer)

    def set_dynamic(self, name: str, raw: Any, *, node_level: bool) -> None:
        """SET one dynamic broker config on the first node or the cluster default; KafkaError if refused."""
        self.incremental_alter_dynamic(self.node_id if node_level else None, [(name, SET, raw)])

    def delete_dynamic(self, name: str, *, node_level: bool) -> None:
        """DELETE one dynamic broker config so the next layer shows through."""
        self.incremental_alter_dynamic(self.node_id if node_level else None, [(name, DELETE, None)])


    # -- group configs (GroupConfig, GroupConfigManager) ------------------------------------------------------

    def group_value(self, group_id: str, name: str) -> Any:
        """Group config `name` of group `group_id`: its override, else the broker config it defaults to."""
        overrides = self.groups.get(group_id)
        if overrides and name in overrides:
            return overrides[name]
        return self._group_default(name)

    def _group_default(self, name: str) -> Any:
        definition = GROUP_CONFIGS[name]
        synonym = definition.broker_synonym
        if synonym is not None and synonym in self.broker_configs:
            return self.value(synonym)
        return definition.default

    def group_names(self) -> list[str]:
        """Every group config, in the order Kafka lists them."""
        return list(GROUP_CONFIGS)

    def configured_groups(self) -> list[str]:
        """The groups that have configs set (ListConfigResources), sorted."""
        return sorted(self.groups)

    def describe_group(self, group_id: str, name: str) -> ConfigEntry:
        """Group config `name` of `group_id` as DescribeConfigs shows it (ConfigHelper.createGroupConfigEntry)."""
        definition = GROUP_CONFIGS[name]
        synonyms: list[tuple[str, Any, ConfigSource]] = []
        overrides = self.groups.get(group_id, {})
        if name in overrides:
            synonyms.append((name, overrides[name], ConfigSource.DYNAMIC_GROUP_CONFIG))
        synonym = definition.broker_synonym
        if synonym is not None and synonym in self.broker_configs:
            synonyms.extend(self._synonyms(synonym, None, None))
        else:  # a broker config of Kafka 4.3 (not in the 4.2 table) or none: the default, under the broker name if any
            synonyms.append((synonym or name, definition.default, ConfigSource.DEFAULT_CONFIG))
        source = synonyms[0][2] if synonyms else ConfigSource.DEFAULT_CONFIG
        return ConfigEntry(name, self.group_value(group_id, name), source, definition, synonyms)

    def parse_group_configs(self, raw: Mapping[str, str | None]) -> Layer:
        """Validate a group's whole set of overrides (GroupConfig.validate); ConfigError with Kafka's message."""
        for name in raw:
            if name not in GROUP_CONFIGS:
                raise ConfigError(f"Unknown group config name: {name}")
        parsed = {name: GROUP_CONFIGS[name].parse(value) for name, value in raw.items() if value is not None}
        effective = {name: parsed[name] if name in parsed else self._group_default(name) for name in GROUP_CONFIGS}
        for name, low, high in _GROUP_BOUNDS:
            if high not in self.broker_configs:
                continue  # a release before the bound (the assignment intervals came with 4.3)
            if low is not None and effective[name] < self.value(low):
                raise ConfigError(f"{name} must be greater than or equal to {low}")
            if effective[name] > self.value(high):
                raise ConfigError(f"{name} must be less than or equal to {high}")
        for session, heartbeat in _GROUP_SESSION_OVER_HEARTBEAT:
            if effective[session] <= effective[heartbeat]:
                raise ConfigError(f"{session} must be greater than {heartbeat}")
        for name, value in parsed.items():
            refuse_unsupported(GROUP_CONFIGS[name], value)
        return parsed

    def incremental_group_configs(self, group_id: str, ops: Iterable[tuple[str, int, str | None]]) -> Layer:
        """A group's overrides after IncrementalAlterConfigs `ops` (ConfigurationControlManager); ConfigError."""
        props: dict[str, str | None] = {name: GROUP_CONFIGS[name].render(value)
                                        for name, value in self.groups.get(group_id, {}).items()}
        for name, op, value in ops:
            if op == SET:
                props[name] = value
            elif op == DELETE:
                props.pop(name, None)
            else:  # no group config is a LIST
                verb = "APPEND" if op == APPEND else "SUBTRACT"
                raise ConfigError(f"Can't {verb} to key {name} because its type is not LIST.")
        return self.parse_group_configs(props)

    def set_group_configs(self, group_id: str, layer: Layer) -> None:
        """Make `layer` (validated) the configs of group `group_id`; an empty one removes the resource."""
        self.version += 1
        if layer:
            self.groups[group_id] = dict(layer)
        else:
            self.groups.pop(group_id, None)
