"""Apache Kafka 4.2's broker and topic configs, as data (one line each).

Read by the config registry (`config.py`); nothing else imports this module. Each line is
`name|type|default|valid values|column 5`, copied from the configuration reference Kafka generates
from its own ConfigDefs for release 4.2 (`KafkaConfig`/`AbstractKafkaConfig.CONFIG_DEF` for brokers,
`LogConfig` for topics), which lists only non-internal configs, as DescribeConfigs does:

* default: as `ConfigDef.convertToString` renders it; `null` is a null default, `""` the empty string,
  `-` no default at all (a config Kafka requires, such as `node.id`).
* valid values: the validator's own description (`ConfigDef.Range`, `ValidString`, `ValidList`, ...).
* column 5, brokers: the update mode `DynamicBrokerConfig.dynamicConfigUpdateModes` gives
  (r read-only, p per-broker, c cluster-wide).
* column 5, topics: the broker config it falls back to (`ServerTopicConfigSynonyms.TOPIC_CONFIG_SYNONYMS`),
  `-` for none.
"""

from __future__ import annotations

BROKER_TABLE = """\
add.partitions.to.txn.retry.backoff.max.ms|int|100|[0,...]|r
add.partitions.to.txn.retry.backoff.ms|int|20|[1,...]|r
advertised.listeners|list|null||r
alter.config.policy.class.name|class|null||r
alter.log.dirs.replication.quota.window.num|int|11|[1,...]|r
alter.log.dirs.replication.quota.window.size.seconds|int|1|[1,...]|r
authorizer.class.name|string|""|non-null string|r
auto.create.topics.enable|boolean|true||r
auto.leader.rebalance.enable|boolean|true||r
background.threads|int|10|[1,...]|c
broker.heartbeat.interval.ms|int|2000||r
broker.id|int|-1||r
broker.rack|string|null||r
broker.session.timeout.ms|int|9000||r
client.quota.callback.class|class|null||r
compression.gzip.level|int|-1|[1,...,9] or -1|c
compression.lz4.level|int|9|[1,...,17]|c
compression.type|string|producer|[uncompressed, zstd, lz4, snappy, gzip, producer]|c
compression.zstd.level|int|3|[-131072,...,22]|c
config.providers|list|""||c
connection.failed.authentication.delay.ms|int|100|[0,...]|r
connections.max.idle.ms|long|600000||r
connections.max.reauth.ms|long|0||r
controlled.shutdown.enable|boolean|true||r
controller.listener.names|list|-||r
controller.quorum.append.linger.ms|int|25|[0,...]|r
controller.quorum.auto.join.enable|boolean|false||r
controller.quorum.bootstrap.servers|list|""|non-empty list|r
controller.quorum.election.backoff.max.ms|int|1000|[0,...]|r
controller.quorum.election.timeout.ms|int|1000|[0,...]|r
controller.quorum.fetch.timeout.ms|int|2000|[0,...]|r
controller.quorum.request.timeout.ms|int|2000|[0,...]|r
controller.quorum.retry.backoff.ms|int|20|[0,...]|r
controller.quorum.voters|list|""|non-empty list|r
controller.quota.window.num|int|11|[1,...]|r
controller.quota.window.size.seconds|int|1|[1,...]|r
controller.socket.timeout.ms|int|30000||r
create.topic.policy.class.name|class|null||r
default.replication.factor|int|1||r
delegation.token.expiry.check.interval.ms|long|3600000|[1,...]|r
delegation.token.expiry.time.ms|long|86400000|[1,...]|r
delegation.token.max.lifetime.ms|long|604800000|[1,...]|r
delegation.token.secret.key|password|null||r
delete.records.purgatory.purge.interval.requests|int|1||r
delete.topic.enable|boolean|true||r
early.start.listeners|list|null||r
fetch.max.bytes|int|57671680|[1024,...]|r
fetch.purgatory.purge.interval.requests|int|1000||r
group.consumer.assignors|list|uniform,range||r
group.consumer.heartbeat.interval.ms|int|5000|[1,...]|r
group.consumer.max.heartbeat.interval.ms|int|15000|[1,...]|r
group.consumer.max.session.timeout.ms|int|60000|[1,...]|r
group.consumer.max.size|int|2147483647|[1,...]|r
group.consumer.migration.policy|string|bidirectional|(case insensitive) [DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL]|r
group.consumer.min.heartbeat.interval.ms|int|5000|[1,...]|r
group.consumer.min.session.timeout.ms|int|45000|[1,...]|r
group.consumer.session.timeout.ms|int|45000|[1,...]|r
group.coordinator.append.linger.ms|int|-1|[-1,...]|r
group.coordinator.rebalance.protocols|list|classic,consumer,streams|[consumer, classic, share, streams]|r
group.coordinator.threads|int|4|[1,...]|r
group.initial.rebalance.delay.ms|int|3000||r
group.max.session.timeout.ms|int|1800000||r
group.max.size|int|2147483647|[1,...]|r
group.min.session.timeout.ms|int|6000||r
group.share.assignors|list|simple||r
group.share.delivery.count.limit|int|5|[2,...,10]|r
group.share.heartbeat.interval.ms|int|5000|[1,...]|r
group.share.max.heartbeat.interval.ms|int|15000|[1,...]|r
group.share.max.record.lock.duration.ms|int|60000|[30000,...,3600000]|r
group.share.max.session.timeout.ms|int|60000|[1,...]|r
group.share.max.share.sessions|int|2000|[1,...]|r
group.share.max.size|int|200|[1,...,1000]|r
group.share.min.heartbeat.interval.ms|int|5000|[1,...]|r
group.share.min.record.lock.duration.ms|int|15000|[1000,...,30000]|r
group.share.min.session.timeout.ms|int|45000|[1,...]|r
group.share.partition.max.record.locks|int|2000|[100,...,10000]|r
group.share.record.lock.duration.ms|int|30000|[1000,...,3600000]|r
group.share.session.timeout.ms|int|45000|[1,...]|r
group.streams.heartbeat.interval.ms|int|5000|[1,...]|r
group.streams.initial.rebalance.delay.ms|int|3000|[0,...]|r
group.streams.max.heartbeat.interval.ms|int|15000|[1,...]|r
group.streams.max.session.timeout.ms|int|60000|[1,...]|r
group.streams.max.size|int|2147483647|[1,...]|r
group.streams.max.standby.replicas|int|2|[0,...]|r
group.streams.min.heartbeat.interval.ms|int|5000|[1,...]|r
group.streams.min.session.timeout.ms|int|45000|[1,...]|r
group.streams.num.standby.replicas|int|0|[0,...]|r
group.streams.session.timeout.ms|int|45000|[1,...]|r
initial.broker.registration.timeout.ms|int|60000||r
inter.broker.listener.name|string|null||r
kafka.metrics.polling.interval.secs|int|10|[1,...]|r
kafka.metrics.reporters|list|""||r
leader.imbalance.check.interval.seconds|long|300|[1,...]|r
listener.security.protocol.map|string|SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT||p
listeners|list|PLAINTEXT://:9092||p
log.cleaner.backoff.ms|long|15000|[0,...]|c
log.cleaner.dedupe.buffer.size|long|134217728||c
log.cleaner.delete.retention.ms|long|86400000|[0,...]|c
log.cleaner.enable|boolean|true||r
log.cleaner.io.buffer.load.factor|double|0.9||c
log.cleaner.io.buffer.size|int|524288|[0,...]|c
log.cleaner.io.max.bytes.per.second|double|1.7976931348623157E308||c
log.cleaner.max.compaction.lag.ms|long|9223372036854775807|[1,...]|c
log.cleaner.min.cleanable.ratio|double|0.5|[0,...,1]|c
log.cleaner.min.compaction.lag.ms|long|0|[0,...]|c
log.cleaner.threads|int|1|[0,...]|c
log.cleanup.policy|list|delete|[compact, delete]|c
log.dir.failure.timeout.ms|long|30000|[1,...]|r
log.dirs|list|null||r
log.dir|list|/tmp/kafka-logs||r
log.flush.interval.messages|long|9223372036854775807|[1,...]|c
log.flush.interval.ms|long|null||c
log.flush.offset.checkpoint.interval.ms|int|60000|[0,...]|r
log.flush.scheduler.interval.ms|long|9223372036854775807||r
log.flush.start.offset.checkpoint.interval.ms|int|60000|[0,...]|r
log.index.interval.bytes|int|4096|[0,...]|c
log.index.size.max.bytes|int|10485760|[4,...]|c
log.local.retention.bytes|long|-2|[-2,...]|c
log.local.retention.ms|long|-2|[-2,...]|c
log.message.timestamp.after.max.ms|long|3600000|[0,...]|c
log.message.timestamp.before.max.ms|long|9223372036854775807|[0,...]|c
log.message.timestamp.type|string|CreateTime|[CreateTime, LogAppendTime]|c
log.preallocate|boolean|false||c
log.retention.bytes|long|-1||c
log.retention.check.interval.ms|long|300000|[1,...]|r
log.retention.hours|int|168||r
log.retention.minutes|int|null||r
log.retention.ms|long|null||c
log.roll.hours|int|168|[1,...]|r
log.roll.jitter.hours|int|0|[0,...]|r
log.roll.jitter.ms|long|null||c
log.roll.ms|long|null||c
log.segment.bytes|int|1073741824|[1048576,...]|c
log.segment.delete.delay.ms|long|60000|[0,...]|c
max.connection.creation.rate|int|2147483647|[0,...]|c
max.connections.per.ip.overrides|string|""||c
max.connections.per.ip|int|2147483647|[0,...]|c
max.connections|int|2147483647|[0,...]|c
max.incremental.fetch.session.cache.slots|int|1000|[0,...]|r
max.request.partition.size.limit|int|2000|[1,...]|r
message.max.bytes|int|1048588|[0,...]|c
metadata.log.dir|string|null||r
metadata.log.max.record.bytes.between.snapshots|long|20971520|[1,...]|r
metadata.log.max.snapshot.interval.ms|long|3600000|[0,...]|r
metadata.log.segment.bytes|int|1073741824|[8388608,...]|r
metadata.log.segment.ms|long|604800000||r
metadata.max.idle.interval.ms|int|500|[0,...]|r
metadata.max.retention.bytes|long|104857600||r
metadata.max.retention.ms|long|604800000||r
metric.reporters|list|org.apache.kafka.common.metrics.JmxReporter||c
metrics.num.samples|int|2|[1,...]|r
metrics.recording.level|string|INFO||r
metrics.sample.window.ms|long|30000|[1,...]|r
min.insync.replicas|int|1|[1,...]|c
node.id|int|-|[0,...]|r
num.io.threads|int|8|[1,...]|c
num.network.threads|int|3|[1,...]|c
num.partitions|int|1|[1,...]|r
num.recovery.threads.per.data.dir|int|2|[1,...]|c
num.replica.alter.log.dirs.threads|int|null||r
num.replica.fetchers|int|1|[1,...]|c
offset.metadata.max.bytes|int|4096||r
offsets.commit.timeout.ms|int|5000|[1,...]|r
offsets.load.buffer.size|int|5242880|[1,...]|r
offsets.retention.check.interval.ms|long|600000|[1,...]|r
offsets.retention.minutes|int|10080|[1,...]|r
offsets.topic.compression.codec|int|0||r
offsets.topic.num.partitions|int|50|[1,...]|r
offsets.topic.replication.factor|short|3|[1,...]|r
offsets.topic.segment.bytes|int|104857600|[1,...]|r
principal.builder.class|class|org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder||p
process.roles|list|-|[broker, controller]|r
producer.id.expiration.ms|int|86400000|[1,...]|c
producer.purgatory.purge.interval.requests|int|1000||r
queued.max.request.bytes|long|-1||r
queued.max.requests|int|500|[1,...]|r
quota.window.num|int|11|[1,...]|r
quota.window.size.seconds|int|1|[1,...]|r
remote.fetch.max.wait.ms|int|500|[1,...]|c
remote.list.offsets.request.timeout.ms|long|30000|[1,...]|c
remote.log.index.file.cache.total.size.bytes|long|1073741824|[1,...]|c
remote.log.manager.copier.thread.pool.size|int|10|[1,...]|c
remote.log.manager.copy.max.bytes.per.second|long|9223372036854775807|[1,...]|c
remote.log.manager.copy.quota.window.num|int|11|[1,...]|r
remote.log.manager.copy.quota.window.size.seconds|int|1|[1,...]|r
remote.log.manager.expiration.thread.pool.size|int|10|[1,...]|c
remote.log.manager.fetch.max.bytes.per.second|long|9223372036854775807|[1,...]|c
remote.log.manager.fetch.quota.window.num|int|11|[1,...]|r
remote.log.manager.fetch.quota.window.size.seconds|int|1|[1,...]|r
remote.log.manager.follower.thread.pool.size|int|2|[1,...]|c
remote.log.manager.task.interval.ms|long|30000|[1,...]|r
remote.log.manager.thread.pool.size|int|2|[1,...]|r
remote.log.metadata.custom.metadata.max.bytes|int|128|[0,...]|r
remote.log.metadata.manager.class.name|string|org.apache.kafka.server.log.remote.metadata.storage.TopicBasedRemoteLogMetadataManager|non-empty string|r
remote.log.metadata.manager.class.path|string|null||r
remote.log.metadata.manager.impl.prefix|string|rlmm.config.|non-empty string|r
remote.log.metadata.manager.listener.name|string|null|non-empty string|r
remote.log.reader.max.pending.tasks|int|100|[1,...]|r
remote.log.reader.threads|int|10|[1,...]|c
remote.log.storage.manager.class.name|string|null|non-empty string|r
remote.log.storage.manager.class.path|string|null||r
remote.log.storage.manager.impl.prefix|string|rsm.config.|non-empty string|r
remote.log.storage.system.enable|boolean|false||r
replica.fetch.backoff.ms|int|1000|[0,...]|r
replica.fetch.max.bytes|int|1048576|[0,...]|r
replica.fetch.min.bytes|int|1||r
replica.fetch.response.max.bytes|int|10485760|[0,...]|r
replica.fetch.wait.max.ms|int|500||r
replica.high.watermark.checkpoint.interval.ms|long|5000||r
replica.lag.time.max.ms|long|30000||r
replica.selector.class|string|null||r
replica.socket.receive.buffer.bytes|int|65536||r
replica.socket.timeout.ms|int|30000||r
replication.quota.window.num|int|11|[1,...]|r
replication.quota.window.size.seconds|int|1|[1,...]|r
request.timeout.ms|int|30000||r
sasl.client.callback.handler.class|class|null||r
sasl.enabled.mechanisms|list|GSSAPI||p
sasl.jaas.config|password|null||p
sasl.kerberos.kinit.cmd|string|/usr/bin/kinit||p
sasl.kerberos.min.time.before.relogin|long|60000||p
sasl.kerberos.principal.to.local.rules|list|DEFAULT||p
sasl.kerberos.service.name|string|null||p
sasl.kerberos.ticket.renew.jitter|double|0.05||p
sasl.kerberos.ticket.renew.window.factor|double|0.8||p
sasl.login.callback.handler.class|class|null||r
sasl.login.class|class|null||r
sasl.login.connect.timeout.ms|int|null||r
sasl.login.read.timeout.ms|int|null||r
sasl.login.refresh.buffer.seconds|short|300||p
sasl.login.refresh.min.period.seconds|short|60||p
sasl.login.refresh.window.factor|double|0.8||p
sasl.login.refresh.window.jitter|double|0.05||p
sasl.login.retry.backoff.max.ms|long|10000||r
sasl.login.retry.backoff.ms|long|100||r
sasl.mechanism.controller.protocol|string|GSSAPI||r
sasl.mechanism.inter.broker.protocol|string|GSSAPI||p
sasl.oauthbearer.assertion.algorithm|string|RS256|(case insensitive) [ES256, RS256]|r
sasl.oauthbearer.assertion.claim.aud|string|null||r
sasl.oauthbearer.assertion.claim.exp.seconds|int|300|[0,...,86400]|r
sasl.oauthbearer.assertion.claim.iss|string|null||r
sasl.oauthbearer.assertion.claim.jti.include|boolean|false||r
sasl.oauthbearer.assertion.claim.nbf.seconds|int|60|[0,...,3600]|r
sasl.oauthbearer.assertion.claim.sub|string|null||r
sasl.oauthbearer.assertion.file|string|null||r
sasl.oauthbearer.assertion.private.key.file|string|null||r
sasl.oauthbearer.assertion.private.key.passphrase|password|null||r
sasl.oauthbearer.assertion.template.file|string|null||r
sasl.oauthbearer.client.credentials.client.id|string|null||r
sasl.oauthbearer.client.credentials.client.secret|password|null||r
sasl.oauthbearer.clock.skew.seconds|int|30||r
sasl.oauthbearer.expected.audience|list|""||r
sasl.oauthbearer.expected.issuer|string|null||r
sasl.oauthbearer.jwks.endpoint.refresh.ms|long|3600000||r
sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms|long|10000||r
sasl.oauthbearer.jwks.endpoint.retry.backoff.ms|long|100||r
sasl.oauthbearer.jwks.endpoint.url|string|null||r
sasl.oauthbearer.jwt.retriever.class|class|org.apache.kafka.common.security.oauthbearer.DefaultJwtRetriever||r
sasl.oauthbearer.jwt.validator.class|class|org.apache.kafka.common.security.oauthbearer.DefaultJwtValidator||r
sasl.oauthbearer.scope.claim.name|string|scope||r
sasl.oauthbearer.scope|string|null||r
sasl.oauthbearer.sub.claim.name|string|sub||r
sasl.oauthbearer.token.endpoint.url|string|null||r
sasl.server.callback.handler.class|class|null||r
sasl.server.max.receive.size|int|524288||r
security.inter.broker.protocol|string|PLAINTEXT|[PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL]|r
security.providers|string|null||r
share.coordinator.append.linger.ms|int|-1|[-1,...]|r
share.coordinator.load.buffer.size|int|5242880|[1,...]|r
share.coordinator.snapshot.update.records.per.snapshot|int|500|[0,...]|r
share.coordinator.state.topic.compression.codec|int|0||r
share.coordinator.state.topic.min.isr|short|2|[1,...]|r
share.coordinator.state.topic.num.partitions|int|50|[1,...]|r
share.coordinator.state.topic.replication.factor|short|3|[1,...]|r
share.coordinator.state.topic.segment.bytes|int|104857600|[1,...]|r
share.coordinator.threads|int|1|[1,...]|r
share.coordinator.write.timeout.ms|int|5000|[1,...]|r
share.fetch.purgatory.purge.interval.requests|int|1000||r
socket.connection.setup.timeout.max.ms|long|30000||r
socket.connection.setup.timeout.ms|long|10000||r
socket.listen.backlog.size|int|50|[1,...]|r
socket.receive.buffer.bytes|int|102400||r
socket.request.max.bytes|int|104857600|[1,...]|r
socket.send.buffer.bytes|int|102400||r
ssl.allow.dn.changes|boolean|false||r
ssl.allow.san.changes|boolean|false||r
ssl.cipher.suites|list|""||p
ssl.client.auth|string|none|[required, requested, none]|p
ssl.enabled.protocols|list|TLSv1.2,TLSv1.3||p
ssl.endpoint.identification.algorithm|string|https||p
ssl.engine.factory.class|class|null||p
ssl.key.password|password|null||p
ssl.keymanager.algorithm|string|SunX509||p
ssl.keystore.certificate.chain|password|null||p
ssl.keystore.key|password|null||p
ssl.keystore.location|string|null||p
ssl.keystore.password|password|null||p
ssl.keystore.type|string|JKS||p
ssl.principal.mapping.rules|string|DEFAULT||r
ssl.protocol|string|TLSv1.3||p
ssl.provider|string|null||p
ssl.secure.random.implementation|string|null||p
ssl.trustmanager.algorithm|string|PKIX||p
ssl.truststore.certificates|password|null||p
ssl.truststore.location|string|null||p
ssl.truststore.password|password|null||p
ssl.truststore.type|string|JKS||p
telemetry.max.bytes|int|1048576|[1,...]|r
transaction.abort.timed.out.transaction.cleanup.interval.ms|int|10000|[1,...]|r
transaction.max.timeout.ms|int|900000|[1,...]|r
transaction.partition.verification.enable|boolean|true||c
transaction.remove.expired.transaction.cleanup.interval.ms|int|3600000|[1,...]|r
transaction.state.log.load.buffer.size|int|5242880|[1,...]|r
transaction.state.log.min.isr|int|2|[1,...]|r
transaction.state.log.num.partitions|int|50|[1,...]|r
transaction.state.log.replication.factor|short|3|[1,...]|r
transaction.state.log.segment.bytes|int|104857600|[1,...]|r
transaction.two.phase.commit.enable|boolean|false||r
transactional.id.expiration.ms|int|604800000|[1,...]|r
unclean.leader.election.enable|boolean|false||c
"""  # noqa: E501 (one line per config, as Kafka spells the values)

