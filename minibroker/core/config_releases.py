"""Broker and topic configs of Kafka 3.9, 4.3 and 4.4 where they differ from Kafka 4.2's (config_table.py), as data.

Read by the config registry (`config.py`), which lays a release's overlay over the 4.2 tables for a cluster
whose profile (`--as-version`) is that release; nothing else imports this module. Lines have config_table.py's
format (`name|type|default|valid values|update mode or broker synonym`) and were produced from Kafka 3.9.1's,
4.3.1's and 4.4.0's own ConfigDefs (`KafkaConfig.configDef()`, `LogConfig`'s,
`DynamicBrokerConfig.dynamicConfigUpdateModes()`, `ServerTopicConfigSynonyms.TOPIC_CONFIG_SYNONYMS`), listing only
what differs from the 4.2 line:

* `*_CHANGED_OR_ADDED`: configs 3.9 has that 4.2 lacks (4.0 removed ZooKeeper, the message format version,
  down-conversion, ...) or defines differently (type, default, validator, update mode);
* `*_REMOVED`: 4.2's configs that 3.9 does not know (added in 4.0-4.2: share groups' coordinator, streams
  groups, OAuth assertion, ...): refused as unknown and never listed;
* `*_INTERNAL`: 4.2's configs that 3.9 defines internal (accepted, listed only once set), as 3.9 defines them.
"""

from __future__ import annotations

#: The overlay each profile uses; a profile not named here has Kafka 4.2's configs. Kafka 2.8 has no overlay of
#: its own (its configs were not compared): it uses 3.9's, the nearest release that was. `latest` is 4.3 with
#: KIP-1269, whose configs the registry adds for every profile that has it.
PROFILE_OVERLAY = {"2.8": "3.9", "3.9": "3.9", "4.3": "4.3", "latest": "4.3", "4.4": "4.4"}

#: Releases whose ConfigHelper and DynamicBrokerConfig are Scala: DescribeConfigs lists the requested configs in
#: the order of the Scala mutable.HashMap it filters them into (4.x: by name), and a broker alter's refusal
#: prints its set of names as a Scala Set, `Set(a, b)` (4.x: a Java HashSet, `[a, b]`).
HASH_ORDERED_DESCRIBE = frozenset({"3.9"})

