"""The start-up checks of the group coordinators' broker configs, as Kafka's GroupCoordinatorConfig and
ShareGroupConfig make them: the cluster runs them when it is built, so that a bad config refuses the start, while
the coordinators themselves (group_coordinator.py, share_state.py) load on the first request that needs them."""

from __future__ import annotations

from .assignors import ASSIGNOR_CLASSES, ASSIGNORS
from .broker_config import BrokerConfig
from .config_def import ConfigError

_SHARE = "group.share."


def validate_consumer_group_configs(config: BrokerConfig) -> None:
    """GroupCoordinatorConfig's start-up checks of the consumer-group configs: ConfigError as Kafka refuses."""
    protocols = [p.strip().lower() for p in config["group.coordinator.rebalance.protocols"]]
    if "classic" not in protocols:
        raise ConfigError("Disabling the 'classic' protocol is not supported.")
    prefix = "group.consumer."
    for what in ("heartbeat.interval.ms", "session.timeout.ms"):
        value, low, high = (config[prefix + what], config[prefix + "min." + what], config[prefix + "max." + what])
        if high < low:
            raise ConfigError(f"{prefix}max.{what} must be greater than or equal to {prefix}min.{what}")
        if value < low:
            raise ConfigError(f"{prefix}{what} must be greater than or equal to {prefix}min.{what}")
        if value > high:
            raise ConfigError(f"{prefix}{what} must be less than or equal to {prefix}max.{what}")
    if config[prefix + "heartbeat.interval.ms"] >= config[prefix + "session.timeout.ms"]:
        raise ConfigError(f"{prefix}heartbeat.interval.ms must be less than {prefix}session.timeout.ms")
    for name in config[prefix + "assignors"]:
        if ASSIGNOR_CLASSES.get(name, name) not in ASSIGNORS:
            raise ConfigError(f"Invalid value {name} for configuration {prefix}assignors: minibroker implements "
                              "uniform and range")


def validate_share_group_configs(config: BrokerConfig) -> None:
    """The start-up checks Kafka 4.3.1 makes of the `group.share.*` broker configs (GroupCoordinatorConfig's
    heartbeat and session bounds, ShareGroupConfig.validate's): ConfigError with Kafka's message. A release
    without a bound (before 4.3) skips its check."""
    known = config.broker_configs
    if _SHARE + "session.timeout.ms" not in known:
        return  # a release without share groups

    def value(name: str) -> int:
        return int(config[_SHARE + name])

    for what in ("heartbeat.interval.ms", "session.timeout.ms"):
        low, high = value("min." + what), value("max." + what)
        if high < low:
            raise ConfigError(f"{_SHARE}max.{what} must be greater than or equal to {_SHARE}min.{what}")
        if value(what) < low:
            raise ConfigError(f"{_SHARE}{what} must be greater than or equal to {_SHARE}min.{what}")
        if value(what) > high:
            raise ConfigError(f"{_SHARE}{what} must be less than or equal to {_SHARE}max.{what}")
    if value("heartbeat.interval.ms") >= value("session.timeout.ms"):
        raise ConfigError(f"{_SHARE}heartbeat.interval.ms must be less than {_SHARE}session.timeout.ms")
    for what in ("delivery.count.limit", "record.lock.duration.ms", "partition.max.record.locks"):
        if _SHARE + "max." + what not in known:
            continue
        if value("max." + what) < value(what):
            raise ConfigError(f"{_SHARE}max.{what} must be greater than or equal to {_SHARE}{what}")
        if value(what) < value("min." + what):
            raise ConfigError(f"{_SHARE}{what} must be greater than or equal to {_SHARE}min.{what}")
    if value("max.share.sessions") < value("max.size"):
        raise ConfigError(f"{_SHARE}max.share.sessions must be greater than or equal to {_SHARE}max.size")
