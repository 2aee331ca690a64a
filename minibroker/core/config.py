"""The one config registry: every broker and topic config is declared here once.

Kafka 4.2's own lists (names, types, defaults, validators, update modes, topic -> broker fallbacks) are data
in `config_table.py`. This module adds what minibroker does with each config and Kafka's rules around them:
value parsing and validator messages (`ConfigDef`), the layers a broker config is read from, sources and
synonyms as `ConfigHelper` reports them, topic validation as `LogConfig.validate` does it, and the checks
`ConfigAdminManager` and `DynamicBrokerConfig` apply to AlterConfigs and IncrementalAlterConfigs on a broker.
CLI flags, `server.properties`, CreateTopics, DescribeConfigs, AlterConfigs and IncrementalAlterConfigs all
go through it, so a bound is enforced everywhere at once.

Every config Kafka lists is described with Kafka's default. What minibroker does with one is its support:
IMPLEMENTED configs change behaviour; INERT ones tune what an in-memory broker does not have (threads,
buffers, disk flushing, index files) and are accepted with any valid value; UNSUPPORTED ones (quotas,
tiered storage, plugins, what the security work has not reached yet, ...) keep Kafka's default, and any
other value is refused, so a client is never told something took effect that did not. `decision_list()`
writes what AlterConfigs does with each dynamic broker config to docs/broker-configs.md.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import Enum, IntEnum
from functools import cache
from typing import Any

from ..protocol.errors import ErrorCode, KafkaError
from . import config_releases
from .acls import STANDARD_AUTHORIZER, AclError, parse_super_users
from .config_table import BROKER_TABLE, GROUP_TABLE, TOPIC_TABLE
from .listeners import ListenerConfigError, advertised_listeners, parse_listeners, parse_protocol_map

LONG_MAX = 2**63 - 1
MIN_INSYNC_REPLICAS = "min.insync.replicas"
INT_MAX = 2**31 - 1
LISTENER_PREFIX = "listener.name."
DIFFERENCE_MAX_MS = "message.timestamp.difference.max.ms"  # Kafka 3.9's; 4.0 removed it


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
    DYNAMIC_CLIENT_METRICS_CONFIG = 7
    DYNAMIC_GROUP_CONFIG = 8


class UpdateMode(Enum):
    """Where a broker config may change without a restart (DynamicBrokerConfig.dynamicConfigUpdateModes)."""

    READ_ONLY = "read-only"
    PER_BROKER = "per-broker"
    CLUSTER_WIDE = "cluster-wide"


class Support(Enum):
    """What minibroker does with a config (see the module docstring)."""

    IMPLEMENTED = "implemented"
    INERT = "inert"
    UNSUPPORTED = "unsupported"


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()  # ConfigDef.NO_DEFAULT_VALUE: a config Kafka requires to be set


class ConfigError(KafkaError):
    """An invalid config name or value (INVALID_CONFIG)."""

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.INVALID_CONFIG, message)


def _invalid(name: str, value: Any, message: str) -> ConfigError:
    """Kafka's ConfigException(name, value, message) text."""
    return ConfigError(f"Invalid value {value} for configuration {name}: {message}")