BROKER_CHANGED_OR_ADDED = {"3.9": """\
advertised.listeners|string|null||p
auto.include.jmx.reporter|boolean|true||r
broker.id.generation.enable|boolean|true||r
control.plane.listener.name|string|null||r
controlled.shutdown.max.retries|int|3||r
controlled.shutdown.retry.backoff.ms|long|5000||r
controller.listener.names|string|null||r
controller.quorum.append.linger.ms|int|25||r
controller.quorum.election.backoff.max.ms|int|1000||r
controller.quorum.election.timeout.ms|int|1000||r
controller.quorum.fetch.timeout.ms|int|2000||r
controller.quorum.request.timeout.ms|int|2000||r
controller.quorum.retry.backoff.ms|int|20||r
delegation.token.master.key|password|null||r
early.start.listeners|string|null||r
eligible.leader.replicas.enable|boolean|false||r
group.consumer.assignors|list|org.apache.kafka.coordinator.group.assignor.UniformAssignor,org.apache.kafka.coordinator.group.assignor.RangeAssignor||r
group.coordinator.append.linger.ms|int|10|[0,...]|r
group.coordinator.rebalance.protocols|list|classic|[consumer, classic, share, unknown]|r
group.coordinator.threads|int|1|[1,...]|r
group.share.max.groups|short|10|[1,...,100]|r
group.share.max.size|short|200|[10,...,1000]|r
group.share.partition.max.record.locks|int|200|[100,...,10000]|r
group.share.record.lock.duration.ms|int|30000|[1000,...,60000]|r
inter.broker.protocol.version|string|3.9-IV0|[0.8.0, 0.8.1, 0.8.2, 0.9.0, 0.10.0-IV0, 0.10.0-IV1, 0.10.1-IV0, 0.10.1-IV1, 0.10.1-IV2, 0.10.2-IV0, 0.11.0-IV0, 0.11.0-IV1, 0.11.0-IV2, 1.0-IV0, 1.1-IV0, 2.0-IV0, 2.0-IV1, 2.1-IV0, 2.1-IV1, 2.1-IV2, 2.2-IV0, 2.2-IV1, 2.3-IV0, 2.3-IV1, 2.4-IV0, 2.4-IV1, 2.5-IV0, 2.6-IV0, 2.7-IV0, 2.7-IV1, 2.7-IV2, 2.8-IV0, 2.8-IV1, 3.0-IV0, 3.0-IV1, 3.1-IV0, 3.2-IV0, 3.3-IV0, 3.3-IV1, 3.3-IV2, 3.3-IV3, 3.4-IV0, 3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, 3.7-IV3, 3.7-IV4, 3.8-IV0, 3.9-IV0, 4.0-IV0, 4.0-IV1]|r
leader.imbalance.per.broker.percentage|int|10||r
listeners|string|PLAINTEXT://:9092||p
log.dir|string|/tmp/kafka-logs||r
log.dirs|string|null||r
log.message.downconversion.enable|boolean|true||c
log.message.format.version|string|3.0-IV1|[0.8.0, 0.8.1, 0.8.2, 0.9.0, 0.10.0-IV0, 0.10.0-IV1, 0.10.1-IV0, 0.10.1-IV1, 0.10.1-IV2, 0.10.2-IV0, 0.11.0-IV0, 0.11.0-IV1, 0.11.0-IV2, 1.0-IV0, 1.1-IV0, 2.0-IV0, 2.0-IV1, 2.1-IV0, 2.1-IV1, 2.1-IV2, 2.2-IV0, 2.2-IV1, 2.3-IV0, 2.3-IV1, 2.4-IV0, 2.4-IV1, 2.5-IV0, 2.6-IV0, 2.7-IV0, 2.7-IV1, 2.7-IV2, 2.8-IV0, 2.8-IV1, 3.0-IV0, 3.0-IV1, 3.1-IV0, 3.2-IV0, 3.3-IV0, 3.3-IV1, 3.3-IV2, 3.3-IV3, 3.4-IV0, 3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, 3.7-IV3, 3.7-IV4, 3.8-IV0, 3.9-IV0, 4.0-IV0, 4.0-IV1]|r
log.message.timestamp.after.max.ms|long|9223372036854775807|[0,...]|c
log.message.timestamp.difference.max.ms|long|9223372036854775807|[0,...]|c
log.segment.bytes|int|1073741824|[14,...]|c
metadata.log.segment.bytes|int|1073741824|[12,...]|r
metric.reporters|list|""||c
node.id|int|-1||r
num.recovery.threads.per.data.dir|int|1|[1,...]|c
num.replica.fetchers|int|1||c
offsets.commit.required.acks|short|-1||r
password.encoder.cipher.algorithm|string|AES/CBC/PKCS5Padding||r
password.encoder.iterations|int|4096|[1024,...]|r
password.encoder.key.length|int|128|[8,...]|r
password.encoder.keyfactory.algorithm|string|null||r
password.encoder.old.secret|password|null||r
password.encoder.secret|password|null||r
process.roles|list|""|[broker, controller]|r
remote.log.manager.copier.thread.pool.size|int|-1|The default value of -1 means that this will be set to the configured value of remote.log.manager.thread.pool.size, if available; otherwise, it defaults to 10.|r
remote.log.manager.expiration.thread.pool.size|int|-1|The default value of -1 means that this will be set to the configured value of remote.log.manager.thread.pool.size, if available; otherwise, it defaults to 10.|r
remote.log.manager.thread.pool.size|int|10|[1,...]|r
remote.log.reader.threads|int|10|[1,...]|r
reserved.broker.max.id|int|1000|[0,...]|r
sasl.oauthbearer.expected.audience|list|null||r
zookeeper.clientCnxnSocket|string|null||r
zookeeper.connect|string|null||r
zookeeper.connection.timeout.ms|int|null||r
zookeeper.max.in.flight.requests|int|10|[1,...]|r
zookeeper.metadata.migration.enable|boolean|false||r
zookeeper.session.timeout.ms|int|18000||r
zookeeper.set.acl|boolean|false||r
zookeeper.ssl.cipher.suites|list|null||r
zookeeper.ssl.client.enable|boolean|false||r
zookeeper.ssl.crl.enable|boolean|false||r
zookeeper.ssl.enabled.protocols|list|null||r
zookeeper.ssl.endpoint.identification.algorithm|string|HTTPS||r
zookeeper.ssl.keystore.location|string|null||r
zookeeper.ssl.keystore.password|password|null||r
zookeeper.ssl.keystore.type|string|null||r
zookeeper.ssl.ocsp.enable|boolean|false||r
zookeeper.ssl.protocol|string|TLSv1.2||r
zookeeper.ssl.truststore.location|string|null||r
zookeeper.ssl.truststore.password|password|null||r
zookeeper.ssl.truststore.type|string|null||r
"""}  # noqa: E501 (one line per config, as Kafka spells the values)


