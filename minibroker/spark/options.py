"""The data source's options, named and interpreted as Spark's built-in Kafka source names them.

Offsets JSON is Spark's: `{"topicA": {"0": 23, "1": -1}, "topicB": {"0": -2}}`,
where -2 means earliest and -1 latest. Stream offsets kept in Spark's
checkpoint have the same shape with concrete offsets only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..client.consumer import EARLIEST, ISOLATION_LEVELS, LATEST
from ..client.security import ClientSecurity

TopicPartition = tuple[str, int]
#: Spark's offset JSON as a dict: topic -> partition (as a string) -> offset
OffsetJson = dict[str, dict[str, int]]


class OptionError(ValueError):
    """An option is missing, unknown in value, or inconsistent with another."""


def _bool(options: Mapping[str, str], name: str, default: bool) -> bool:
    value = options.get(name.lower())
    if value is None:
        return default
    if value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise OptionError(f"option {name} must be true or false, not {value!r}")


def _int(options: Mapping[str, str], name: str, default: int | None, minimum: int = 1) -> int | None:
    value = options.get(name.lower())
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise OptionError(f"option {name} must be an integer, not {value!r}") from None
    if number < minimum:
        raise OptionError(f"option {name} must be at least {minimum}, not {number}")
    return number


def lower_keys(options: Mapping[str, str]) -> dict[str, str]:
    """Options with lower-case names (Spark's option names are case-insensitive)."""
    return {key.lower(): value for key, value in options.items()}


def include_headers(options: Mapping[str, str]) -> bool:
    """The includeHeaders option (default false, as in Spark): whether rows carry a headers column."""
    return _bool(lower_keys(options), "includeHeaders", False)


def parse_offsets(text: str, name: str) -> str | OffsetJson:
    """'earliest', 'latest' or Spark's per-partition JSON, validated."""
    stripped = text.strip()
    if stripped.lower() in ("earliest", "latest"):
        return stripped.lower()
    try:
        parsed = json.loads(stripped)
        if not isinstance(parsed, dict):
            raise ValueError
        return {str(topic): {str(int(p)): int(offset) for p, offset in parts.items()}
                for topic, parts in parsed.items()}
    except (ValueError, AttributeError, TypeError):
        raise OptionError(f"option {name} must be earliest, latest or JSON such as "
                          f'{{"topic":{{"0":23,"1":-2}}}}, not {text!r}') from None


def offsets_to_json(offsets: Mapping[TopicPartition, int]) -> OffsetJson:
    """{(topic, partition): offset} as Spark's offset JSON (sorted, so equal offsets print equal)."""
    out: OffsetJson = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = offset
    return out


def offsets_from_json(offsets: Mapping[str, Mapping[str, int]]) -> dict[TopicPartition, int]:
    """Spark's offset JSON (as a dict) as {(topic, partition): offset}."""
    return {(topic, int(partition)): int(offset) for topic, parts in offsets.items()
            for partition, offset in parts.items()}


def client_security(options: Mapping[str, str]) -> ClientSecurity:
    """TLS and SASL from the `kafka.`-prefixed options, as Spark's Kafka source passes them to its client."""
    try:
        return ClientSecurity.from_config({key[len("kafka."):]: value for key, value in options.items()
                                           if key.startswith("kafka.")})
    except ValueError as exc:
        raise OptionError(str(exc)) from None


@dataclass(frozen=True)
class SourceOptions:
    """Read options; the names are Spark's Kafka source's."""

    bootstrap_servers: str
    security: ClientSecurity
    subscribe: tuple[str, ...] | None
    subscribe_pattern: str | None
    assign: dict[str, list[int]] | None
    starting_offsets: str | OffsetJson
    ending_offsets: str | OffsetJson
    max_offsets_per_trigger: int | None
    min_partitions: int | None
    isolation_level: int
    include_headers: bool
    fail_on_data_loss: bool
    fetch_max_bytes: int
    poll_timeout_ms: int
    max_records_per_batch: int

    @classmethod
    def parse(cls, raw: Mapping[str, str], streaming: bool) -> SourceOptions:
        options = lower_keys(raw)
        bootstrap = options.get("kafka.bootstrap.servers")
        if not bootstrap:
            raise OptionError("option kafka.bootstrap.servers is required")
        chosen = [name for name in ("subscribe", "subscribepattern", "assign") if options.get(name)]
        if len(chosen) != 1:
            raise OptionError("exactly one of the options subscribe, subscribePattern and assign is required")
        subscribe = None
        if options.get("subscribe"):
            subscribe = tuple(t.strip() for t in options["subscribe"].split(",") if t.strip())
            if not subscribe:
                raise OptionError("option subscribe names no topic")
        pattern = options.get("subscribepattern")
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise OptionError(f"option subscribePattern is not a valid pattern: {exc}") from None
        assign = None
        if options.get("assign"):
            try:
                parsed = json.loads(options["assign"])
                assign = {str(topic): sorted(int(p) for p in parts) for topic, parts in parsed.items()}
            except (ValueError, AttributeError, TypeError):
                raise OptionError('option assign must be JSON such as {"topicA":[0,1],"topicB":[2,4]}') from None
        isolation_text = options.get("kafka.isolation.level", "read_uncommitted").strip().lower()
        if isolation_text not in ISOLATION_LEVELS:
            raise OptionError(f"option kafka.isolation.level must be read_committed or read_uncommitted, "
                              f"not {isolation_text!r}")
        starting = parse_offsets(options.get("startingoffsets", "latest" if streaming else "earliest"),
                                 "startingOffsets")
        ending = parse_offsets(options.get("endingoffsets", "latest"), "endingOffsets")
        if not streaming:
            # Spark's rules for batch queries
            if starting == "latest" or (isinstance(starting, dict) and _has(starting, LATEST)):
                raise OptionError("startingOffsets latest (or -1 in JSON) is not allowed in a batch query")
            if ending == "earliest" or (isinstance(ending, dict) and _has(ending, EARLIEST)):
                raise OptionError("endingOffsets earliest (or -2 in JSON) is not allowed in a batch query")
        elif "endingoffsets" in options:
            raise OptionError("endingOffsets is for batch queries only")
        return cls(
            bootstrap_servers=bootstrap,
            security=client_security(options),
            subscribe=subscribe,
            subscribe_pattern=pattern,
            assign=assign,
            starting_offsets=starting,
            ending_offsets=ending,
            max_offsets_per_trigger=_int(options, "maxOffsetsPerTrigger", None),
            min_partitions=_int(options, "minPartitions", None),
            isolation_level=ISOLATION_LEVELS[isolation_text],
            include_headers=_bool(options, "includeHeaders", False),
            fail_on_data_loss=_bool(options, "failOnDataLoss", True),
            fetch_max_bytes=_int(options, "kafka.fetch.max.bytes", 8 << 20) or 8 << 20,
            poll_timeout_ms=_int(options, "kafkaConsumer.pollTimeoutMs", 120_000) or 120_000,
            max_records_per_batch=_int(options, "maxRecordsPerBatch", 100_000) or 100_000,
        )


def _has(offsets: OffsetJson, value: int) -> bool:
    return any(offset == value for parts in offsets.values() for offset in parts.values())


@dataclass(frozen=True)
class SinkOptions:
    """Write options: Spark's Kafka sink's, plus the producer configs and the transaction mode."""

    bootstrap_servers: str
    security: ClientSecurity
    topic: str | None
    transactional: bool
    transactional_id_prefix: str | None
    transaction_timeout_ms: int
    compression: str | None
    linger_ms: int
    batch_size: int
    max_in_flight: int
    abort_grace_ms: int

    @classmethod
    def parse(cls, raw: Mapping[str, str]) -> SinkOptions:
        options = lower_keys(raw)
        bootstrap = options.get("kafka.bootstrap.servers")
        if not bootstrap:
            raise OptionError("option kafka.bootstrap.servers is required")
        compression = options.get("kafka.compression.type", "none").strip().lower()
        if compression not in ("none", "gzip", "snappy", "lz4", "zstd"):
            raise OptionError(f"option kafka.compression.type {compression!r} is not one of "
                              "none, gzip, snappy, lz4, zstd")
        return cls(
            bootstrap_servers=bootstrap,
            security=client_security(options),
            topic=options.get("topic") or None,
            transactional=_bool(options, "transactional", True),
            transactional_id_prefix=options.get("transactionalidprefix") or None,
            transaction_timeout_ms=_int(options, "kafka.transaction.timeout.ms", 900_000) or 900_000,
            compression=None if compression == "none" else compression,
            linger_ms=_int(options, "kafka.linger.ms", 5, minimum=0) or 0,
            batch_size=_int(options, "kafka.batch.size", 262_144) or 262_144,
            max_in_flight=_int(options, "kafka.max.in.flight.requests.per.connection", 5) or 5,
            abort_grace_ms=_int(options, "abortGraceMs", 30_000, minimum=0) or 0,
        )
