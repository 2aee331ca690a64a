"""Topic creation, growth, deletion and partition leadership, as Kafka's ReplicationControlManager.

Validates a CreateTopics, CreatePartitions or AlterPartitionReassignments request the way Kafka's controller
does (names, collisions, sizes, manual assignments, the bound on one operation's metadata records) and then
changes the topics it holds. Every replica shares one log, so a reassignment completes at once and an election
only moves the leader and bumps its epoch.
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..protocol.errors import ErrorCode, KafkaError
from .cluster_model import (
    GROUP_METADATA_TOPIC,
    INTERNAL_TOPICS,
    METADATA_TOPIC,
    TRANSACTION_STATE_TOPIC,
    Node,
    Partition,
    Topic,
    collision_key,
    validate_topic_name,
)
from .config import BrokerConfig
from .partition_log import PartitionLog

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



class ReplicationControl:
    """The topics of the cluster and their partitions' replicas and leaders (ReplicationControlManager)."""

    def __init__(self, config: BrokerConfig, nodes: list[Node]) -> None:
        self.config = config
        self.nodes = nodes  # fixed at start-up
        self._node_ids = frozenset(node.node_id for node in nodes)
        self.topics: dict[str, Topic] = {}
        self.topics_by_id: dict[uuid.UUID, Topic] = {}
        # ReplicationControlManager.topicsWithCollisionChars: names holding '.' or '_', by collision_key
        self._colliding_names: dict[str, set[str]] = {}
        self._leader_cycle = itertools.count()

    def partition_exists(self, topic: str, partition: int) -> bool:
        """Whether `topic` exists and has partition `partition`."""
        found = self.topics.get(topic)
        return found is not None and 0 <= partition < len(found.partitions)

    def partition(self, topic_name: str, index: int) -> Partition:
        """The partition, or KafkaError(UNKNOWN_TOPIC_OR_PARTITION)."""
        topic = self.topics.get(topic_name)
        if topic is None or not 0 <= index < len(topic.partitions):
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        return topic.partitions[index]

    # -- topics (CreateTopics, auto-creation, CreatePartitions, DeleteTopics) ------------

    def internal_topic(self, name: str) -> Topic:
        """`__consumer_offsets` or `__transaction_state`, created with Kafka's defaults if it does not exist yet."""
        topic = self.topics.get(name)
        if topic is None:
            # partition p led by node p % nodes, whatever topics were created before
            topic = self.apply_plan(self.plan_topic(self._creatable_topic(name)), first_slot=0)
        return topic

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
            if broker_id not in self._node_ids:
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
        """Remove a topic and its data (DeleteTopics); the groups' offsets of it are Cluster.delete_topic's."""
        topic = self.topics.pop(name, None)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")
        del self.topics_by_id[topic.topic_id]
        colliding = self._colliding_names.get(collision_key(name))
        if colliding is not None:
            colliding.discard(name)
            if not colliding:
                del self._colliding_names[collision_key(name)]
        return topic

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
