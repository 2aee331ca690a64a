"""The whole broker state, and what runs on it: appends, transaction markers, retention, the clock.

`Cluster` holds the cluster model (cluster_model.py), the topics' controller (`replication`,
replication_control.py), the group, share-group and transaction coordinators, credentials, ACLs and fetch sessions.
It decides the producer-state window an append keeps (`batches_to_retain_on`, the one statement of
that rule) and validates and appends client batches as Kafka's leader does.
"""

from __future__ import annotations

import base64
import dataclasses
import itertools
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..protocol import records
from ..protocol.errors import ErrorCode, KafkaError
from .acls import StandardAuthorizer, parse_super_users
from .clock import Clock, SystemClock
from .cluster_model import GROUP_METADATA_TOPIC, AppendResult, Node, Partition, Topic, coordinator_partition
from .config import LATEST_APPEND_MODE, BrokerConfig
from .features import FeatureLevels
from .group_configs import validate_consumer_group_configs, validate_share_group_configs
from .log_validator import TopicPolicy, validate_batch
from .replication_control import NewTopic, ReplicationControl
from .transaction_coordinator import TransactionCoordinator

if TYPE_CHECKING:
    from .credentials import CredentialStore
    from .fetch_sessions import FetchSessionCache
    from .group_coordinator import GroupCoordinator
    from .share_state import ShareState