BROKER_REMOVED = {"3.9": """\
add.partitions.to.txn.retry.backoff.max.ms
add.partitions.to.txn.retry.backoff.ms
config.providers
controller.quorum.auto.join.enable
group.share.assignors
group.share.max.share.sessions
group.streams.heartbeat.interval.ms
group.streams.initial.rebalance.delay.ms
group.streams.max.heartbeat.interval.ms
group.streams.max.session.timeout.ms
group.streams.max.size
group.streams.max.standby.replicas
group.streams.min.heartbeat.interval.ms
group.streams.min.session.timeout.ms
group.streams.num.standby.replicas
group.streams.session.timeout.ms
remote.list.offsets.request.timeout.ms
remote.log.manager.follower.thread.pool.size
sasl.oauthbearer.assertion.algorithm
sasl.oauthbearer.assertion.claim.aud
sasl.oauthbearer.assertion.claim.exp.seconds
sasl.oauthbearer.assertion.claim.iss
sasl.oauthbearer.assertion.claim.jti.include
sasl.oauthbearer.assertion.claim.nbf.seconds
sasl.oauthbearer.assertion.claim.sub
sasl.oauthbearer.assertion.file
sasl.oauthbearer.assertion.private.key.file
sasl.oauthbearer.assertion.private.key.passphrase
sasl.oauthbearer.assertion.template.file
sasl.oauthbearer.client.credentials.client.id
sasl.oauthbearer.client.credentials.client.secret
sasl.oauthbearer.jwt.retriever.class
sasl.oauthbearer.jwt.validator.class
sasl.oauthbearer.scope
share.coordinator.append.linger.ms
share.coordinator.load.buffer.size
share.coordinator.snapshot.update.records.per.snapshot
share.coordinator.state.topic.compression.codec
share.coordinator.state.topic.min.isr
share.coordinator.state.topic.num.partitions
share.coordinator.state.topic.replication.factor
share.coordinator.state.topic.segment.bytes
share.coordinator.threads
share.coordinator.write.timeout.ms
share.fetch.purgatory.purge.interval.requests
transaction.two.phase.commit.enable
"""}

BROKER_INTERNAL = {"3.9": """\
group.consumer.migration.policy|string|disabled|(case insensitive) [DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL]|r
"""}

TOPIC_CHANGED_OR_ADDED = {"3.9": """\
message.downconversion.enable|boolean|true||log.message.downconversion.enable
message.format.version|string|3.0-IV1|[0.8.0, 0.8.1, 0.8.2, 0.9.0, 0.10.0-IV0, 0.10.0-IV1, 0.10.1-IV0, 0.10.1-IV1, 0.10.1-IV2, 0.10.2-IV0, 0.11.0-IV0, 0.11.0-IV1, 0.11.0-IV2, 1.0-IV0, 1.1-IV0, 2.0-IV0, 2.0-IV1, 2.1-IV0, 2.1-IV1, 2.1-IV2, 2.2-IV0, 2.2-IV1, 2.3-IV0, 2.3-IV1, 2.4-IV0, 2.4-IV1, 2.5-IV0, 2.6-IV0, 2.7-IV0, 2.7-IV1, 2.7-IV2, 2.8-IV0, 2.8-IV1, 3.0-IV0, 3.0-IV1, 3.1-IV0, 3.2-IV0, 3.3-IV0, 3.3-IV1, 3.3-IV2, 3.3-IV3, 3.4-IV0, 3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, 3.7-IV3, 3.7-IV4, 3.8-IV0, 3.9-IV0, 4.0-IV0, 4.0-IV1]|log.message.format.version
message.timestamp.after.max.ms|long|9223372036854775807|[0,...]|log.message.timestamp.after.max.ms
message.timestamp.difference.max.ms|long|9223372036854775807|[0,...]|log.message.timestamp.difference.max.ms
segment.bytes|int|1073741824|[14,...]|log.segment.bytes
"""}  # noqa: E501 (one line per config, as Kafka spells the values)