TOPIC_TABLE = """\
cleanup.policy|list|delete|[compact, delete]|log.cleanup.policy
compression.gzip.level|int|-1|[1,...,9] or -1|compression.gzip.level
compression.lz4.level|int|9|[1,...,17]|compression.lz4.level
compression.type|string|producer|[uncompressed, zstd, lz4, snappy, gzip, producer]|compression.type
compression.zstd.level|int|3|[-131072,...,22]|compression.zstd.level
delete.retention.ms|long|86400000|[0,...]|log.cleaner.delete.retention.ms
file.delete.delay.ms|long|60000|[0,...]|log.segment.delete.delay.ms
flush.messages|long|9223372036854775807|[1,...]|log.flush.interval.messages
flush.ms|long|9223372036854775807|[0,...]|log.flush.interval.ms
follower.replication.throttled.replicas|list|""|[partitionId]:[brokerId],[partitionId]:[brokerId],...|-
index.interval.bytes|int|4096|[0,...]|log.index.interval.bytes
leader.replication.throttled.replicas|list|""|[partitionId]:[brokerId],[partitionId]:[brokerId],...|-
local.retention.bytes|long|-2|[-2,...]|log.local.retention.bytes
local.retention.ms|long|-2|[-2,...]|log.local.retention.ms
max.compaction.lag.ms|long|9223372036854775807|[1,...]|log.cleaner.max.compaction.lag.ms
max.message.bytes|int|1048588|[0,...]|message.max.bytes
message.timestamp.after.max.ms|long|3600000|[0,...]|log.message.timestamp.after.max.ms
message.timestamp.before.max.ms|long|9223372036854775807|[0,...]|log.message.timestamp.before.max.ms
message.timestamp.type|string|CreateTime|[CreateTime, LogAppendTime]|log.message.timestamp.type
min.cleanable.dirty.ratio|double|0.5|[0,...,1]|log.cleaner.min.cleanable.ratio
min.compaction.lag.ms|long|0|[0,...]|log.cleaner.min.compaction.lag.ms
min.insync.replicas|int|1|[1,...]|min.insync.replicas
preallocate|boolean|false||log.preallocate
remote.log.copy.disable|boolean|false||-
remote.log.delete.on.disable|boolean|false||-
remote.storage.enable|boolean|false||-
retention.bytes|long|-1||log.retention.bytes
retention.ms|long|604800000|[-1,...]|log.retention.ms
segment.bytes|int|1073741824|[1048576,...]|log.segment.bytes
segment.index.bytes|int|10485760|[4,...]|log.index.size.max.bytes
segment.jitter.ms|long|0|[0,...]|log.roll.jitter.ms
segment.ms|long|604800000|[1,...]|log.roll.ms
unclean.leader.election.enable|boolean|false||unclean.leader.election.enable
"""