def java_double(value: float) -> str:
    """`Double.toString`: 0.5, 1.0E7, 1.7976931348623157E308 (what Kafka shows for a DOUBLE)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if 1e-3 <= abs(value) < 1e7:
        text = repr(float(value))
        return text if "." in text else text + ".0"
    sign, digits, exponent = Decimal(repr(float(value))).normalize().as_tuple()
    text = "".join(map(str, digits))
    assert isinstance(exponent, int)
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{len(text) - 1 + exponent}"


_INTEGER = re.compile(r"[+-]?\d+")
_BOUNDS = {ConfigType.SHORT: 2**15, ConfigType.INT: 2**31, ConfigType.LONG: 2**63}
_THROTTLED_REPLICAS = re.compile(r"(\d+:\d+)?")


@dataclass(frozen=True)
class ConfigDef:
    """One config: name, type, default, Kafka's validator, update mode, support and fallback."""

    name: str
    type: ConfigType
    default: Any  # parsed; None is a null default, NO_DEFAULT none at all
    validator: str = ""  # Kafka's description of the valid values, e.g. "[1,...]" or "[CreateTime, LogAppendTime]"
    mode: UpdateMode = UpdateMode.READ_ONLY  # broker configs only
    support: Support = Support.UNSUPPORTED
    broker_synonym: str | None = None  # topic configs: the broker config they fall back to
    internal: bool = False  # Kafka's defineInternal: accepted, listed only once set
    doc: str = ""

    @property
    def dynamic(self) -> bool:
        """Whether AlterConfigs may change it on a broker (DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS)."""
        return self.mode is not UpdateMode.READ_ONLY

    @property
    def sensitive(self) -> bool:
        """PASSWORD configs and names Kafka does not know: no value shown (KafkaConfig.maybeSensitive)."""
        return self.type in (ConfigType.PASSWORD, ConfigType.UNKNOWN)

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    def parse(self, raw: Any) -> Any:
        """The typed value of `raw` (a string or a Python value); ConfigError with Kafka's message if invalid."""
        value = self._convert(raw)
        self._validate(value)
        return value

    def _convert(self, raw: Any) -> Any:
        """ConfigDef.parseType."""
        value = raw.strip() if isinstance(raw, str) else raw
        kind = self.type
        if kind in _BOUNDS:
            if isinstance(value, int) and not isinstance(value, bool):
                parsed = value
            elif isinstance(value, str) and _INTEGER.fullmatch(value):
                parsed = int(value)
            else:
                raise _invalid(self.name, raw, f"Not a number of type {kind.name}")
            if not -_BOUNDS[kind] <= parsed < _BOUNDS[kind]:
                raise _invalid(self.name, raw, f"Not a number of type {kind.name}")
            return parsed
        if kind is ConfigType.DOUBLE:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return float(value)
            try:
                if not isinstance(value, str) or "_" in value:
                    raise ValueError
                return float(value)
            except ValueError:
                raise _invalid(self.name, raw, "Not a number of type DOUBLE") from None
        if kind is ConfigType.BOOLEAN:
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("true", "false"):
                return value.lower() == "true"
            raise _invalid(self.name, raw, "Expected value to be either true or false")
        if kind is ConfigType.LIST:
            if isinstance(value, (list, tuple)):
                return [str(item).strip() for item in value]
            text = str(value)
            return [item.strip() for item in text.split(",")] if text else []
        return str(value)

    def _validate(self, value: Any) -> None:
        """The validator Kafka declares for the config, with its messages (ConfigDef.Range, ValidString, ...)."""
        rule = self.validator
        if self.name == "max.connections.per.ip.overrides" and value:
            _validate_connection_overrides(value)
        if not rule or value is None:
            return
        if self.name in _METADATA_VERSION_CONFIGS:
            _validate_metadata_version(self.name, value, rule)
            return
        if self.type is ConfigType.LIST:
            self._validate_list(value)
            return
        alternative = None
        if " or " in rule:  # "[1,...,9] or -1": a range plus one extra value
            rule, extra = rule.split(" or ")
            alternative = int(extra)
        if "..." in rule:
            if value == alternative:
                return
            low, _, high = rule.strip("[]").partition("...")
            low, high = low.strip(","), high.strip(",")
            if low and value < _number(low):
                raise _invalid(self.name, self.render(value), f"Value must be at least {low}")
            if high and value > _number(high):
                raise _invalid(self.name, self.render(value), f"Value must be no more than {high}")
        elif rule.startswith("(case insensitive) ["):
            choices = _choices(rule.removeprefix("(case insensitive) "))
            if str(value).upper() not in choices:
                raise _invalid(self.name, value, f"String must be one of (case insensitive): {', '.join(choices)}")
        elif rule.startswith("["):
            choices = _choices(rule)
            if value not in choices:
                raise _invalid(self.name, value, f"String must be one of: {', '.join(choices)}")
        elif rule == "non-empty string" and value == "":
            raise _invalid(self.name, value, "String must be non-empty")

    def _validate_list(self, items: list[str]) -> None:
        rule = self.validator
        if rule.startswith("[partitionId]"):  # ThrottledReplicaListValidator
            if not (all(_THROTTLED_REPLICAS.fullmatch(item) for item in items) or "".join(items) == "*"):
                raise _invalid(self.name, ",".join(items), f"{self.name} must be the literal '*' or a list of replicas "
                               "in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...")
            return
        if rule == "non-empty list":
            if not items:
                raise ConfigError(f"Configuration '{self.name}' must not be empty. Valid values include: "
                                  "any non-empty value")
            return
        # ConfigDef.ValidList.in(...)
        if len(set(items)) != len(items):
            raise ConfigError(f"Configuration '{self.name}' values must not be duplicated.")
        choices = _choices(rule)
        for item in items:
            if item == "":
                raise ConfigError(f"Configuration '{self.name}' values must not be empty.")
            if item not in choices:
                raise _invalid(self.name, item, f"String must be one of: {', '.join(choices)}")

    def render(self, value: Any) -> str | None:
        """The string DescribeConfigs shows for `value` (ConfigDef.convertToString)."""
        if value is None or value is NO_DEFAULT:
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, list):
            return ",".join(value)
        if self.type is ConfigType.DOUBLE:
            return java_double(float(value))
        return str(value)


# KafkaConfig.validateValues: a limit of 0 per IP only makes sense with overrides that let some in
ZERO_CONNECTIONS_PER_IP = ("requirement failed: max.connections.per.ip can be set to zero only if "
                           "max.connections.per.ip.overrides property is set.")


def _validate_connection_overrides(value: str) -> None:
    """`host:count,...`, as KafkaConfig reads it (CoreUtils.parseCsvMap, then an int per host)."""
    for item in filter(None, (part.strip() for part in value.split(","))):
        host, sep, count = item.rpartition(":")
        if not sep or not host or not count.strip().lstrip("-").isdigit():
            raise _invalid("max.connections.per.ip.overrides", value,
                           f"{item!r} is not host:count with an integer count")


# Kafka 3.9's configs checked by MetadataVersionValidator: its description lists every version, its message
# is MetadataVersion.fromVersionString's
_METADATA_VERSION_CONFIGS = frozenset({"message.format.version", "log.message.format.version",
                                       "inter.broker.protocol.version"})


