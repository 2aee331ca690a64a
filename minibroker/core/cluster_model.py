"""The cluster model: nodes and their listeners, topics with ids, partitions with their logs and producer state.

Also the rules for a topic's name, and the hash that maps a group or transactional id to its coordinator's
partition. What creates and changes topics is replication_control.py; what runs them is cluster.py.
"""

from __future__ import annotations

import functools
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..protocol.errors import ErrorCode, KafkaError
from .partition_log import PartitionLog
from .producer_state import ProducerStateManager

METADATA_TOPIC = "__cluster_metadata"  # KRaft's log: never a topic clients may create
LEGAL_TOPIC_CHARS = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_NAME_LENGTH = 249
GROUP_METADATA_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"
INTERNAL_TOPICS = frozenset({GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC})


@dataclass
class Endpoint:
    """One listener of a node: its name and security protocol, where it binds and what Metadata tells clients."""

    listener: str
    security_protocol: str
    host: str
    port: int
    bind_host: str
    bind_port: int


@dataclass
class Node:
    """A broker node as Metadata describes it.

    `host`/`port` (and `bind_host`/`bind_port`) are its first listener's; `endpoints` are all of them
    (`listeners`, `advertised.listeners`), and clients are told the addresses of the listener they
    connected through (`address`).
    """

    node_id: int
    host: str  # what Metadata advertises
    port: int
    rack: str | None = None
    # where the listener binds; None: the advertised address (a proxy in front changes the advertised one)
    bind_host: str | None = None
    bind_port: int | None = None
    # the Kafka release this node speaks as (apis/releases.py); only "latest" has KIP-1269
    release: str = "latest"
    endpoints: list[Endpoint] = field(default_factory=list)

    def address(self, listener: str | None = None) -> tuple[str, int]:
        """The advertised host and port of `listener` (default: the first listener)."""
        for endpoint in self.endpoints:
            if endpoint.listener == listener:
                return endpoint.host, endpoint.port
        return self.host, self.port

    @property
    def kip1269(self) -> bool:
        """Whether this node honours `producer.state.batches.to.retain` (no released Kafka does)."""
        return self.release == "latest"


@dataclass
class AppendResult:
    """What Produce reports for one appended (or duplicate) batch."""

    base_offset: int
    log_append_time: int
    log_start_offset: int


@dataclass
class Partition:
    """A partition: its log, its producer state and its leader."""

    topic: Topic
    index: int
    leader_id: int
    log: PartitionLog
    producer_state: ProducerStateManager = field(default_factory=ProducerStateManager)
    # the nodes holding the partition, leader first; one shared log, so every replica is in sync
    replicas: list[int] = field(default_factory=list)

    @functools.cached_property
    def name(self) -> str:
        """`topic-index`, as Kafka prints a TopicPartition (a topic is never renamed)."""
        return f"{self.topic.name}-{self.index}"


@dataclass(eq=False)
class Topic:
    """A topic: name, id, partitions and its config overrides."""

    name: str
    topic_id: uuid.UUID
    partitions: list[Partition]
    configs: Mapping[str, Any]  # the overrides, read-only: Cluster.set_topic_configs replaces them as a whole
    replication_factor: int = 1
    # effective values read on the produce path, valid while the overrides and the broker config version are
    config_cache: dict[str, Any] = field(default_factory=dict, repr=False)
    config_cache_for: tuple[int, Mapping[str, Any] | None] = field(default=(-1, None), repr=False)

    def partition(self, index: int) -> Partition | None:
        """Partition `index` of the topic, or None if the topic has no such partition."""
        return self.partitions[index] if 0 <= index < len(self.partitions) else None


def invalid_topic_reason(name: str) -> str | None:
    """Why Topic.validate refuses `name` (its detectInvalidTopic wording), else None."""
    if not name:
        return "the empty string is not allowed"
    if name in (".", ".."):
        return f"'{name}' is not allowed"
    if len(name.encode("utf-16-le")) // 2 > MAX_TOPIC_NAME_LENGTH:  # String.length(): UTF-16 code units
        return f"the length of '{name}' is longer than the max allowed length {MAX_TOPIC_NAME_LENGTH}"
    if not LEGAL_TOPIC_CHARS.fullmatch(name):  # fullmatch: '$' would let a trailing newline through
        return f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    return None


def validate_topic_name(name: str | None) -> None:
    """KafkaError(INVALID_TOPIC_EXCEPTION) unless `name` is a legal topic name, with Topic.validate's message."""
    reason = invalid_topic_reason(name or "")
    if reason is not None:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic name is invalid: {reason}")


def collision_key(name: str) -> str:
    """Topic.unifyCollisionChars: '.' and '_' are one character in metric names, so such names collide."""
    return name.replace(".", "_")


def java_string_hash(key: str) -> int:
    """Java's String.hashCode (over UTF-16 code units, 32-bit), which Kafka's coordinators partition by."""
    h = 0
    data = key.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def coordinator_partition(key: str, partitions: int) -> int:
    """Utils.abs(key.hashCode()) % partitions: the internal-topic partition a group or transactional id maps to."""
    h = java_string_hash(key)
    return (0 if h == -(1 << 31) else abs(h)) % partitions