# Apache Kafka 4.3.1's group configs (GroupConfig.CONFIG), in the order DescribeConfigs lists them, as
# `name|type|default|valid values|broker config` (the broker config that is the group config's default and
# bounds it, `-` for none). Read from a real 4.3.1 broker's DescribeConfigs answer for a GROUP resource.
GROUP_TABLE = """\
consumer.session.timeout.ms|int|45000|[1,...]|group.consumer.session.timeout.ms
consumer.assignment.interval.ms|int|1000|[0,...]|group.consumer.assignment.interval.ms
share.auto.offset.reset|string|latest||-
share.renew.acknowledge.enable|boolean|true||-
streams.initial.rebalance.delay.ms|int|3000|[0,...]|group.streams.initial.rebalance.delay.ms
share.session.timeout.ms|int|45000|[1,...]|group.share.session.timeout.ms
streams.assignment.interval.ms|int|1000|[0,...]|group.streams.assignment.interval.ms
share.heartbeat.interval.ms|int|5000|[1,...]|group.share.heartbeat.interval.ms
streams.heartbeat.interval.ms|int|5000|[1,...]|group.streams.heartbeat.interval.ms
share.delivery.count.limit|int|5|[2,...]|group.share.delivery.count.limit
consumer.heartbeat.interval.ms|int|5000|[1,...]|group.consumer.heartbeat.interval.ms
share.record.lock.duration.ms|int|30000|[1000,...]|group.share.record.lock.duration.ms
share.assignment.interval.ms|int|1000|[0,...]|group.share.assignment.interval.ms
share.isolation.level|string|read_uncommitted|[read_committed, read_uncommitted]|-
streams.session.timeout.ms|int|45000|[1,...]|group.streams.session.timeout.ms
share.partition.max.record.locks|int|2000|[100,...]|group.share.partition.max.record.locks
streams.num.standby.replicas|int|0|[0,...]|group.streams.num.standby.replicas
"""