def _validate_metadata_version(name: str, value: str, rule: str) -> None:
    """MetadataVersion.fromVersionString: `x.y[-IVn]` (`0.x.y[-IVn]`) of a known version; anything after the
    release's segments is ignored ("3.9.1" is 3.9), so "2.8" and "2.8-IV1" are both valid."""
    known = set(_choices(rule))
    # "3.9" names that release's latest IV; 3.9.1 knows 4.0's (unreleased then) only by their full names
    known |= {version.partition("-")[0] for version in known if not version.startswith("4.")}
    segments = value.split(".")
    count = 3 if value.startswith("0.") else 2
    key = value if count >= len(segments) else ".".join(segments[:count])
    if key not in known:
        raise _invalid(name, value, f"Version {value} is not a valid version")


def _number(text: str) -> int | float:
    return float(text) if "." in text else int(text)


def _choices(rule: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in rule.strip("[]").split(","))


# -- what minibroker does with each config ---------------------------------------------------------------------

_IMPLEMENTED_BROKER = frozenset({
    "node.id", "broker.id", "num.partitions", "default.replication.factor", "auto.create.topics.enable",
    "delete.topic.enable", "message.max.bytes", "socket.request.max.bytes", "compression.type",
    "log.retention.ms", "log.retention.minutes", "log.retention.hours", "log.retention.bytes",
    "log.retention.check.interval.ms", "log.cleanup.policy", "log.message.timestamp.type",
    "log.message.timestamp.before.max.ms", "log.message.timestamp.after.max.ms", "min.insync.replicas",
    "producer.id.expiration.ms", "transaction.max.timeout.ms", "transactional.id.expiration.ms",
    "transaction.abort.timed.out.transaction.cleanup.interval.ms",
    "transaction.remove.expired.transaction.cleanup.interval.ms", "transaction.partition.verification.enable",
    "group.min.session.timeout.ms", "group.max.session.timeout.ms", "group.initial.rebalance.delay.ms",
    "group.max.size", "offsets.retention.minutes", "offsets.retention.check.interval.ms",
    "offset.metadata.max.bytes", "offsets.topic.num.partitions", "offsets.topic.replication.factor",
    "transaction.state.log.num.partitions", "transaction.state.log.replication.factor",
    "max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides", "connections.max.idle.ms",
    "socket.listen.backlog.size", "queued.max.request.bytes",
    "listeners", "advertised.listeners", "listener.security.protocol.map",
    # TLS listeners (server/tls.py)
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.type", "ssl.truststore.location",
    "ssl.truststore.password", "ssl.truststore.certificates", "ssl.client.auth", "ssl.enabled.protocols",
    "ssl.cipher.suites", "ssl.principal.mapping.rules",
    # SASL listeners (server/authenticator.py, server/sasl/)
    "sasl.enabled.mechanisms", "sasl.jaas.config", "connections.max.reauth.ms", "sasl.server.max.receive.size",
    "connection.failed.authentication.delay.ms",
    # ACLs (core/acls.py)
    "authorizer.class.name",
    # KIP-848 consumer groups (core/consumer_groups.py)
    "group.coordinator.rebalance.protocols", "group.consumer.assignors", "group.consumer.heartbeat.interval.ms",
    "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms",
    "group.consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms",
    "group.consumer.max.session.timeout.ms", "group.consumer.max.size", "group.consumer.migration.policy",
    # fetch sessions (core/fetch_sessions.py)
    "max.incremental.fetch.session.cache.slots",
})

