"""Every broker, topic and group config Kafka declares, with what minibroker does with each.

Mirrors the definitions of `KafkaConfig`, `LogConfig` and `GroupConfig` (their `ConfigDef`s) and
`DynamicBrokerConfig`'s update modes: Kafka 4.2's tables (`config_table.py`) parsed into `ConfigDef`s, each
release profile's overlay laid over them (`config_releases.py`, `release_configs`), minibroker's support
decision per config (IMPLEMENTED, INERT, UNSUPPORTED: see `config.py`) and the reasons behind it, written
to docs/broker-configs.md by `decision_list()`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cache

from . import config_releases
from .config_def import NO_DEFAULT, ConfigDef, ConfigError, ConfigType, Support, UpdateMode
from .config_table import BROKER_TABLE, GROUP_TABLE, TOPIC_TABLE

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
    "group.consumer.assignment.interval.ms", "group.consumer.min.assignment.interval.ms",
    "group.consumer.max.assignment.interval.ms",
    # fetch sessions (core/fetch_sessions.py)
    "max.incremental.fetch.session.cache.slots",
    # KIP-932 share groups (core/share_groups.py, core/share_partition.py, core/share_sessions.py): the broker
    # defaults of the share group configs and their bounds
    "group.share.record.lock.duration.ms", "group.share.min.record.lock.duration.ms",
    "group.share.max.record.lock.duration.ms", "group.share.delivery.count.limit",
    "group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit",
    "group.share.session.timeout.ms", "group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms",
    "group.share.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms",
    "group.share.max.heartbeat.interval.ms", "group.share.partition.max.record.locks",
    "group.share.min.partition.max.record.locks", "group.share.max.partition.max.record.locks",
    "group.share.assignment.interval.ms", "group.share.min.assignment.interval.ms",
    "group.share.max.assignment.interval.ms", "group.share.max.share.sessions", "group.share.max.size",
    # KIP-1071 streams groups (core/streams_groups.py)
    "group.streams.heartbeat.interval.ms", "group.streams.session.timeout.ms",
    "group.streams.initial.rebalance.delay.ms", "group.streams.num.standby.replicas", "group.streams.max.size",
    "group.streams.assignment.interval.ms",
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

# The group configs minibroker acts on: the KIP-848 consumer group's session timeout, heartbeat interval and
# assignment interval (core/consumer_groups.py), a streams group's (core/streams_groups.py) and a share group's
# (core/share_groups.py, core/share_partition.py, apis/share_common.py), its assignment interval and whether
# members may renew acquisition locks (KIP-1222) included. The streams assignment interval batches assignment
# updates minibroker makes at once.
_IMPLEMENTED_GROUP = frozenset({"consumer.session.timeout.ms", "consumer.heartbeat.interval.ms",
                                "consumer.assignment.interval.ms",
                                "streams.session.timeout.ms", "streams.heartbeat.interval.ms",
                                "streams.initial.rebalance.delay.ms", "streams.num.standby.replicas",
                                "streams.assignment.interval.ms",
                                "share.auto.offset.reset", "share.isolation.level", "share.session.timeout.ms",
                                "share.heartbeat.interval.ms", "share.record.lock.duration.ms",
                                "share.delivery.count.limit", "share.partition.max.record.locks",
                                "share.assignment.interval.ms", "share.renew.acknowledge.enable"})


def _group_configs() -> dict[str, ConfigDef]:
    configs: dict[str, ConfigDef] = {}
    for name, kind, default, valid, synonym in _rows(GROUP_TABLE):
        support = Support.IMPLEMENTED if name in _IMPLEMENTED_GROUP else Support.UNSUPPORTED
        definition = ConfigDef(name, _TYPES[kind], None, valid, support=support,
                               broker_synonym=None if synonym == "-" else synonym, doc=_GROUP_DOCS[name])
        configs[name] = _with_default(definition, default)
    return configs  # in Kafka's order, not sorted


GROUP_CONFIGS: dict[str, ConfigDef] = _group_configs()

# Read for each node (the partition leader's), so a simulated cluster can mix producer-state designs
PER_NODE_CONFIGS = frozenset({"producer.state.mode", "max.in.flight.sequence.number.per.connection"})

# Read by the authorizer from the broker's configs, unknown to KafkaConfig: never listed by DescribeConfigs
AUTHORIZER_CONFIGS = frozenset({"super.users", "allow.everyone.if.no.acl.found"})

# The configs KIP-1269 and KIP-758 add: a cluster speaking as an older Kafka release does not know them.
KIP1269_CONFIGS = frozenset({"producer.state.batches.to.retain", "log.producer.state.batches.to.retain",
                             "producer.state.mode", "max.in.flight.sequence.number.per.connection"})

# SslConfigs.RECONFIGURABLE_CONFIGS: dynamic only with a listener prefix (DynamicBrokerConfig.DynamicSecurityConfigs)
LISTENER_ONLY_SECURITY_CONFIGS = frozenset({
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password", "ssl.keystore.certificate.chain",
    "ssl.keystore.key", "ssl.truststore.certificates",
})

# Dynamic in Kafka (DynamicListenerConfig; advertised.listeners before 4.0), read at start-up only here: the
# listeners bind once
STARTUP_ONLY = frozenset({"listeners", "advertised.listeners", "listener.security.protocol.map",
                          "sasl.enabled.mechanisms", "sasl.jaas.config", "connections.max.reauth.ms",
                          "sasl.server.max.receive.size", "ssl.client.auth", "ssl.enabled.protocols",
                          "ssl.cipher.suites", "ssl.principal.mapping.rules"})


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
    ("group.share.", "not acted on for share groups: Kafka's default only (core/share_groups.py)"),
    ("group.streams.", "not implemented for Streams groups: Kafka's default only (core/streams_groups.py)"),
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
        if name in LISTENER_ONLY_SECURITY_CONFIGS:
            decision, why = "start-up only", "Kafka takes it only per listener (`listener.name.` prefix)"
        elif name in STARTUP_ONLY:
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
