"""The cluster: nodes, topics with ids, partitions with their logs and producer state."""

from __future__ import annotations

import base64
import itertools
import re
import uuid
import zlib
from dataclasses import dataclass, field
from typing import Any

from ..protocol import records
from ..protocol.errors import ErrorCode, KafkaError, RecordValidationError
from .clock import Clock, SystemClock
from .config import BrokerConfig
from .group_coordinator import GroupCoordinator
from .partition_log import PartitionLog
from .producer_state import ProducerStateManager
from .transaction_coordinator import TransactionCoordinator

LEGAL_TOPIC_CHARS = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_NAME_LENGTH = 249
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
LONG_MAX = 2**63 - 1
KAFKA_BATCHES_TO_RETAIN = 5  # what every Kafka release before KIP-1269 keeps per producer
_CODECS = {"uncompressed": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


@dataclass
class Node:
    """A broker node as Metadata describes it."""

    node_id: int
    host: str  # what Metadata advertises
    port: int
    rack: str | None = None
    # where the listener binds; None: the advertised address (a proxy in front changes the advertised one)
    bind_host: str | None = None
    bind_port: int | None = None
    # the Kafka release this node speaks as (apis/releases.py); only "latest" has KIP-1269
    release: str = "latest"

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

    @property
    def name(self) -> str:
        return f"{self.topic.name}-{self.index}"


@dataclass(eq=False)
class Topic:
    """A topic: name, id, partitions and its config overrides."""

    name: str
    topic_id: uuid.UUID
    partitions: list[Partition]
    configs: dict[str, Any]
    replication_factor: int = 1


def validate_topic_name(name: str | None) -> None:
    """KafkaError(INVALID_TOPIC_EXCEPTION) unless `name` is a legal topic name."""
    if not name:
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name cannot be \".\" or \"..\"")
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise KafkaError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"Topic name is illegal, it can't be longer than {MAX_TOPIC_NAME_LENGTH} characters, topic name: {name}",
        )
    if not LEGAL_TOPIC_CHARS.match(name):
        raise KafkaError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"Topic name {name} is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'",
        )


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
        self.controller_id = self.nodes[0].node_id
        self.cluster_id = cluster_id or base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        self.topics: dict[str, Topic] = {}
        self.topics_by_id: dict[uuid.UUID, Topic] = {}
        self._producer_ids = itertools.count(1000)
        # as Kafka, the first retention check comes one interval after start-up, not at once
        self._next_retention_check = self.clock.now_ms() + self.config["log.retention.check.interval.ms"]
        self._next_producer_expiry_check = self.clock.now_ms() + self.config["producer.id.expiration.check.interval.ms"]
        self._leader_cycle = itertools.count()
        self.groups = GroupCoordinator(self.config, self.clock, self._partition_exists)
        self.transactions = TransactionCoordinator(self, self.config, self.clock, self.new_producer_id)

    # -- topics ---------------------------------------------------------

    def _partition_exists(self, topic: str, partition: int) -> bool:
        found = self.topics.get(topic)
        return found is not None and 0 <= partition < len(found.partitions)

    def coordinator_node(self, key: str) -> Node:
        """The node that coordinates a group or transactional id (a stable hash over the nodes)."""
        return self.nodes[zlib.crc32(key.encode()) % len(self.nodes)]

    def node(self, node_id: int) -> Node | None:
        return next((n for n in self.nodes if n.node_id == node_id), None)

    def topic_config(self, topic: Topic, name: str) -> Any:
        """The effective value of topic config `name` for `topic`."""
        return self.config.topic_value(name, topic.configs)

    def batches_to_retain(self, partition: Partition) -> int:
        """The KIP-1269 window of a partition: the topic config, or Kafka's fixed 5 on a leader without KIP-1269."""
        leader = self.node(partition.leader_id)
        if leader is not None and not leader.kip1269:
            return KAFKA_BATCHES_TO_RETAIN
        return int(self.topic_config(partition.topic, "producer.state.batches.to.retain"))

    def create_topic(
        self,
        name: str,
        num_partitions: int = -1,
        replication_factor: int = -1,
        configs: dict[str, str | None] | None = None,
        validate_only: bool = False,
    ) -> Topic | None:
        """Create a topic, as CreateTopics does; KafkaError with Kafka's code when refused."""
        validate_topic_name(name)
        if name in self.topics:
            raise KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        if num_partitions == -1:
            num_partitions = self.config["num.partitions"]
        if replication_factor == -1:
            replication_factor = self.config["default.replication.factor"]
        if num_partitions <= 0:
            raise KafkaError(ErrorCode.INVALID_PARTITIONS, "Number of partitions must be larger than 0.")
        if replication_factor <= 0:
            raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0.")
        if replication_factor > len(self.nodes):
            raise KafkaError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                f"Unable to replicate the partition {replication_factor} time(s): "
                f"The target replication factor of {replication_factor} cannot be reached because only "
                f"{len(self.nodes)} broker(s) are registered.",
            )
        overrides = self.config.parse_topic_configs(configs or {})
        if validate_only:
            return None
        topic = Topic(name, uuid.uuid4(), [], overrides, replication_factor)
        self._add_partitions(topic, num_partitions)
        self.topics[name] = topic
        self.topics_by_id[topic.topic_id] = topic
        return topic

    def _add_partitions(self, topic: Topic, count: int) -> None:
        """New partitions with leaders spread round-robin over the nodes."""
        for _ in range(count):
            index = len(topic.partitions)
            first = next(self._leader_cycle) % len(self.nodes)
            replicas = [self.nodes[(first + i) % len(self.nodes)].node_id
                        for i in range(min(topic.replication_factor, len(self.nodes)))]
            topic.partitions.append(Partition(topic, index, replicas[0], PartitionLog(topic.name, index),
                                              replicas=replicas))

    def create_partitions(self, name: str, total: int, validate_only: bool = False) -> None:
        """Grow a topic to `total` partitions (CreatePartitions)."""
        topic = self.topics.get(name)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
        current = len(topic.partitions)
        if total < current:
            raise KafkaError(
                ErrorCode.INVALID_PARTITIONS,
                f"Topic currently has {current} partitions, which is higher than the requested {total}.",
            )
        if total == current:
            raise KafkaError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partitions.")
        if not validate_only:
            self._add_partitions(topic, total - current)

    def delete_topic(self, name: str) -> Topic:
        """Remove a topic and its data (DeleteTopics)."""
        topic = self.topics.pop(name, None)
        if topic is None:
            raise KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition.")
        del self.topics_by_id[topic.topic_id]
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
        tp = partition.name
        if not replicas:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             f"The manual partition assignment of {tp} includes an empty replica list.")
        if len(set(replicas)) != len(replicas):
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             f"The manual partition assignment of {tp} includes duplicate replicas: {replicas}.")
        unknown = [node_id for node_id in replicas if self.node(node_id) is None]
        if unknown:
            raise KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                             f"The manual partition assignment of {tp} includes broker {unknown[0]}, "
                             f"but no such broker is registered.")
        if not allow_replication_factor_change and len(replicas) != len(partition.replicas):
            raise KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR,
                             f"The replication factor of {tp} is changed from {len(partition.replicas)} to "
                             f"{len(replicas)} but allowReplicationFactorChange is false.")
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

    def auto_create(self, name: str) -> Topic | None:
        """Create `name` with the broker defaults if `auto.create.topics.enable`; None if not allowed."""
        if not self.config["auto.create.topics.enable"] or name in INTERNAL_TOPICS:
            return None
        return self.create_topic(name)

    def new_producer_id(self) -> int:
        """A fresh, never reused producer id."""
        return next(self._producer_ids)

    # -- produce ---------------------------------------------------------

    def append(self, partition: Partition, batch_bytes: bytes | bytearray | memoryview) -> AppendResult:
        """Validate and append one client batch, as Kafka's leader append does.

        Raises KafkaError with Kafka's code; nothing is appended and producer
        state does not change unless the whole append succeeds.
        """
        topic = partition.topic
        log = partition.log
        tp = partition.name
        spans = records.split_batches(batch_bytes)
        if len(spans) != 1:
            raise KafkaError(
                ErrorCode.INVALID_RECORD,
                "Produce requests must carry exactly one record batch per partition",
            )
        header = records.read_header(batch_bytes)
        if header.base_offset != 0:
            raise KafkaError(ErrorCode.INVALID_RECORD, f"The baseOffset of the record batch in the append to {tp} "
                             f"should be 0, but it is {header.base_offset}")
        max_message_bytes = self.topic_config(topic, "max.message.bytes")
        if header.size_in_bytes > max_message_bytes:
            raise KafkaError(
                ErrorCode.MESSAGE_TOO_LARGE,
                f"The record batch size in the append to {tp} is {header.size_in_bytes} bytes which exceeds the "
                f"maximum configured value of {max_message_bytes}.",
            )
        if not records.crc_is_valid(batch_bytes, header):
            raise KafkaError(ErrorCode.CORRUPT_MESSAGE, f"Record is corrupt (stored crc = {header.crc}) in topic "
                             f"partition {tp}.")
        self._validate_batch(header, tp)
        now = self.clock.now_ms()
        log_append_time = self._check_timestamps(topic, header, batch_bytes, tp, now)
        check = partition.producer_state.check_append(header, tp, log.log_end_offset)
        if check.duplicate is not None:
            return AppendResult(check.duplicate.first_offset, check.duplicate.timestamp, log.log_start_offset)
        batch = bytearray(batch_bytes)
        target = self.topic_config(topic, "compression.type")
        if target != "producer" and _CODECS[target] != header.compression:
            batch = records.recompress(batch, _CODECS[target])
            if len(batch) > max_message_bytes:
                raise KafkaError(
                    ErrorCode.MESSAGE_TOO_LARGE,
                    f"Message batch size is {len(batch)} bytes in append to partition {tp} which exceeds the "
                    f"maximum configured size of {max_message_bytes}.",
                )
        if log_append_time != -1:
            records.set_log_append_time(batch, log_append_time)
        stored_timestamp = log_append_time if log_append_time != -1 else header.max_timestamp
        base_offset = log.append(batch, header)
        window = self.batches_to_retain(partition)
        partition.producer_state.commit_append(header, base_offset, stored_timestamp, window)
        log.announce_append(len(batch))  # only now: a woken read_committed fetch must see the open transaction
        return AppendResult(base_offset, log_append_time, log.log_start_offset)

    @staticmethod
    def _validate_batch(header: records.BatchHeader, tp: str) -> None:
        if header.last_offset_delta < 0:
            raise KafkaError(ErrorCode.INVALID_RECORD, f"Batch has an invalid offset range: [0, "
                             f"{header.last_offset_delta}] in topic partition {tp}.")
        if header.record_count <= 0:
            raise KafkaError(ErrorCode.INVALID_RECORD, f"Invalid reported count for record batch: "
                             f"{header.record_count} in topic partition {tp}.")
        if header.last_offset_delta + 1 != header.record_count:
            raise KafkaError(
                ErrorCode.INVALID_RECORD,
                f"Inconsistent batch offset range [0, {header.last_offset_delta}] and count of records "
                f"{header.record_count} in topic partition {tp}.",
            )
        if header.is_control:
            raise KafkaError(ErrorCode.INVALID_RECORD,
                             f"Clients are not allowed to write control records in topic partition {tp}.")
        if header.has_producer_id and header.base_sequence < 0:
            raise KafkaError(ErrorCode.INVALID_RECORD, f"Invalid sequence number {header.base_sequence} in "
                             f"record batch with producerId {header.producer_id}")
        if header.compression > records.COMPRESSION_ZSTD:
            raise KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, f"Unknown compression type id: {header.compression}")

    def _check_timestamps(
        self, topic: Topic, header: records.BatchHeader, batch: bytes | bytearray | memoryview, tp: str, now: int
    ) -> int:
        """The log append time to stamp (-1 for CreateTime); KafkaError(INVALID_TIMESTAMP) if out of range."""
        if self.topic_config(topic, "message.timestamp.type") == "LogAppendTime":
            return now
        if header.timestamp_type == 1:
            raise KafkaError(ErrorCode.INVALID_TIMESTAMP, f"Invalid timestamp type in message {tp}. Producer "
                             "should not set timestamp type to LogAppendTime.")
        before = self.topic_config(topic, "message.timestamp.before.max.ms")
        after = self.topic_config(topic, "message.timestamp.after.max.ms")
        # The header bounds the newest record; decode records only when a bound might be crossed.
        suspicious = header.max_timestamp - now > after or (before != LONG_MAX and header.base_timestamp < now)
        if suspicious:
            for record in records.iter_records(batch):
                if record.timestamp == -1:
                    continue
                if now - record.timestamp > before or record.timestamp - now > after:
                    raise RecordValidationError(
                        ErrorCode.INVALID_TIMESTAMP,
                        f"Timestamp {record.timestamp} of message with offset {record.offset} is out of range. "
                        f"The timestamp should be within [{now - before}, {now + after}]",
                        batch_index=record.offset,
                        summary="One or more records have been rejected due to invalid timestamp",
                    )
        return -1

    # -- time ------------------------------------------------------------

    def write_txn_marker(self, partition: Partition, producer_id: int, producer_epoch: int, committed: bool,
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