# Accepted with any valid value: they tune threads, buffers, files, disk flushing, replication fetchers,
# metrics sampling or coordinator internals that an in-memory, in-process broker does not have, so no client
# can tell the difference.
_INERT_BROKER = frozenset({
    # JVM-side TLS plumbing and settings for the broker's own outbound connections, which it has none of
    "ssl.protocol", "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm", "ssl.secure.random.implementation",
    "ssl.endpoint.identification.algorithm", "ssl.allow.dn.changes", "ssl.allow.san.changes",
    "background.threads", "num.io.threads", "num.network.threads", "num.recovery.threads.per.data.dir",
    "num.replica.fetchers", "num.replica.alter.log.dirs.threads", "log.cleaner.threads",
    "group.coordinator.threads", "share.coordinator.threads", "socket.send.buffer.bytes",
    # Kafka 4.3's coordinator and KRaft internals (config_releases.py)
    "group.coordinator.background.threads", "group.coordinator.cached.buffer.max.bytes",
    "share.coordinator.cached.buffer.max.bytes", "controller.quorum.fetch.max.bytes",
    "controller.quorum.fetch.snapshot.max.bytes",
    "socket.receive.buffer.bytes", "replica.socket.receive.buffer.bytes",
    "replica.socket.timeout.ms", "queued.max.requests", "log.dir", "log.dirs",
    "metadata.log.dir", "log.flush.interval.messages", "log.flush.interval.ms", "log.flush.scheduler.interval.ms",
    "log.flush.offset.checkpoint.interval.ms", "log.flush.start.offset.checkpoint.interval.ms",
    "log.index.interval.bytes", "log.index.size.max.bytes", "log.preallocate", "log.segment.bytes",
    "log.segment.delete.delay.ms", "log.roll.ms", "log.roll.hours", "log.roll.jitter.ms", "log.roll.jitter.hours",
    "log.dir.failure.timeout.ms", "log.cleaner.enable", "log.cleaner.backoff.ms", "log.cleaner.dedupe.buffer.size",
    "log.cleaner.io.buffer.size", "log.cleaner.io.buffer.load.factor", "log.cleaner.io.max.bytes.per.second",
    "log.cleaner.delete.retention.ms", "log.cleaner.min.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms",
    "log.cleaner.min.cleanable.ratio", "log.local.retention.ms", "log.local.retention.bytes",
    "unclean.leader.election.enable", "compression.gzip.level", "compression.lz4.level", "compression.zstd.level",
    "replica.high.watermark.checkpoint.interval.ms", "replica.fetch.min.bytes", "replica.fetch.wait.max.ms",
    "replica.fetch.max.bytes", "replica.fetch.response.max.bytes", "replica.fetch.backoff.ms",
    "replica.lag.time.max.ms", "controller.socket.timeout.ms",
    "offsets.topic.segment.bytes", "offsets.topic.compression.codec", "offsets.load.buffer.size",
    "offsets.commit.timeout.ms", "transaction.state.log.min.isr",
    "transaction.state.log.segment.bytes", "transaction.state.log.load.buffer.size",
    "fetch.purgatory.purge.interval.requests", "producer.purgatory.purge.interval.requests",
    "delete.records.purgatory.purge.interval.requests", "metrics.num.samples", "metrics.sample.window.ms",
    "metrics.recording.level", "kafka.metrics.polling.interval.secs", "group.coordinator.append.linger.ms",
    "request.timeout.ms", "socket.connection.setup.timeout.ms", "socket.connection.setup.timeout.max.ms",
    # no metadata quorum, heartbeats or automatic leader balancing to tune
    "auto.leader.rebalance.enable", "leader.imbalance.check.interval.seconds", "controlled.shutdown.enable",
    "broker.heartbeat.interval.ms", "broker.session.timeout.ms", "initial.broker.registration.timeout.ms",
    "controller.quorum.append.linger.ms", "controller.quorum.election.backoff.max.ms",
    "controller.quorum.election.timeout.ms", "controller.quorum.fetch.timeout.ms",
    "controller.quorum.request.timeout.ms", "controller.quorum.retry.backoff.ms",
    "metadata.log.max.record.bytes.between.snapshots", "metadata.log.max.snapshot.interval.ms",
    "metadata.log.segment.bytes", "metadata.log.segment.ms", "metadata.max.retention.bytes",
    "metadata.max.retention.ms", "metadata.max.idle.interval.ms",
})

# What minibroker does with the configs only older releases know (config_releases.py):
# - the message format version: Kafka 3.9 ignores it once inter.broker.protocol.version is 3.0 or later
#   (LogConfig.shouldIgnoreMessageFormatVersion), which KRaft always is, and writes record batches v2 only,
#   as minibroker does: any valid value is accepted, stored and described, and changes nothing;
# - message.timestamp.difference.max.ms: Kafka 3.9 bounds timestamps by it where before/after.max.ms are left
#   at Long.MAX_VALUE (LogConfig.getMessageTimestampBeforeMaxMs/AfterMaxMs), and so does minibroker;
# - down-conversion: false makes a consumer's Fetch v0-3 of the topic UNSUPPORTED_VERSION (apis/fetch.py).
_RELEASE_SUPPORT = {
    "message.format.version": Support.INERT, "log.message.format.version": Support.INERT,
    "message.timestamp.difference.max.ms": Support.IMPLEMENTED,
    "log.message.timestamp.difference.max.ms": Support.IMPLEMENTED,
    "message.downconversion.enable": Support.IMPLEMENTED, "log.message.downconversion.enable": Support.IMPLEMENTED,
}

_IMPLEMENTED_TOPIC = frozenset({
    "cleanup.policy", "compression.type", "max.message.bytes", "retention.ms", "retention.bytes",
    "message.timestamp.type", "message.timestamp.before.max.ms", "message.timestamp.after.max.ms",
    "min.insync.replicas", "producer.state.batches.to.retain",
})

WINDOW_MODE, LATEST_APPEND_MODE = "window", "latest-append"  # producer.state.mode

_DOCS = {
    "producer.state.mode":
        "Producer-state design: 'window' keeps producer.state.batches.to.retain batches (KIP-1269); "
        "'latest-append' keeps only the latest batch and answers older retries DUPLICATE_SEQUENCE_NUMBER (KIP-758)",
    "max.in.flight.sequence.number.per.connection":
        "KIP-758: in latest-append mode, sequences this far below the latest appended one are duplicates",
    "log.producer.state.batches.to.retain":
        "Batches kept per idempotent producer and partition for duplicate detection (KIP-1269)",
    "producer.state.batches.to.retain":
        "Batches kept per idempotent producer and partition for duplicate detection (KIP-1269)",
}

_TYPES = {"boolean": ConfigType.BOOLEAN, "string": ConfigType.STRING, "int": ConfigType.INT,
          "short": ConfigType.SHORT, "long": ConfigType.LONG, "double": ConfigType.DOUBLE,
          "list": ConfigType.LIST, "class": ConfigType.CLASS, "password": ConfigType.PASSWORD}
