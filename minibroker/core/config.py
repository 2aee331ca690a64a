"""The one config registry: every broker and topic config is declared once, and every path reads it here.

Kafka 4.2's own lists (names, types, defaults, validators, update modes, topic -> broker fallbacks) are data
in `config_table.py`. The registry adds what minibroker does with each config and Kafka's rules around them:
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

The registry lives in three modules; this one is the entry point every caller imports from:

- `config_def.py`: `ConfigDef` (Kafka's ConfigDef): value parsing, Kafka's validator messages, rendering
  (`java_double`), how Kafka prints sets of config names, and `refuse_unsupported`;
- `config_registry.py`: the broker, topic and group definitions (KafkaConfig, LogConfig, GroupConfig), each
  one's support decision, the release profiles' overlays (`release_configs`) and `decision_list()`;
- `broker_config.py`: `BrokerConfig` (KafkaConfig, DynamicBrokerConfig, ConfigHelper, ConfigAdminManager):
  layers, sources, synonyms, describe order, topic and group overrides, dynamic-update checks.
"""

from __future__ import annotations

from typing import Any

from .broker_config import (
    APPEND,
    DELETE,
    DIFFERENCE_MAX_MS,
    LISTENER_PREFIX,
    LONG_MAX,
    MIN_INSYNC_REPLICAS,
    SET,
    SUBTRACT,
    ZERO_CONNECTIONS_PER_IP,
    BrokerConfig,
    ConfigEntry,
    ConfigSource,
    Layer,
)
from .config_def import (
    NO_DEFAULT,
    ConfigDef,
    ConfigError,
    ConfigType,
    Support,
    UpdateMode,
    java_double,
    java_set,
    refuse_unsupported,
    scala_hash_map_order,
)
from .config_registry import (
    AUTHORIZER_CONFIGS,
    BROKER_CONFIGS,
    GROUP_CONFIGS,
    KIP1269_CONFIGS,
    LATEST_APPEND_MODE,
    LATEST_PROFILE,
    LISTENER_ONLY_SECURITY_CONFIGS,
    PER_NODE_CONFIGS,
    STARTUP_ONLY,
    TOPIC_CONFIGS,
    WINDOW_MODE,
    ReleaseConfigs,
    broker_config_def,
    decision_list,
    release_configs,
    topic_config_def,
    unsupported_reason,
)

__all__ = [
    "APPEND", "AUTHORIZER_CONFIGS", "BROKER_CONFIGS", "DELETE", "DIFFERENCE_MAX_MS", "GROUP_CONFIGS",
    "KIP1269_CONFIGS", "LATEST_APPEND_MODE", "LATEST_PROFILE", "LISTENER_ONLY_SECURITY_CONFIGS", "LISTENER_PREFIX",
    "LONG_MAX", "MIN_INSYNC_REPLICAS", "NO_DEFAULT", "PER_NODE_CONFIGS", "SET", "STARTUP_ONLY", "SUBTRACT",
    "TOPIC_CONFIGS", "WINDOW_MODE", "ZERO_CONNECTIONS_PER_IP", "BrokerConfig", "ConfigDef", "ConfigEntry",
    "ConfigError", "ConfigSource", "ConfigType", "Layer", "ReleaseConfigs", "Support", "UpdateMode",
    "broker_config_def", "decision_list", "java_double", "java_set", "load_properties", "parse_topic_configs",
    "refuse_unsupported", "release_configs", "scala_hash_map_order", "topic_config_def", "unsupported_reason",
]


def parse_topic_configs(raw: dict[str, str | None]) -> dict[str, Any]:
    """Validate a whole set of topic config overrides against the default broker; ConfigError if refused."""
    return BrokerConfig().parse_topic_configs(raw)


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
