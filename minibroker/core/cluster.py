"""The cluster: nodes, topics with ids, partitions with their logs and producer state."""

from __future__ import annotations

import base64
import dataclasses
import functools
import itertools
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..protocol import records
from ..protocol.errors import ErrorCode, KafkaError
from .acls import StandardAuthorizer, parse_super_users
from .clock import Clock, SystemClock
from .config import LATEST_APPEND_MODE, BrokerConfig
from .credentials import CredentialStore
from .features import FeatureLevels
from .fetch_sessions import FetchSessionCache
from .group_coordinator import GroupCoordinator
from .log_validator import TopicPolicy, validate_batch
from .partition_log import PartitionLog
from .producer_state import ProducerStateManager
from .transaction_coordinator import TransactionCoordinator

METADATA_TOPIC = "__cluster_metadata"  # KRaft's log: never a topic clients may create
LEGAL_TOPIC_CHARS = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_NAME_LENGTH = 249
GROUP_METADATA_TOPIC = "__consumer_offsets"
TRANSACTION_STATE_TOPIC = "__transaction_state"
INTERNAL_TOPICS = frozenset({GROUP_METADATA_TOPIC, TRANSACTION_STATE_TOPIC})
# the broker configs that size each internal topic: (partitions, replication factor)
INTERNAL_TOPIC_SIZES = {
    GROUP_METADATA_TOPIC: ("offsets.topic.num.partitions", "offsets.topic.replication.factor"),
    TRANSACTION_STATE_TOPIC: ("transaction.state.log.num.partitions", "transaction.state.log.replication.factor"),
}
# what GroupCoordinatorService.groupMetadataTopicConfigs and TransactionLog's topic configs set on creation
INTERNAL_TOPIC_CONFIGS: dict[str, dict[str, str]] = {
    GROUP_METADATA_TOPIC: {"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"},
    TRANSACTION_STATE_TOPIC: {"unclean.leader.election.enable": "false", "compression.type": "uncompressed",
                              "cleanup.policy": "compact", "segment.bytes": "104857600"},
}
# QuorumController.MAX_RECORDS_PER_USER_OP: the BoundedList one controller operation fills with metadata records
MAX_RECORDS_PER_USER_OP = 10_000
# ReplicationControlManager.MAX_PARTITIONS_PER_BATCH: partitions one CreateTopics request may ask for
MAX_PARTITIONS_PER_BATCH = 10_000
LONG_MAX = 2**63 - 1
KAFKA_BATCHES_TO_RETAIN = 5  # what every Kafka release before KIP-1269 keeps per producer
_CODECS = {"uncompressed": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
_APPEND_SETTINGS = "(append settings)"  # a derived entry in a topic's config cache, beside the config names


@dataclass(frozen=True, slots=True)
class _AppendSettings:
    """A topic's configs as an append reads them: its policy as is, and when recompressing to `codec`."""

    plain: TopicPolicy
    recompressing: TopicPolicy
    codec: int | None  # compression.type's codec id; None for "producer" (keep the producer's)


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


@dataclass
class NewTopic:
    """One topic a CreateTopics request (or auto-creation) asks for, as Kafka's CreatableTopic."""

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    configs: dict[str, str | None] = field(default_factory=dict)
    # (partition index, broker ids) pairs of a manual assignment
    assignments: list[tuple[int, list[int]]] = field(default_factory=list)

    def requested_partitions(self, default: int) -> int:
        """The partitions this topic counts for, as ReplicationControlManager.validateTotalNumberOfPartitions."""
        if self.assignments:
            return len(self.assignments)
        if self.num_partitions == -1:
            return default
        return max(self.num_partitions, 0)


@dataclass
class TopicPlan:
    """A validated topic creation: what it will create and the metadata records Kafka's controller would write."""

    name: str
    num_partitions: int
    replication_factor: int
    overrides: dict[str, Any]
    replicas: list[list[int]] | None = None  # a manual assignment, one replica list per partition
    topic: Topic | None = None  # set once created

    @property
    def record_count(self) -> int:
        """One TopicRecord, one ConfigRecord per override, one PartitionRecord per partition."""
        return 1 + len(self.overrides) + self.num_partitions


class Cluster:
    """The whole broker state. Sans-IO: time comes from `clock`, nothing here awaits."""

    def __init__(
        self,
        config: BrokerConfig | None = None,
        clock: Clock | None = None,
        nodes: list[Node] | None = None,
        cluster_id: str | None = None,
    ) -> None:
        self.config = config or BrokerConfig()
        self.clock: Clock = clock or SystemClock()
        self.nodes: list[Node] = nodes or [Node(self.config["node.id"], "127.0.0.1", 9092)]
        self._nodes_by_id = {node.node_id: node for node in self.nodes}  # the nodes are fixed at start-up
        self.controller_id = self.nodes[0].node_id
        self.cluster_id = cluster_id or base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        self.topics: dict[str, Topic] = {}
        self.topics_by_id: dict[uuid.UUID, Topic] = {}
        # ReplicationControlManager.topicsWithCollisionChars: names holding '.' or '_', by collision_key
        self._colliding_names: dict[str, set[str]] = {}
        self._producer_ids = itertools.count(1000)
        # as Kafka, the first retention check comes one interval after start-up, not at once
        self._next_retention_check = self.clock.now_ms() + self.config["log.retention.check.interval.ms"]
        self._next_producer_expiry_check = self.clock.now_ms() + self.config["producer.id.expiration.check.interval.ms"]
        self._leader_cycle = itertools.count()
        self._fetch_sessions: dict[int, FetchSessionCache] = {}  # per node: each is a broker with its own cache
        self._modes: dict[int, int | None] = {}  # per node: duplicate_range, for config version _modes_version
        self._modes_version = -1
        self.groups = GroupCoordinator(self.config, self.clock, self._partition_exists)
        # SCRAM credentials, cluster metadata as in KRaft (AlterUserScramCredentials); PLAIN users are per listener
        self.credentials = CredentialStore()
        # ACLs, cluster metadata too (AclControlManager); None without `authorizer.class.name`
        self.authorizer = (StandardAuthorizer(parse_super_users(self.config["super.users"]),
                                              self.config["allow.everyone.if.no.acl.found"])
                           if self.config["authorizer.class.name"] else None)
        self.transactions = TransactionCoordinator(self, self.config, self.clock, self.new_producer_id)
        # finalized feature levels (FeatureControlManager); apis/feature_levels.py sets them from the nodes'
        # releases, as the nodes' releases are known there
        self.features: FeatureLevels | None = None

    # -- topics ---------------------------------------------------------

    def _partition_exists(self, topic: str, partition: int) -> bool:
        found = self.topics.get(topic)
        return found is not None and 0 <= partition < len(found.partitions)

    def coordinator_node(self, key: str, internal_topic: str = GROUP_METADATA_TOPIC) -> Node:
        """The node coordinating a group (or, with TRANSACTION_STATE_TOPIC, a transactional id).

        As Kafka's FindCoordinator: the leader of the key's partition of the internal topic, which
        is created on first need, as Kafka's coordinators have it created.
        """
        topic = self.internal_topic(internal_topic)
        partition = topic.partitions[coordinator_partition(key, len(topic.partitions))]
        return self.node(partition.leader_id) or self.nodes[0]

    def internal_topic(self, name: str) -> Topic:
        """`__consumer_offsets` or `__transaction_state`, created with Kafka's defaults if it does not exist yet."""
        topic = self.topics.get(name)
        if topic is None:
            # partition p led by node p % nodes, whatever topics were created before
            topic = self.apply_plan(self.plan_topic(self._creatable_topic(name)), first_slot=0)
        return topic

    def node(self, node_id: int) -> Node | None:
        return self._nodes_by_id.get(node_id)

    def set_topic_configs(self, topic: Topic, overrides: Mapping[str, Any]) -> None:
        """Make `overrides` (validated) the topic's config overrides (AlterConfigs, IncrementalAlterConfigs)."""
        topic.configs = MappingProxyType(dict(overrides))

    def topic_config(self, topic: Topic, name: str) -> Any:
        """The effective value of topic config `name` for `topic` (cached until its configs change)."""
        version, overrides = topic.config_cache_for
        if version != self.config.version or overrides is not topic.configs:
            topic.config_cache = {}
            topic.config_cache_for = (self.config.version, topic.configs)
        cache = topic.config_cache
        if name not in cache:
            cache[name] = self.config.topic_value(name, topic.configs)
        return cache[name]

    def _append_settings(self, topic: Topic) -> _AppendSettings:
        """The topic configs an append reads, gathered once per config change (kept in topic_config's cache)."""
        max_message_bytes = self.topic_config(topic, "max.message.bytes")  # brings the cache up to date
        settings = topic.config_cache.get(_APPEND_SETTINGS)
        if settings is None:
            target = self.topic_config(topic, "compression.type")
            before_max_ms, after_max_ms = self.config.timestamp_bounds(topic.configs)
            plain = TopicPolicy(
                log_append_time=self.topic_config(topic, "message.timestamp.type") == "LogAppendTime",
                before_max_ms=before_max_ms,
                after_max_ms=after_max_ms,
                compacted="compact" in self.topic_config(topic, "cleanup.policy"),
                max_message_bytes=max_message_bytes,
                recompressing=False,
            )
            codec = None if target == "producer" else _CODECS[target]
            settings = topic.config_cache[_APPEND_SETTINGS] = _AppendSettings(
                plain, dataclasses.replace(plain, recompressing=True), codec)
        return settings

    def fetch_sessions(self, node_id: int) -> FetchSessionCache:
        """Node `node_id`'s fetch sessions (KIP-227), sized by `max.incremental.fetch.session.cache.slots`."""
        cache = self._fetch_sessions.get(node_id)
        if cache is None:
            cache = self._fetch_sessions[node_id] = FetchSessionCache(
                self.config["max.incremental.fetch.session.cache.slots"])
        return cache

    def batches_to_retain(self, partition: Partition) -> int:
        """The KIP-1269 window of a partition: the topic config, or Kafka's fixed 5 on a leader without KIP-1269,
        or 1 on a leader in KIP-758's latest-append mode (the one batch whose retry still gets its offset)."""
        leader = self.node(partition.leader_id)
        if leader is not None and not leader.kip1269:
            return KAFKA_BATCHES_TO_RETAIN
        if self.duplicate_range(partition) is not None:
            return 1
        return int(self.topic_config(partition.topic, "producer.state.batches.to.retain"))

    def _batches_kept(self, partition: Partition) -> int:
        """How many batches per producer the shared producer state keeps: what the most demanding node needs, as
        each Kafka replica builds its own state from the log (a window-mode follower keeps its window even while
        a latest-append node leads, so a leader moved back still finds older retries)."""
        kept = self.batches_to_retain(partition)
        for node_id in partition.replicas:
            if node_id != partition.leader_id and node_id in self._nodes_by_id:
                kept = max(kept, self._window_on(node_id, partition))
        return kept

    def _window_on(self, node_id: int, partition: Partition) -> int:
        node = self.node(node_id)
        if node is not None and not node.kip1269:
            return KAFKA_BATCHES_TO_RETAIN
        if self._node_range(node_id) is not None:
            return 1
        return int(self.topic_config(partition.topic, "producer.state.batches.to.retain"))

    def duplicate_range(self, partition: Partition) -> int | None:
        """KIP-758's `max.in.flight.sequence.number.per.connection` when the partition's leader is in
        latest-append mode, else None (Kafka's design, with the KIP-1269 window)."""
        return self._node_range(partition.leader_id)

    def _node_range(self, node_id: int) -> int | None:
        """`max.in.flight.sequence.number.per.connection` of a latest-append node, None for a window node."""
        if self._modes_version != self.config.version:
            self._modes.clear()
            self._modes_version = self.config.version
        if node_id not in self._modes:
            leader = self.node(node_id)
            latest_append = (leader is not None and leader.kip1269
                             and self.config.value("producer.state.mode", node_id) == LATEST_APPEND_MODE)
            self._modes[node_id] = (self.config.value("max.in.flight.sequence.number.per.connection", node_id)
                                    if latest_append else None)
        return self._modes[node_id]

    def create_topic(
        self,
        name: str,
        num_partitions: int = -1,
        replication_factor: int = -1,
        configs: dict[str, str | None] | None = None,
        validate_only: bool = False,
    ) -> Topic | None:
        """Create one topic, as CreateTopics does; KafkaError with Kafka's code when refused."""
        result = self.create_topics([NewTopic(name, num_partitions, replication_factor, dict(configs or {}))],
                                    validate_only)[0]
        if isinstance(result, KafkaError):
            raise result
        return result.topic

    def create_topics(self, new_topics: list[NewTopic], validate_only: bool = False) -> list[TopicPlan | KafkaError]:
        """Create topics as one controller operation (ReplicationControlManager.createTopics).

        One result per topic: its plan (with the created topic unless `validate_only`) or its refusal.
        Raises KafkaError(POLICY_VIOLATION) and creates nothing when the whole request is too large:
        more than MAX_PARTITIONS_PER_BATCH partitions asked for, or more than MAX_RECORDS_PER_USER_OP
        metadata records to write. Both are checked before anything is allocated.
        """
        default = self.config["num.partitions"]
        if sum(t.requested_partitions(default) for t in new_topics) > MAX_PARTITIONS_PER_BATCH:
            raise KafkaError(ErrorCode.POLICY_VIOLATION, "Excessively large number of partitions per request.")
        results: list[TopicPlan | KafkaError] = []
        records = 0
        for new_topic in new_topics:
            try:
                plan = self.plan_topic(new_topic)
            except KafkaError as exc:
                results.append(exc)
                continue
            records += plan.record_count
            if records > MAX_RECORDS_PER_USER_OP:
                # the controller's BoundedList overflows; QuorumController (EventHandlerExceptionInfo) fails
                # the operation as a whole with a PolicyViolationException
                raise KafkaError(ErrorCode.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")
            results.append(plan)
        if not validate_only:
            for result in results:
                if isinstance(result, TopicPlan):
                    self.apply_plan(result)
        return results

    def plan_topic(self, new_topic: NewTopic) -> TopicPlan:
        """Validate one topic creation as ReplicationControlManager does, creating nothing; KafkaError if refused."""
        name = new_topic.name
        if name in self.topics:
            raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        # ReplicationControlManager.validateNewTopicNames: a collision replaces Topic.validate's refusal; of the
        # colliding names Kafka takes its set's first, here the least, to be deterministic
        colliding = self._colliding_names.get(collision_key(name))
        if colliding:
            raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION,
                             f"Topic '{name}' collides with existing topic: {min(colliding)}")
        validate_topic_name(name)
        unset = next((config for config, value in new_topic.configs.items() if value is None), None)
        if unset is not None:  # ReplicationControlManager.computeConfigChanges, before any value is parsed
            raise KafkaError(ErrorCode.INVALID_CONFIG, f"Null value not supported for topic configs: {unset}")
        overrides = self.config.parse_topic_configs(new_topic.configs)
        if new_topic.assignments:
            if new_topic.replication_factor != -1:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "A manual partition assignment was specified, but "
                                 "replication factor was not set to -1.")
            if new_topic.num_partitions != -1:
                raise KafkaError(ErrorCode.INVALID_REQUEST, "A manual partition assignment was specified, but "
                                 "numPartitions was not set to -1.")
            by_index: dict[int, list[int]] = {}
            replication: int | None = None
            for index, brokers in new_topic.assignments:
                if index in by_index:
                    raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                     f"Found multiple manual partition assignments for partition {index}")
                self.validate_manual_assignment(brokers, replication)
                replication = len(brokers)
                by_index[index] = list(brokers)
            if any(i not in by_index for i in range(len(by_index))):
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                                 "partitions should be a consecutive 0-based integer sequence")
            replicas = [by_index[i] for i in range(len(by_index))]
            return TopicPlan(name, len(replicas), len(replicas[0]), overrides, replicas)
        replication_factor, num_partitions = new_topic.replication_factor, new_topic.num_partitions
        if replication_factor < -1 or replication_factor == 0:
            raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR,
                             "Replication factor must be larger than 0, or -1 to use the default value.")
        if num_partitions < -1 or num_partitions == 0:
            raise KafkaError(ErrorCode.INVALID_PARTITIONS,
                             "Number of partitions was set to an invalid non-positive value.")
        if num_partitions == -1:
            num_partitions = self.config["num.partitions"]
        if replication_factor == -1:
            replication_factor = self.config["default.replication.factor"]
        if replication_factor > len(self.nodes):
            raise KafkaError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                f"Unable to replicate the partition {replication_factor} time(s): "
                f"The target replication factor of {replication_factor} cannot be reached because only "
                f"{len(self.nodes)} broker(s) are registered or some brokers have all their log directories "
                f"cordoned.",
            )
        return TopicPlan(name, num_partitions, replication_factor, overrides)

    def validate_manual_assignment(self, replicas: list[int], replication_factor: int | None) -> None:
        """INVALID_REPLICA_ASSIGNMENT unless `replicas` is valid (validateManualPartitionAssignment)."""
        if not replicas:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             "The manual partition assignment includes an empty replica list.")
        previous = None
        for broker_id in sorted(replicas):
            if self.node(broker_id) is None:
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment includes "
                                 f"broker {broker_id}, but no such broker is registered.")
            if broker_id == previous:
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment includes "
                                 f"the broker {broker_id} more than once.")
            previous = broker_id
        if replication_factor is not None and len(replicas) != replication_factor:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"The manual partition assignment includes a "
                             f"partition with {len(replicas)} replica(s), but this is not consistent with previous "
                             f"partitions, which have {replication_factor} replica(s).")

    def apply_plan(self, plan: TopicPlan, first_slot: int | None = None) -> Topic:
        """Create the topic a validated plan describes."""
        topic = Topic(plan.name, uuid.uuid4(), [], MappingProxyType(dict(plan.overrides)), plan.replication_factor)
        self._add_partitions(topic, plan.num_partitions, plan.replicas, first_slot)
        self.topics[plan.name] = topic
        self.topics_by_id[topic.topic_id] = topic
        if "." in plan.name or "_" in plan.name:
            self._colliding_names.setdefault(collision_key(plan.name), set()).add(plan.name)
        plan.topic = topic
        return topic

    def _add_partitions(self, topic: Topic, count: int, assignment: list[list[int]] | None = None,
                        first_slot: int | None = None) -> None:
        """New partitions on the assigned replicas, else with leaders spread round-robin over the nodes.

        `first_slot` starts the spread at that node instead of where the previous topic left it.
        """
        for n in range(count):
            index = len(topic.partitions)
            if assignment is not None:
                replicas = list(assignment[n])
            else:
                first = (first_slot + n if first_slot is not None else next(self._leader_cycle)) % len(self.nodes)
                replicas = [self.nodes[(first + i) % len(self.nodes)].node_id
                            for i in range(min(topic.replication_factor, len(self.nodes)))]
            topic.partitions.append(Partition(topic, index, replicas[0], PartitionLog(topic.name, index),
                                              replicas=replicas))

    def create_partitions(self, name: str, total: int, validate_only: bool = False,
                          assignments: list[list[int]] | None = None) -> None:
        """Grow one topic to `total` partitions (CreatePartitions); KafkaError with Kafka's code when refused."""
        error = self.create_partitions_batch([(name, total, assignments)], validate_only)[0]
        if error is not None:
            raise error

    def create_partitions_batch(self, requests: list[tuple[str, int, list[list[int]] | None]],
                                validate_only: bool = False) -> list[KafkaError | None]:
        """Grow topics as one controller operation (ReplicationControlManager.createPartitions); one error per topic.

        Each new partition is one metadata record. A topic whose records would overflow the
        controller's bound of MAX_RECORDS_PER_USER_OP fails alone, as Kafka's catch-all answers the
        BoundedListTooLongException: UNKNOWN_SERVER_ERROR without a message; the bound stays full for the
        topics after it. Kafka commits the records that fitted before the overflow; here nothing of
        that topic is created. The bound is checked before anything is allocated.
        """
        errors: list[KafkaError | None] = []
        grown: list[tuple[Topic, int, list[list[int]] | None]] = []
        records = 0
        for name, total, assignments in requests:
            try:
                topic, additional = self._validate_growth(name, total, assignments)
                if records + additional > MAX_RECORDS_PER_USER_OP:
                    records = MAX_RECORDS_PER_USER_OP
                    raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR)
                records += additional
            except KafkaError as exc:
                errors.append(exc)
                continue
            grown.append((topic, additional, assignments))
            errors.append(None)
        if not validate_only:
            for topic, additional, assignments in grown:
                self._add_partitions(topic, additional, assignments)
        return errors

    def _validate_growth(self, name: str, total: int, assignments: list[list[int]] | None) -> tuple[Topic, int]:
        """The topic and how many partitions it gains; KafkaError as ReplicationControlManager refuses."""
        topic = self.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        current = len(topic.partitions)
        if total == current:
            raise KafkaError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s).")
        if total < current:
            raise KafkaError(ErrorCode.INVALID_PARTITIONS, f"The topic {name} currently has {current} partition(s); "
                             f"{total} would not be an increase.")
        additional = total - current
        if assignments is not None:
            if len(assignments) != additional:
                raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"Attempted to add {additional} additional "
                                 f"partition(s), but only {len(assignments)} assignment(s) were specified.")
            for replicas in assignments:
                self.validate_manual_assignment(replicas, len(topic.partitions[0].replicas))
        return topic, additional

    def delete_topic(self, name: str) -> Topic:
        """Remove a topic and its data (DeleteTopics)."""
        topic = self.topics.pop(name, None)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")
        del self.topics_by_id[topic.topic_id]
        colliding = self._colliding_names.get(collision_key(name))
        if colliding is not None:
            colliding.discard(name)
            if not colliding:
                del self._colliding_names[collision_key(name)]
        self.groups.forget_topic(name)
        return topic

    def partition(self, topic_name: str, index: int) -> Partition:
        """The partition, or KafkaError(UNKNOWN_TOPIC_OR_PARTITION)."""
        topic = self.topics.get(topic_name)
        if topic is None or not 0 <= index < len(topic.partitions):
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        return topic.partitions[index]

    # -- leadership (AlterPartitionReassignments, ElectLeaders) ------------------

    def reassign_replicas(self, partition: Partition, replicas: list[int],
                          allow_replication_factor_change: bool = True) -> None:
        """Give the partition a new replica list, as a completed reassignment.

        Every replica shares the one log, so a reassignment completes at once. The
        leader stays unless it is no longer a replica; then the first new replica
        leads, as Kafka's controller elects when a reassignment removes the leader.
        """
        # as ReplicationControlManager.changePartitionReassignment: the target first, then its size
        self.validate_manual_assignment(replicas, None)
        if not allow_replication_factor_change and len(replicas) != len(partition.replicas):
            raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR,
                             f"The replication factor is changed from {len(partition.replicas)} to {len(replicas)}")
        partition.replicas = list(replicas)
        if partition.leader_id not in replicas:
            self._change_leader(partition, replicas[0])

    def elect_preferred_leader(self, partition: Partition) -> None:
        """Make the first replica the leader (a PREFERRED election); ELECTION_NOT_NEEDED if it already is."""
        preferred = partition.replicas[0]
        if partition.leader_id == preferred:
            raise KafkaError(ErrorCode.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.")
        self._change_leader(partition, preferred)

    def move_leader(self, topic_name: str, index: int, node_id: int) -> None:
        """Make `node_id` lead the partition: reassign it to the front of the replicas, then elect it.

        The same two steps an operator takes with AlterPartitionReassignments and ElectLeaders.
        """
        partition = self.partition(topic_name, index)
        if partition.leader_id == node_id:
            return
        others = [replica for replica in partition.replicas if replica != node_id]
        self.reassign_replicas(partition, [node_id, *others[: max(len(partition.replicas) - 1, 0)]])
        if partition.leader_id != node_id:
            self.elect_preferred_leader(partition)

    def _change_leader(self, partition: Partition, node_id: int) -> None:
        partition.leader_id = node_id
        partition.log.bump_leader_epoch()  # clients fence requests made under the old leader by its epoch

    def auto_create_topics(self, names: list[str]) -> dict[str, Topic]:
        """Auto-create `names` if `auto.create.topics.enable`, as one CreateTopics (AutoTopicCreationManager).

        Broker defaults, or an internal topic's own settings. The created topics by name: none when
        the controller refuses the request as a whole (it is bounded like any CreateTopics).
        """
        names = [name for name in names if name != METADATA_TOPIC]  # the controller refuses it (ControllerApis)
        if not self.config["auto.create.topics.enable"] or not names:
            return {}
        try:
            results = self.create_topics([self._creatable_topic(name) for name in names])
        except KafkaError:
            return {}
        return {r.name: r.topic for r in results if isinstance(r, TopicPlan) and r.topic is not None}

    def _creatable_topic(self, name: str) -> NewTopic:
        """What AutoTopicCreationManager.creatableTopic asks the controller for."""
        if name not in INTERNAL_TOPICS:
            return NewTopic(name)
        known = set(self.config.topic_names())
        configs: dict[str, str | None] = {k: v for k, v in INTERNAL_TOPIC_CONFIGS[name].items() if k in known}
        partitions, replication_factor = (self.config[key] for key in INTERNAL_TOPIC_SIZES[name])
        # Kafka's default replication factor (3) cannot be met by fewer nodes, and a single-node Kafka must lower
        # it or its coordinators never become available; here it is capped to the node count instead
        return NewTopic(name, partitions, min(replication_factor, len(self.nodes)), configs)

    def new_producer_id(self) -> int:
        """A fresh, never reused producer id."""
        return next(self._producer_ids)

    # -- produce ---------------------------------------------------------

    def append(self, partition: Partition, batch_bytes: bytes | bytearray | memoryview,
               header: records.BatchHeader | None = None, take_over: bool = False) -> AppendResult:
        """Validate and append one client batch, as Kafka's leader append does.

        `header` is the batch's header when the caller has read it already. A bytearray, or a
        writable memoryview with `take_over` (a view into a request frame nothing else uses), is
        taken over: once the append succeeds the log holds that very buffer (patched in place),
        so the caller must not use it again; anything else is copied once.
        Raises KafkaError with Kafka's code; nothing is appended, the batch is not changed
        and producer state does not change unless the whole append succeeds.
        """
        topic = partition.topic
        log = partition.log
        tp = partition.name
        if header is None or header.magic != 2 or header.size_in_bytes != len(batch_bytes) or \
                header.batch_length < records.HEADER_SIZE - records.LOG_OVERHEAD:
            # anything but one whole batch read already (Produce's common case) is looked at batch by batch
            if len(records.split_batches(batch_bytes)) != 1:
                raise KafkaError(
                    ErrorCode.INVALID_RECORD,
                    "Produce requests must carry exactly one record batch per partition",
                )
            if header is None:
                header = records.read_header(batch_bytes)
        if header.base_offset != 0:
            raise KafkaError(ErrorCode.INVALID_RECORD, f"The baseOffset of the record batch in the append to {tp} "
                             f"should be 0, but it is {header.base_offset}")
        settings = self._append_settings(topic)
        max_message_bytes = settings.plain.max_message_bytes
        if header.size_in_bytes > max_message_bytes:
            raise KafkaError(
                ErrorCode.MESSAGE_TOO_LARGE,
                f"The record batch size in the append to {tp} is {header.size_in_bytes} bytes which exceeds the "
                f"maximum configured value of {max_message_bytes}.",
            )
        if not records.crc_is_valid(batch_bytes, header):
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, f"Record is corrupt (stored crc = {header.crc}) in topic "
                             f"partition {tp}.")
        now = self.clock.now_ms()
        recompressing = settings.codec is not None and settings.codec != header.compression
        policy = settings.recompressing if recompressing else settings.plain
        validated = validate_batch(batch_bytes, header, tp, policy, now)  # every record, before any state changes
        log_append_time = validated.log_append_time
        check = partition.producer_state.check_append(header, tp, log.log_end_offset, self.duplicate_range(partition))
        if check.duplicate is not None:
            return AppendResult(check.duplicate.first_offset, check.duplicate.timestamp, log.log_start_offset)
        batch: bytearray | memoryview
        if recompressing:
            assert settings.codec is not None
            batch = records.recompress(batch_bytes, settings.codec, header)
            if len(batch) > max_message_bytes:
                raise KafkaError(
                    ErrorCode.MESSAGE_TOO_LARGE,
                    f"Message batch size is {len(batch)} bytes in append to partition {tp} which exceeds the "
                    f"maximum configured size of {max_message_bytes}.",
                )
        else:
            # the one copy from the request into a buffer the log owns (none if the caller hands one over)
            if isinstance(batch_bytes, bytearray) or (
                    take_over and isinstance(batch_bytes, memoryview) and not batch_bytes.readonly):
                batch = batch_bytes
            else:
                batch = bytearray(batch_bytes)
        # as LogValidator: maxTimestamp is the newest record's (or the append time), rewritten if the client's differs
        records.set_max_timestamp(batch, validated.timestamp_type, validated.max_timestamp)
        stored_timestamp = validated.max_timestamp
        base_offset = log.append(batch, header, stored_timestamp, now)
        window = self._batches_kept(partition)
        partition.producer_state.commit_append(header, base_offset, stored_timestamp, window)
        log.announce_append(len(batch))  # only now: a woken read_committed fetch must see the open transaction
        return AppendResult(base_offset, log_append_time, log.log_start_offset)

    # -- transaction markers (the transaction coordinator's TransactionMarkerWriter) ----------

    def write_txn_marker(self, topic: str, partition: int, producer_id: int, producer_epoch: int, committed: bool,
                         coordinator_epoch: int) -> None:
        """Append a COMMIT or ABORT marker to the partition and settle its open transaction; nothing if it is gone."""
        found = self.topics.get(topic)
        if found is not None and 0 <= partition < len(found.partitions):
            self._write_txn_marker(found.partitions[partition], producer_id, producer_epoch, committed,
                                   coordinator_epoch)

    def complete_txn_offsets(self, group_id: str, producer_id: int, committed: bool) -> None:
        """The offsets the producer's transaction committed for the group become visible, or are dropped."""
        self.groups.complete_txn_offsets(group_id, producer_id, committed)

    def _write_txn_marker(self, partition: Partition, producer_id: int, producer_epoch: int, committed: bool,
                          coordinator_epoch: int) -> int:
        """Append a COMMIT or ABORT marker for `producer_id` and settle its open transaction; its offset."""
        entry = partition.producer_state.producers.get(producer_id)
        if entry is not None and producer_epoch < entry.producer_epoch:
            raise KafkaError(ErrorCode.INVALID_PRODUCER_EPOCH,
                             f"Marker epoch {producer_epoch} is below the current epoch {entry.producer_epoch}")
        now = self.clock.now_ms()
        batch = bytearray(records.build_end_txn_marker(producer_id, producer_epoch, committed, coordinator_epoch,
                                                       now))
        offset = partition.log.append(batch, records.read_header(batch))
        partition.producer_state.complete_txn(producer_id, producer_epoch, coordinator_epoch, offset, now, committed)
        partition.log.announce_append(len(batch))  # the LSO has moved: wake read_committed fetches
        return offset

    def last_stable_offset(self, partition: Partition) -> int:
        """The partition's LSO: the first offset of its earliest open transaction, or the high watermark."""
        return partition.producer_state.last_stable_offset(partition.log.high_watermark)

    # -- time ------------------------------------------------------------

    def tick(self) -> None:
        """Run what is due on the clock: group and transaction deadlines, retention, producer-id expiry."""
        self.groups.tick()
        self.transactions.tick()
        now = self.clock.now_ms()
        if now >= self._next_retention_check:
            self._next_retention_check = now + self.config["log.retention.check.interval.ms"]
            self.apply_retention()
        if now >= self._next_producer_expiry_check:
            self._next_producer_expiry_check = now + self.config["producer.id.expiration.check.interval.ms"]
            self.expire_producers()

    def apply_retention(self) -> None:
        """Apply `retention.ms` and `retention.bytes` to every partition now."""
        now = self.clock.now_ms()
        for topic in self.topics.values():
            if "delete" not in self.topic_config(topic, "cleanup.policy"):
                continue
            retention_ms = self.topic_config(topic, "retention.ms")
            retention_bytes = self.topic_config(topic, "retention.bytes")
            for partition in topic.partitions:
                partition.log.apply_retention(now, retention_ms, retention_bytes)
                partition.producer_state.forget_aborted_before(partition.log.log_start_offset)

    def expire_producers(self) -> None:
        """Remove producer entries idle past `producer.id.expiration.ms` (KIP-854)."""
        now = self.clock.now_ms()
        expiration = self.config["producer.id.expiration.ms"]
        for topic in self.topics.values():
            for partition in topic.partitions:
                partition.producer_state.remove_expired(now, expiration)