_MODES = {"r": UpdateMode.READ_ONLY, "p": UpdateMode.PER_BROKER, "c": UpdateMode.CLUSTER_WIDE}


def _rows(table: str) -> Iterable[list[str]]:
    for line in table.splitlines():
        if line.strip():
            yield line.split("|")


def _with_default(definition: ConfigDef, text: str) -> ConfigDef:
    """The definition with its default parsed from the table's text."""
    if text == "-":
        default = NO_DEFAULT
    elif text == "null":
        default = None
    else:
        default = definition._convert("" if text == '""' else text)
    return replace(definition, default=default)


def _broker_row(row: list[str], internal: bool = False) -> ConfigDef:
    name, kind, default, valid, mode = row
    support = _RELEASE_SUPPORT.get(name) or (
        Support.IMPLEMENTED if name in _IMPLEMENTED_BROKER
        else Support.INERT if name in _INERT_BROKER else Support.UNSUPPORTED)
    definition = ConfigDef(name, _TYPES[kind], None, valid, _MODES[mode], support, internal=internal,
                           doc=_DOCS.get(name, ""))
    return _with_default(definition, default)


def _topic_row(row: list[str]) -> ConfigDef:
    name, kind, default, valid, synonym = row
    support = _RELEASE_SUPPORT.get(name) or (Support.IMPLEMENTED if name in _IMPLEMENTED_TOPIC else Support.INERT)
    definition = ConfigDef(name, _TYPES[kind], None, valid, support=support,
                           broker_synonym=None if synonym == "-" else synonym)
    return _with_default(definition, default)


def _broker_configs() -> dict[str, ConfigDef]:
    configs: dict[str, ConfigDef] = {row[0]: _broker_row(row) for row in _rows(BROKER_TABLE)}
    # KIP-1269's broker default for producer.state.batches.to.retain, settable cluster-wide like other log configs
    configs["log.producer.state.batches.to.retain"] = ConfigDef(
        "log.producer.state.batches.to.retain", ConfigType.INT, 5, "[5,...]", UpdateMode.CLUSTER_WIDE,
        Support.IMPLEMENTED, doc=_DOCS["log.producer.state.batches.to.retain"])
    # KIP-758 beside KIP-1269: which producer-state design this node applies (core/producer_state.py)
    configs["producer.state.mode"] = ConfigDef(
        "producer.state.mode", ConfigType.STRING, WINDOW_MODE, f"[{WINDOW_MODE}, {LATEST_APPEND_MODE}]",
        UpdateMode.CLUSTER_WIDE, Support.IMPLEMENTED, doc=_DOCS["producer.state.mode"])
    configs["max.in.flight.sequence.number.per.connection"] = ConfigDef(
        "max.in.flight.sequence.number.per.connection", ConfigType.INT, 10_000_000, "[1,...,1073741824]",
        UpdateMode.CLUSTER_WIDE, Support.IMPLEMENTED, doc=_DOCS["max.in.flight.sequence.number.per.connection"])
    # StandardAuthorizer's own configs: Kafka passes every config to the authorizer, which reads these two;
    # they are not in KafkaConfig, so DescribeConfigs does not list them
    configs["super.users"] = ConfigDef("super.users", ConfigType.STRING, None, support=Support.IMPLEMENTED,
                                       internal=True)
    configs["allow.everyone.if.no.acl.found"] = ConfigDef(
        "allow.everyone.if.no.acl.found", ConfigType.BOOLEAN, False, support=Support.IMPLEMENTED, internal=True)
    # TransactionLogConfig defines this one internal: settable at start-up, not listed unless set
    configs["producer.id.expiration.check.interval.ms"] = ConfigDef(
        "producer.id.expiration.check.interval.ms", ConfigType.INT, 600000, "[1,...]", support=Support.IMPLEMENTED,
        internal=True)
    return dict(sorted(configs.items()))


def _topic_configs() -> dict[str, ConfigDef]:
    configs: dict[str, ConfigDef] = {row[0]: _topic_row(row) for row in _rows(TOPIC_TABLE)}
    configs["producer.state.batches.to.retain"] = ConfigDef(
        "producer.state.batches.to.retain", ConfigType.INT, 5, "[5,...]", support=Support.IMPLEMENTED,
        broker_synonym="log.producer.state.batches.to.retain", doc=_DOCS["producer.state.batches.to.retain"])
    return dict(sorted(configs.items()))


BROKER_CONFIGS: dict[str, ConfigDef] = _broker_configs()
TOPIC_CONFIGS: dict[str, ConfigDef] = _topic_configs()


@dataclass(frozen=True)
class ReleaseConfigs:
    """The broker and topic configs a Kafka release knows: 4.2's with the release's overlay laid over them."""

    broker: dict[str, ConfigDef]
    topic: dict[str, ConfigDef]
    removed: frozenset[str]  # 4.2's configs the release does not know
    hash_ordered: bool = False  # Scala's ConfigHelper (3.9): requested configs in HashMap order, Set(a, b) refusals