KAFKA_BATCHES_TO_RETAIN = 5  # what every Kafka release before KIP-1269 keeps per producer
_CODECS = {"uncompressed": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
_APPEND_SETTINGS = "(append settings)"  # a derived entry in a topic's config cache, beside the config names


@dataclass(frozen=True, slots=True)
class _AppendSettings:
    """A topic's configs as an append reads them: its policy as is, and when recompressing to `codec`."""

    plain: TopicPolicy
    recompressing: TopicPolicy
    codec: int | None  # compression.type's codec id; None for "producer" (keep the producer's)


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
        # the topics and their replicas: CreateTopics, CreatePartitions, DeleteTopics, reassignments, elections
        self.replication = ReplicationControl(self.config, self.nodes)
        self.topics = self.replication.topics  # the same dictionaries, read by name and by id
        self.topics_by_id = self.replication.topics_by_id
        self._producer_ids = itertools.count(1000)
        # as Kafka, the first retention check comes one interval after start-up, not at once
        self._next_retention_check = self.clock.now_ms() + self.config["log.retention.check.interval.ms"]
        self._next_producer_expiry_check = self.clock.now_ms() + self.config["producer.id.expiration.check.interval.ms"]
        self._fetch_sessions: dict[int, FetchSessionCache] = {}  # per node: each is a broker with its own cache
        self._modes: dict[int, int | None] = {}  # per node: duplicate_range, for config version _modes_version
        self._modes_version = -1
        # The group coordinator and the share state are built on first use (the `groups` and `shares` properties): a
        # broker whose clients use no group does not load their modules. Their start-up checks run now, and the
        # offset-expiry sweeps are scheduled from now, as when they were built here.
        validate_consumer_group_configs(self.config)
        validate_share_group_configs(self.config)
        self._groups: GroupCoordinator | None = None
        self._next_offset_expiry_check = self.clock.now_ms() + self.config["offsets.retention.check.interval.ms"]
        self._credentials: CredentialStore | None = None  # built on first use (the `credentials` property)
        # ACLs, cluster metadata too (AclControlManager); None without `authorizer.class.name`
        self.authorizer = (StandardAuthorizer(parse_super_users(self.config["super.users"]),
                                              self.config["allow.everyone.if.no.acl.found"])
                           if self.config["authorizer.class.name"] else None)
        self.transactions = TransactionCoordinator(self, self.config, self.clock, self.new_producer_id)
        self._shares: ShareState | None = None
        # finalized feature levels (FeatureControlManager); apis/feature_levels.py sets them from the nodes'
        # releases, as the nodes' releases are known there
        self.features: FeatureLevels | None = None

    @property
    def groups(self) -> GroupCoordinator:
        """The group coordinator: classic, consumer and streams groups and their committed offsets."""
        if self._groups is None:
            from .group_coordinator import GroupCoordinator

            self._groups = GroupCoordinator(self.config, self.clock, self.replication.partition_exists,
                                            next_offset_expiry_check=self._next_offset_expiry_check)
        return self._groups

    @property
    def shares(self) -> ShareState:
        """Share groups (KIP-932): the share coordinator's groups and share partitions, and the share sessions."""
        if self._shares is None:
            from .share_state import ShareState

            self._shares = ShareState(self.clock, self.config)
        return self._shares

    @property
    def credentials(self) -> CredentialStore:
        """The SCRAM credentials, cluster metadata as in KRaft (AlterUserScramCredentials); PLAIN users are per
        listener. Built on first use: a broker without SASL or the SCRAM APIs never loads credentials.py."""
        if self._credentials is None:
            from .credentials import CredentialStore

            self._credentials = CredentialStore()
        return self._credentials

    # -- topics (ReplicationControl's, with what the rest of the broker keeps of them) -------

    def coordinator_node(self, key: str, internal_topic: str = GROUP_METADATA_TOPIC) -> Node:
        """The node coordinating a group (or, with TRANSACTION_STATE_TOPIC, a transactional id).

        As Kafka's FindCoordinator: the leader of the key's partition of the internal topic, which
        is created on first need, as Kafka's coordinators have it created.
        """
        topic = self.replication.internal_topic(internal_topic)
        partition = topic.partitions[coordinator_partition(key, len(topic.partitions))]
        return self.node(partition.leader_id) or self.nodes[0]

    def create_topic(
        self,
        name: str,
        num_partitions: int = -1,
        replication_factor: int = -1,
        configs: dict[str, str | None] | None = None,
        validate_only: bool = False,
    ) -> Topic | None:
        """Create one topic, as CreateTopics does; KafkaError with Kafka's code when refused."""
        result = self.replication.create_topics(
            [NewTopic(name, num_partitions, replication_factor, dict(configs or {}))], validate_only)[0]
        if isinstance(result, KafkaError):
            raise result
        return result.topic

    def delete_topic(self, name: str) -> Topic:
        """Remove a topic, its data, the groups' committed offsets of it and its share partitions (DeleteTopics)."""
        topic = self.replication.delete_topic(name)
        if self._groups is not None:  # no coordinator yet, no offsets of it
            self._groups.forget_topic(name)
        if self._shares is not None:
            self._shares.forget_topic(name)
        return topic

    # the named lookups handlers make (Kafka's MetadataCache: contains, getTopicId/getTopicName, numPartitions)

    def topic(self, name: str) -> Topic | None:
        """The topic named `name`, or None."""
        return self.topics.get(name)

    def topic_by_id(self, topic_id: uuid.UUID | None) -> Topic | None:
        """The topic with id `topic_id`, or None."""
        return self.topics_by_id.get(topic_id) if topic_id is not None else None

    def topic_names(self) -> list[str]:
        """The names of every topic, in the order the topics were created."""
        return list(self.topics)

    def all_topics(self) -> list[Topic]:
        """Every topic, in the order they were created."""
        return list(self.topics.values())

    def partition_counts(self) -> dict[str, int]:
        """Every topic's number of partitions, by name (what a group's assignor sizes its assignment from)."""
        return {name: len(topic.partitions) for name, topic in self.topics.items()}

    def partition(self, topic_name: str, index: int) -> Partition:
        """The partition, or KafkaError(UNKNOWN_TOPIC_OR_PARTITION)."""
        return self.replication.partition(topic_name, index)

    def find_partition(self, topic_name: str, index: int) -> Partition | None:
        """Partition `index` of topic `topic_name`, or None if there is no such topic or partition."""
        topic = self.topics.get(topic_name)
        return topic.partition(index) if topic is not None else None

    def hosted_partition(self, node_id: int, topic_name: str, index: int) -> Partition | None:
        """The partition if node `node_id` holds a replica of it (Kafka's ReplicaManager: an online
        partition of that broker), else None."""
        partition = self.find_partition(topic_name, index)
        return partition if partition is not None and node_id in partition.replicas else None

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
            from .fetch_sessions import FetchSessionCache  # with the first Fetch, not with every broker

            cache = self._fetch_sessions[node_id] = FetchSessionCache(
                self.config["max.incremental.fetch.session.cache.slots"])
        return cache

    # -- the producer-state window (KIP-1269's producer.state.batches.to.retain) ------------

    def batches_to_retain_on(self, node_id: int | None, topic: Topic | None) -> int:
        """How many batches per producer node `node_id` retains for `topic`'s partitions: the one statement of
        the dedup-window rule, which every window the broker keeps or reports comes from.

        - a node of a released Kafka (no KIP-1269, apis/releases.py): Kafka's fixed KAFKA_BATCHES_TO_RETAIN;
        - a node in KIP-758's latest-append mode: 1, the one batch whose retry still gets its offset;
        - otherwise the topic's `producer.state.batches.to.retain` (KIP-1269);
        - no topic (Produce v14 answering for a topic it does not know): KAFKA_BATCHES_TO_RETAIN.
        `node_id` None or not a node (a partition that does not exist has no leader): the topic's window.
        """
        if topic is None:
            return KAFKA_BATCHES_TO_RETAIN
        node = self.node(node_id) if node_id is not None else None
        if node is not None and not node.kip1269:
            return KAFKA_BATCHES_TO_RETAIN
        if node is not None and self._node_range(node.node_id) is not None:
            return 1
        return int(self.topic_config(topic, "producer.state.batches.to.retain"))

    def batches_to_retain(self, partition: Partition) -> int:
        """The window of a partition: its leader's (batches_to_retain_on)."""
        return self.batches_to_retain_on(partition.leader_id, partition.topic)

    def reported_batches_to_retain(self, topic: Topic | None, index: int) -> int:
        """The window Produce v14 reports for partition `index` of `topic` (None: a topic the node does not know):
        the leader's, or the topic's own for a partition it does not have (batches_to_retain_on)."""
        if topic is not None and 0 <= index < len(topic.partitions):
            return self.batches_to_retain(topic.partitions[index])
        return self.batches_to_retain_on(None, topic)

    def _batches_kept(self, partition: Partition) -> int:
        """How many batches per producer the shared producer state keeps: what the most demanding node needs, as
        each Kafka replica builds its own state from the log (a window-mode follower keeps its window even while
        a latest-append node leads, so a leader moved back still finds older retries)."""
        kept = self.batches_to_retain(partition)
        for node_id in partition.replicas:
            if node_id != partition.leader_id and node_id in self._nodes_by_id:
                kept = max(kept, self.batches_to_retain_on(node_id, partition.topic))
        return kept

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
        """Run what is due on the clock: group, share-group and transaction deadlines, retention, producer-id
        expiry."""
        now = self.clock.now_ms()
        if self._groups is not None:
            self._groups.tick()
        elif now >= self._next_offset_expiry_check:
            # what the tick of a coordinator without groups does: its sweep finds nothing, the next comes later
            self._next_offset_expiry_check = now + self.config["offsets.retention.check.interval.ms"]
        if self._shares is not None:
            self._shares.tick()
        self.transactions.tick()
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
