"""Config values as Kafka's `ConfigDef` (org.apache.kafka.common.config.ConfigDef) handles them.

One `ConfigDef` per config: its type, default, Kafka's validator with Kafka's messages, its update mode and what
minibroker does with it (`Support`), parsing a raw value (`ConfigDef.parseType`) and rendering one as
DescribeConfigs shows it (`ConfigDef.convertToString`, `Double.toString`). Also how Kafka prints sets and maps of
config names (Java's `HashSet`, Scala's `HashMap` iteration orders), which its refusals and listings expose.
The registry of definitions is `config_registry.py`; everything is reached through `config.py`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum, IntEnum
from typing import Any

from ..protocol.errors import ErrorCode, KafkaError


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



class UpdateMode(Enum):
    """Where a broker config may change without a restart (DynamicBrokerConfig.dynamicConfigUpdateModes)."""

    READ_ONLY = "read-only"
    PER_BROKER = "per-broker"
    CLUSTER_WIDE = "cluster-wide"


class Support(Enum):
    """What minibroker does with a config (see config.py's docstring)."""

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


def refuse_unsupported(definition: ConfigDef, value: Any) -> None:
    """ConfigError unless minibroker can honour `value` for `definition` (see config.py's docstring)."""
    if definition.support is not Support.UNSUPPORTED or (definition.has_default and value == definition.default):
        return
    default = (f"; it only accepts Kafka's default, {definition.render(definition.default)!r}"
               if definition.has_default else "")
    raise ConfigError(f"minibroker does not implement {definition.name}{default}")


# -- how Kafka prints collections of config names -----------------------------------------------------------


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