@cache
def release_configs(profile: str | None) -> ReleaseConfigs:
    """The configs of the cluster profile `profile` (`--as-version`): its release's overlay (config_releases.py)
    over Kafka 4.2's tables, or 4.2's own for a profile without one."""
    overlay = config_releases.PROFILE_OVERLAY.get(profile or "")
    if overlay is None:
        return ReleaseConfigs(BROKER_CONFIGS, TOPIC_CONFIGS, frozenset())
    broker = dict(BROKER_CONFIGS)
    broker.update((row[0], _broker_row(row)) for row in _rows(config_releases.BROKER_CHANGED_OR_ADDED[overlay]))
    broker.update((row[0], _broker_row(row, internal=True))
                  for row in _rows(config_releases.BROKER_INTERNAL[overlay]))
    topic = dict(TOPIC_CONFIGS)
    topic.update((row[0], _topic_row(row)) for row in _rows(config_releases.TOPIC_CHANGED_OR_ADDED[overlay]))
    removed = frozenset(config_releases.BROKER_REMOVED[overlay].split()) | frozenset(
        config_releases.TOPIC_REMOVED[overlay].split())
    return ReleaseConfigs(dict(sorted(broker.items())), dict(sorted(topic.items())), removed,
                          overlay in config_releases.HASH_ORDERED_DESCRIBE)


def scala_hash_map_order(names: Iterable[str]) -> list[str]:
    """The order a Scala 2.13 `mutable.HashMap` built from `names` iterates them: by bucket (the String hash with
    its high half folded in, masked by the table size: 16, doubled whenever an insert reaches 3/4 of it), and
    within a bucket by that hash."""
    unique = list(dict.fromkeys(names))
    size = 16
    while len(unique) >= int(size * 0.75):
        size *= 2
    spread = {name: (h ^ (h >> 16)) for name in unique for h in [_java_string_hash(name)]}
    return sorted(unique, key=lambda name: (spread[name] & (size - 1), spread[name]))

# Kafka 4.3.1's documentation of each group config, as DescribeConfigs returns it
_GROUP_DOCS = {
    'consumer.session.timeout.ms':
        'The timeout to detect client failures when using the consumer group protocol.',
    'consumer.assignment.interval.ms':
        'The interval between assignment updates for a consumer group.',
    'share.auto.offset.reset':
        'The strategy to initialize the share-partition start offset. <ul><li>earliest: automatically reset the offset to the earliest offset</li><li>latest: automatically reset the offset to the latest offset</li><li>by_duration:&lt;duration&gt;: automatically reset the offset to a configured duration from the current timestamp. &lt;duration&gt; must be specified in ISO8601 format (PnDTnHnMn.nS). Negative duration is not allowed.</li><li>anything else: throw exception to the share consumer.</li></ul>',  # noqa: E501 (Kafka's text)
    'share.renew.acknowledge.enable':
        'Whether the renew acknowledge type is enabled for the share group.',
    'streams.initial.rebalance.delay.ms':
        'The amount of time the group coordinator will wait for more streams clients to join a new group before performing the first rebalance. A longer delay means potentially fewer rebalances.',  # noqa: E501 (Kafka's text)
    'share.session.timeout.ms':
        'The timeout to detect client failures when using the share group protocol.',
    'streams.assignment.interval.ms':
        'The interval between assignment updates for a streams group.',
    'share.heartbeat.interval.ms':
        'The heartbeat interval given to the members of a share group.',
    'streams.heartbeat.interval.ms':
        'The heartbeat interval given to the members.',
    'share.delivery.count.limit':
        'The maximum number of delivery attempts for a record delivered to a share group.',
    'consumer.heartbeat.interval.ms':
        'The heartbeat interval given to the members of a consumer group.',
    'share.record.lock.duration.ms':
        'The record acquisition lock duration in milliseconds for share groups.',
    'share.assignment.interval.ms':
        'The interval between assignment updates for a share group.',
    'share.isolation.level':
        'Controls how to read records written transactionally. If set to "read_committed", the share group will only deliver transactional records which have been committed. If set to "read_uncommitted", the share group will return all messages, even transactional messages which have been aborted. Non-transactional records will be returned unconditionally in either mode.',  # noqa: E501 (Kafka's text)
    'streams.session.timeout.ms':
        'The timeout to detect client failures when using the streams group protocol.',
    'share.partition.max.record.locks':
        'Share-group record lock limit per share-partition.',
    'streams.num.standby.replicas':
        'The number of standby replicas for each task.',
}

# The group configs minibroker acts on: the KIP-848 consumer group's session timeout and heartbeat interval
# (core/consumer_groups.py). The share and streams ones are for groups minibroker does not implement, and
# consumer.assignment.interval.ms batches assignment updates minibroker makes at once: Kafka's default only.
_IMPLEMENTED_GROUP = frozenset({"consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"})


def _group_configs() -> dict[str, ConfigDef]:
    configs: dict[str, ConfigDef] = {}
    for name, kind, default, valid, synonym in _rows(GROUP_TABLE):
        support = Support.IMPLEMENTED if name in _IMPLEMENTED_GROUP else Support.UNSUPPORTED
        definition = ConfigDef(name, _TYPES[kind], None, valid, support=support,
                               broker_synonym=None if synonym == "-" else synonym, doc=_GROUP_DOCS[name])
        configs[name] = _with_default(definition, default)
    return configs  # in Kafka's order, not sorted


GROUP_CONFIGS: dict[str, ConfigDef] = _group_configs()