TOPIC_REMOVED: dict[str, str] = {"3.9": ""}


# Kafka 4.3.1 and 4.4.0, dumped the same way: they add configs (group coordinator assignment batching, share group
# bounds, the KRaft fetch sizes, cordoned log dirs; 4.4 also Streams' dead-letter queue, remote copy lag and
# max.decompressed.message.bytes) and narrow one validator; they remove none. 4.4 keeps everything 4.3 added.
BROKER_CHANGED_OR_ADDED["4.3"] = """\
controller.quorum.fetch.max.bytes|int|1048576|[1,...]|r
controller.quorum.fetch.snapshot.max.bytes|int|1048576|[1,...]|r
cordoned.log.dirs|list|""||p
follower.fetch.last.tiered.offset.enable|boolean|false||c
group.consumer.assignment.interval.ms|int|1000|[0,...]|c
group.consumer.max.assignment.interval.ms|int|15000|[0,...]|r
group.consumer.min.assignment.interval.ms|int|0|[0,...]|r
group.coordinator.background.threads|int|2|[1,...]|r
group.coordinator.cached.buffer.max.bytes|int|1048588|[524288,...]|c
group.share.assignment.interval.ms|int|1000|[0,...]|c
group.share.max.assignment.interval.ms|int|15000|[0,...]|r
group.share.max.delivery.count.limit|int|10|[5,...,25]|r
group.share.max.partition.max.record.locks|int|4000|[2000,...,10000]|r
group.share.min.assignment.interval.ms|int|0|[0,...]|r
group.share.min.delivery.count.limit|int|2|[2,...,5]|r
group.share.min.partition.max.record.locks|int|100|[100,...,2000]|r
group.streams.assignment.interval.ms|int|1000|[0,...]|c
group.streams.max.assignment.interval.ms|int|15000|[0,...]|r
group.streams.min.assignment.interval.ms|int|0|[0,...]|r
share.coordinator.cached.buffer.max.bytes|int|1048588|[524288,...]|c
share.coordinator.snapshot.update.records.per.snapshot|int|500|[0,...,500]|r
"""
BROKER_CHANGED_OR_ADDED["4.4"] = BROKER_CHANGED_OR_ADDED["4.3"] + """\
errors.deadletterqueue.auto.create.topics.enable|boolean|false||c
errors.deadletterqueue.topic.name.prefix|string|dlq.||c
group.streams.assignors|list|sticky||r
group.streams.rack.aware.assignment.tags|list|""||r
group.streams.topology.description.plugin.class|class|null||r
log.remote.copy.lag.bytes|long|-1|[-1,...]|c
log.remote.copy.lag.ms|long|0|[-1,...]|c
max.decompressed.message.bytes|int|2147483639|[1,...,2147483639]|c
sasl.oauthbearer.allow.unverified.audience|boolean|false||r
sasl.oauthbearer.allow.unverified.issuer|boolean|false||r
"""
TOPIC_CHANGED_OR_ADDED["4.3"] = ""
TOPIC_CHANGED_OR_ADDED["4.4"] = """\
errors.deadletterqueue.group.enable|boolean|false||-
max.decompressed.message.bytes|int|2147483639|[1,...,2147483639]|max.decompressed.message.bytes
remote.copy.lag.bytes|long|-1|[-1,...]|log.remote.copy.lag.bytes
remote.copy.lag.ms|long|0|[-1,...]|log.remote.copy.lag.ms
"""
for _release in ("4.3", "4.4"):
    BROKER_REMOVED[_release] = BROKER_INTERNAL[_release] = TOPIC_REMOVED[_release] = ""