# GroupConfig.validateValues: (group config, broker config bounding it from below, from above)
_GROUP_BOUNDS = (
    ("consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms",
     "group.consumer.max.heartbeat.interval.ms"),
    ("consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
    ("share.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms"),
    ("share.session.timeout.ms", "group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms"),
    ("share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms",
     "group.share.max.record.lock.duration.ms"),
    ("streams.heartbeat.interval.ms", "group.streams.min.heartbeat.interval.ms",
     "group.streams.max.heartbeat.interval.ms"),
    ("streams.session.timeout.ms", "group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms"),
    ("streams.num.standby.replicas", None, "group.streams.max.standby.replicas"),
)
# GroupConfig.validateValues: (session timeout, heartbeat interval) that must be greater than it
_GROUP_SESSION_OVER_HEARTBEAT = (("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms"),
                                 ("share.session.timeout.ms", "share.heartbeat.interval.ms"),
                                 ("streams.session.timeout.ms", "streams.heartbeat.interval.ms"))

# Read for each node (the partition leader's), so a simulated cluster can mix producer-state designs
PER_NODE_CONFIGS = frozenset({"producer.state.mode", "max.in.flight.sequence.number.per.connection"})

# Read by the authorizer from the broker's configs, unknown to KafkaConfig: never listed by DescribeConfigs
AUTHORIZER_CONFIGS = frozenset({"super.users", "allow.everyone.if.no.acl.found"})

# The configs KIP-1269 and KIP-758 add: a cluster speaking as an older Kafka release does not know them.
KIP1269_CONFIGS = frozenset({"producer.state.batches.to.retain", "log.producer.state.batches.to.retain",
                             "producer.state.mode", "max.in.flight.sequence.number.per.connection"})

# SslConfigs.RECONFIGURABLE_CONFIGS: dynamic only with a listener prefix (DynamicBrokerConfig.DynamicSecurityConfigs)
_LISTENER_ONLY_SECURITY_CONFIGS = frozenset({
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password", "ssl.keystore.certificate.chain",
    "ssl.keystore.key", "ssl.truststore.certificates",
})

# Dynamic in Kafka (DynamicListenerConfig; advertised.listeners before 4.0), read at start-up only here: the
# listeners bind once
_STARTUP_ONLY = frozenset({"listeners", "advertised.listeners", "listener.security.protocol.map",
                           "sasl.enabled.mechanisms", "sasl.jaas.config", "connections.max.reauth.ms",
                           "sasl.server.max.receive.size", "ssl.client.auth", "ssl.enabled.protocols",
                           "ssl.cipher.suites", "ssl.principal.mapping.rules"})

# IncrementalAlterConfigs operations (AlterConfigOp.OpType)
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def broker_config_def(name: str) -> ConfigDef:
    """The definition of broker config `name`; ConfigError if unknown."""
    try:
        return BROKER_CONFIGS[name]
    except KeyError:
        raise ConfigError(f"Unknown broker config name: {name}") from None


def topic_config_def(name: str) -> ConfigDef:
    """The definition of topic config `name`; ConfigError if unknown (LogConfig.validateNames)."""
    try:
        return TOPIC_CONFIGS[name]
    except KeyError:
        raise ConfigError(f"Unknown topic config name: {name}") from None


def parse_topic_configs(raw: dict[str, str | None]) -> dict[str, Any]:
    """Validate a whole set of topic config overrides against the default broker; ConfigError if refused."""
    return BrokerConfig().parse_topic_configs(raw)


# Why a broker config Kafka lets AlterConfigs change keeps Kafka's default here (Support.UNSUPPORTED): by the
# name's first prefix that matches. Every such config has one (tests/unit/test_broker_config_decisions.py).
_UNSUPPORTED_REASONS = (
    ("sasl.kerberos.", "GSSAPI (Kerberos) is not served (README): there is no Kerberos login to tune"),
    ("sasl.login.refresh.", "the broker logs in nowhere: it has no SASL login of its own to refresh"),
    ("sasl.mechanism.inter.broker.protocol", "one process: no inter-broker connections"),
    ("ssl.engine.factory.class", "a Java plugin class: TLS is Python's ssl module"),
    ("ssl.provider", "a Java security provider: TLS is Python's ssl module"),
    ("principal.builder.class", "a Java plugin class: principals are built as Kafka's default builder does"),
    ("config.providers", "Java ConfigProvider plugins are not loaded"),
    ("metric.reporters", "no metrics reporters (no JMX)"),
    ("max.connection.creation.rate", "connection-rate quotas are not implemented (README: Quotas)"),
    ("remote.", "tiered storage is not implemented (README)"),
    ("log.remote.", "tiered storage is not implemented (README)"),
    ("follower.fetch.last.tiered.offset.enable", "tiered storage is not implemented (README)"),
    ("cordoned.log.dirs", "one log directory, in memory: nothing to cordon"),
    ("group.consumer.assignment.interval.ms", "a consumer group's target assignment is computed at once, in the "
                                              "heartbeat that changes it (Kafka 4.3 batches them)"),
    ("group.share.", "share groups are not served (README)"),
    ("group.streams.", "Streams groups are not served (README)"),
    ("errors.deadletterqueue.", "Streams groups are not served (README)"),
    ("max.decompressed.message.bytes", "batches are decompressed only to be validated, bounded by "
                                       "message.max.bytes, not by this setting"),
)


def unsupported_reason(name: str) -> str | None:
    """Why dynamic broker config `name` accepts only Kafka's default here, if it does (see _UNSUPPORTED_REASONS)."""
    return next((reason for prefix, reason in _UNSUPPORTED_REASONS if name.startswith(prefix)), None)


#: The profile a node has without --as-version (apis/releases.py's LATEST; core does not import apis)
LATEST_PROFILE = "latest"


def decision_list() -> str:
    """docs/broker-configs.md: what AlterConfigs does here with each broker config Kafka can change dynamically."""
    lines = [
        "# Dynamic broker configs: what minibroker does with each",
        "",
        "Generated from the config registry (`minibroker/core/config.py`): `python -c \"from minibroker.core.config "
        "import decision_list; print(decision_list(), end='')\" > docs/broker-configs.md`; "
        "tests/unit/test_broker_config_decisions.py fails when this page is stale.",
        "",
        "Every broker config Apache Kafka 4.3 (the `latest` profile) lets AlterConfigs and "
        "IncrementalAlterConfigs change without a restart (its update mode: per-broker or cluster-wide), with "
        "minibroker's decision. Kafka's own refusals (read-only "
        "names, security configs without the listener prefix, per-broker names on the cluster default, invalid "
        "values, the ELR cluster-level min.insync.replicas) are answered as Kafka answers them, and a name Kafka "
        "does not know is kept as Kafka keeps it (listed as UNKNOWN); then:",
        "",
        "- **applied**: the change takes effect;",
        "- **accepted**: any valid value is accepted and shown; it tunes what an in-memory, in-process broker does "
        "not have (threads, buffers, files, disk flushing), so no client can tell the difference;",
        "- **start-up only**: set it in `server.properties` or `--set`; a dynamic change is refused (INVALID_CONFIG) "
        "because listeners bind once (Kafka reconfigures them);",
        "- **Kafka's default only**: minibroker cannot act on another value, so any other value is refused "
        "(INVALID_CONFIG) rather than accepted and ignored.",
        "",
        "| config | Kafka's update mode | minibroker | why |",
        "|---|---|---|---|",
    ]
    for name, definition in release_configs(LATEST_PROFILE).broker.items():
        if not definition.dynamic:
            continue
        if name in _LISTENER_ONLY_SECURITY_CONFIGS:
            decision, why = "start-up only", "Kafka takes it only per listener (`listener.name.` prefix)"
        elif name in _STARTUP_ONLY:
            decision, why = "start-up only", "listeners and their security are set up once, at start-up"
        elif definition.support is Support.IMPLEMENTED:
            decision, why = "applied", ""
        elif definition.support is Support.INERT:
            decision, why = "accepted", "nothing to tune in an in-memory broker"
        else:
            default = definition.render(definition.default)
            shown = "null" if default is None else f"`{default}`" if default else '""'
            decision = f"Kafka's default only ({shown})"
            why = unsupported_reason(name) or ""
        lines.append(f"| `{name}` | {definition.mode.value} | {decision} | {why} |")
    listener = ("| `listener.name.<listener>.<config>` | per-broker | start-up only | listeners and their security "
                "are set up once, at start-up |")
    return "\n".join([*lines, listener, ""])


def refuse_unsupported(definition: ConfigDef, value: Any) -> None:
    """ConfigError unless minibroker can honour `value` for `definition` (see the module docstring)."""
    if definition.support is not Support.UNSUPPORTED or (definition.has_default and value == definition.default):
        return
    default = (f"; it only accepts Kafka's default, {definition.render(definition.default)!r}"
               if definition.has_default else "")
    raise ConfigError(f"minibroker does not implement {definition.name}{default}")


def _java_string_hash(text: str) -> int:
    """`String.hashCode` (over UTF-16 code units), as an unsigned 32-bit value."""
    value = 0
    units = text.encode("utf-16-be")
    for index in range(0, len(units), 2):
        value = (31 * value + int.from_bytes(units[index:index + 2], "big")) & 0xFFFFFFFF
    return value


def java_set(names: Iterable[str], table_for: int = 0) -> str:
    """How Kafka 4's DynamicBrokerConfig prints a `HashSet` of config names in its refusals: `[a, b]`.

    A HashSet iterates its table's buckets in order (`HashMap.hash`: the hash's high half folded into its low
    half); `table_for` is how many names the set was first built from (`new HashSet<>(all names)`), which sizes
    the table. Names sharing a bucket keep the given order, which may not be the JVM's.
    """
    unique = list(dict.fromkeys(names))
    capacity = max(int(table_for / 0.75) + 1, 16)
    size = 1 << (capacity - 1).bit_length()
    spread = [(h ^ (h >> 16)) & (size - 1) for h in map(_java_string_hash, unique)]
    ordered = [name for _, _, name in sorted(zip(spread, range(len(unique)), unique, strict=True))]
    return f"[{', '.join(ordered)}]"


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
        listener_only = [name for name in props if name in _LISTENER_ONLY_SECURITY_CONFIGS]
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
            if name in _STARTUP_ONLY:
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
