import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.AbortTransactionSpec;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeProducersResult.PartitionProducerState;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

/**
 * The 4.x Admin client's calls that minibroker serves, in one fixed sequence, one JSON line per call:
 * {"call": name, "ok": true, "result": {...}} or {"call": name, "ok": false, "error": ExceptionClass, "message": ...}.
 * Results hold no ids, hosts, ports or times, so a run against minibroker and one against Apache Kafka can be
 * compared as they are. A failing call does not stop the following ones.
 *
 * <p>Usage: {@code AdminCoverage BOOTSTRAP PREFIX}: every topic, group, transactional id and user is named
 * PREFIX-something. Features (describe/updateFeatures) are not covered here.
 */
public final class AdminCoverage {
    private final String bootstrap;
    private final Admin admin;
    private final String topic;
    private final String group;
    private final String txnId;
    private final String user;
    private int node = -1;
    private KafkaProducer<String, String> hanging;
    private long producerId = -1;
    private int producerEpoch = -1;
    private int coordinatorEpoch = -1;

    private AdminCoverage(String bootstrap, Admin admin, String prefix) {
        this.bootstrap = bootstrap;
        this.admin = admin;
        this.topic = prefix + "-topic";
        this.group = prefix + "-group";
        this.txnId = prefix + "-txn";
        this.user = prefix + "-user";
    }

    /** One Admin call: its result fields. */
    private interface Call {
        Object run() throws Exception;
    }

    private static void call(String name, Call call) {
        Map<String, Object> out = Json.obj("call", name);
        try {
            Object result = call.run();
            out.put("ok", true);
            out.put("result", result);
        } catch (Exception e) {
            out.put("ok", false);
            out.putAll(Json.error(e));
        }
        Json.line(out);
    }

    public static void main(String[] args) throws Exception {
        Properties props = Records.baseConfig(args[0]);
        props.put("default.api.timeout.ms", "120000");  // generous: the first call may wait on a loaded machine
        try (Admin admin = Admin.create(props)) {
            new AdminCoverage(args[0], admin, args[1]).runAll();
        }
    }

    @SuppressWarnings("deprecation")
    private void runAll() {
        TopicPartition p0 = new TopicPartition(topic, 0);
        TopicPartition p1 = new TopicPartition(topic, 1);
        ConfigResource topicResource = new ConfigResource(ConfigResource.Type.TOPIC, topic);

        // cluster
        call("describeCluster", () -> {
            Collection<Node> nodes = admin.describeCluster().nodes().get();
            node = nodes.iterator().next().id();
            return Json.obj("nodes", nodes.size(), "controller", admin.describeCluster().controller().get() != null,
                    "cluster_id", admin.describeCluster().clusterId().get() != null);
        });

        // topics and partitions
        call("createTopics", () -> {
            admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get();
            return Json.obj();
        });
        call("createTopics.again", () -> admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get());
        call("listTopics", () -> Json.obj("listed", admin.listTopics().names().get().contains(topic)));
        call("describeTopics", () -> describe(topic));
        call("createPartitions", () -> {
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(3))).all().get();
            return settled(() -> describe(topic), r -> Integer.valueOf(3).equals(r.get("partitions")));
        });
        call("createPartitions.fewer", () -> admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(2)))
                .all().get());
        call("describeTopics.unknown", () -> describe(topic + "-none"));

        // configs
        call("describeConfigs", () -> config(topicResource, "retention.ms"));
        call("incrementalAlterConfigs", () -> {
            admin.incrementalAlterConfigs(Map.of(topicResource, List.of(new AlterConfigOp(
                    new ConfigEntry("retention.ms", "3600000"), AlterConfigOp.OpType.SET)))).all().get();
            return settled(() -> config(topicResource, "retention.ms"), r -> "3600000".equals(r.get("value")));
        });
        call("incrementalAlterConfigs.invalid", () -> admin.incrementalAlterConfigs(Map.of(topicResource,
                List.of(new AlterConfigOp(new ConfigEntry("cleanup.policy", "bogus"), AlterConfigOp.OpType.SET))))
                .all().get());

        // records and offsets
        call("produce", () -> {
            Properties props = Records.baseConfig(bootstrap);
            props.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
            props.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
                for (int i = 0; i < 10; i++) {
                    producer.send(new ProducerRecord<>(topic, 0, 1_000_000L + i, Records.key(i), Records.value(i)));
                }
                producer.flush();
            }
            return Json.obj("sent", 10);
        });
        call("listOffsets", () -> Json.obj("earliest", offset(p0, OffsetSpec.earliest()),
                "latest", offset(p0, OffsetSpec.latest()), "max_timestamp", offset(p0, OffsetSpec.maxTimestamp()),
                "for_timestamp", offset(p0, OffsetSpec.forTimestamp(1_000_004L))));
        call("deleteRecords", () -> Json.obj("low_watermark", admin.deleteRecords(Map.of(p0,
                RecordsToDelete.beforeOffset(4))).lowWatermarks().get(p0).get().lowWatermark(),
                "earliest", offset(p0, OffsetSpec.earliest())));
        call("deleteRecords.beyond", () -> admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(99)))
                .all().get());

        // consumer groups
        call("consumer.commit", () -> {
            Properties props = Records.baseConfig(bootstrap);
            props.put("group.id", group);
            props.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
            props.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
                consumer.commitSync(Map.of(p0, new OffsetAndMetadata(7), p1, new OffsetAndMetadata(0)));
            }
            return Json.obj();
        });
        call("listGroups", () -> {
            for (GroupListing g : admin.listGroups().all().get()) {
                if (g.groupId().equals(group)) {
                    return Json.obj("type", String.valueOf(g.type().orElse(null)),
                            "protocol", g.protocol(), "state", String.valueOf(g.groupState().orElse(null)));
                }
            }
            return Json.obj("listed", false);
        });
        call("listConsumerGroups", () -> Json.obj("listed", admin.listConsumerGroups().all().get().stream()
                .anyMatch(g -> g.groupId().equals(group))));
        call("describeConsumerGroups", () -> describeGroup(group));
        call("listConsumerGroupOffsets", () -> groupOffsets(group));
        call("alterConsumerGroupOffsets", () -> {
            admin.alterConsumerGroupOffsets(group, Map.of(p0, new OffsetAndMetadata(5))).all().get();
            return groupOffsets(group);
        });
        call("deleteConsumerGroupOffsets", () -> {
            admin.deleteConsumerGroupOffsets(group, Set.of(p1)).all().get();
            return groupOffsets(group);
        });
        call("deleteConsumerGroups", () -> {
            admin.deleteConsumerGroups(List.of(group)).all().get();
            return Json.obj();
        });
        call("describeConsumerGroups.deleted", () -> describeGroup(group));
        call("deleteConsumerGroups.unknown", () -> admin.deleteConsumerGroups(List.of(group + "-none")).all().get());

        // transactions: one left open, seen by the list/describe calls, then aborted and fenced
        call("transaction.open", () -> {
            Properties props = Records.baseConfig(bootstrap);
            props.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
            props.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
            props.put("transactional.id", txnId);
            hanging = new KafkaProducer<>(props);
            hanging.initTransactions();
            hanging.beginTransaction();
            hanging.send(new ProducerRecord<>(topic, 1, "k", "v")).get();
            return Json.obj();
        });
        call("listTransactions", () -> {
            for (TransactionListing t : admin.listTransactions().all().get()) {
                if (t.transactionalId().equals(txnId)) {
                    return Json.obj("state", t.state().name());
                }
            }
            return Json.obj("listed", false);
        });
        call("describeTransactions", () -> {
            TransactionDescription d = admin.describeTransactions(List.of(txnId)).description(txnId).get();
            producerId = d.producerId();
            producerEpoch = d.producerEpoch();
            List<String> partitions = new ArrayList<>();
            d.topicPartitions().forEach(tp -> partitions.add(tp.toString()));
            return Json.obj("state", d.state().name(), "partitions", partitions,
                    "timeout_ms", d.transactionTimeoutMs(), "started", d.transactionStartTimeMs().isPresent());
        });
        call("describeProducers", () -> producers(p1));
        call("abortTransaction", () -> {
            admin.abortTransaction(new AbortTransactionSpec(p1, producerId, (short) producerEpoch, coordinatorEpoch))
                    .all().get();
            return producers(p1);
        });
        call("fenceProducers", () -> {
            admin.fenceProducers(List.of(txnId)).all().get();
            TransactionDescription d = admin.describeTransactions(List.of(txnId)).description(txnId).get();
            return Json.obj("state", d.state().name(), "epoch_bumped", d.producerEpoch() > producerEpoch);
        });
        call("describeTransactions.unknown", () -> admin.describeTransactions(List.of(txnId + "-none"))
                .description(txnId + "-none").get().state().name());
        if (hanging != null) {
            hanging.close(Duration.ZERO);
        }

        // ACLs (a broker without an authorizer refuses them: SecurityDisabledException)
        AclBinding acl = new AclBinding(new ResourcePattern(ResourceType.TOPIC, topic, PatternType.LITERAL),
                new AccessControlEntry("User:" + user, "*", AclOperation.READ, AclPermissionType.ALLOW));
        AclBindingFilter aclFilter = new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.TOPIC, topic, PatternType.ANY), AccessControlEntryFilter.ANY);
        call("createAcls", () -> {
            admin.createAcls(List.of(acl)).all().get();
            return Json.obj();
        });
        call("describeAcls", () -> acls(admin.describeAcls(aclFilter).values().get()));
        call("deleteAcls", () -> acls(admin.deleteAcls(List.of(aclFilter)).all().get()));
        call("describeAcls.after", () -> acls(admin.describeAcls(aclFilter).values().get()));

        // SCRAM users
        call("alterUserScramCredentials.upsert", () -> {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(user,
                    new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), "secret"))).all().get();
            return scram(user);
        });
        call("alterUserScramCredentials.weak", () -> admin.alterUserScramCredentials(List.of(
                new UserScramCredentialUpsertion(user, new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 1024),
                        "secret"))).all().get());
        call("alterUserScramCredentials.delete", () -> {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialDeletion(user,
                    ScramMechanism.SCRAM_SHA_512))).all().get();
            return Json.obj();
        });
        call("describeUserScramCredentials.deleted", () -> scram(user));

        // log dirs
        call("describeLogDirs", () -> {
            Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(node)).descriptions().get(node).get();
            Set<String> partitions = new TreeSet<>();
            for (LogDirDescription dir : dirs.values()) {
                for (Map.Entry<TopicPartition, ReplicaInfo> e : dir.replicaInfos().entrySet()) {
                    if (e.getKey().topic().equals(topic)) {
                        partitions.add(e.getKey().toString());
                    }
                }
            }
            return Json.obj("dirs", dirs.size(), "partitions", new ArrayList<>(partitions));
        });
        call("describeReplicaLogDirs", () -> {
            TopicPartitionReplica replica = new TopicPartitionReplica(topic, 0, node);
            var info = admin.describeReplicaLogDirs(List.of(replica)).all().get().get(replica);
            return Json.obj("current_dir", info.getCurrentReplicaLogDir() != null,
                    "future_dir", info.getFutureReplicaLogDir() != null);
        });

        // leaders and reassignments
        call("electLeaders", () -> {
            Map<TopicPartition, Optional<Throwable>> out = admin.electLeaders(ElectionType.PREFERRED, Set.of(p0))
                    .partitions().get();
            return Json.obj("p0", out.get(p0).map(t -> t.getClass().getSimpleName()).orElse("elected"));
        });
        call("alterPartitionReassignments", () -> {
            admin.alterPartitionReassignments(Map.of(p0, Optional.of(new NewPartitionReassignment(List.of(node)))))
                    .all().get();
            return Json.obj();
        });
        call("alterPartitionReassignments.unknownBroker", () -> admin.alterPartitionReassignments(Map.of(p0,
                Optional.of(new NewPartitionReassignment(List.of(12345))))).all().get());
        call("alterPartitionReassignments.cancelNone", () -> admin.alterPartitionReassignments(Map.of(p0,
                Optional.empty())).all().get());
        call("listPartitionReassignments", () -> {
            Map<TopicPartition, PartitionReassignment> ongoing = admin.listPartitionReassignments(Set.of(p0))
                    .reassignments().get();
            return Json.obj("ongoing", ongoing.size());
        });

        // delete
        call("deleteTopics", () -> {
            admin.deleteTopics(List.of(topic)).all().get();
            return Json.obj();
        });
        call("deleteTopics.again", () -> admin.deleteTopics(List.of(topic)).all().get());
    }

    /** A read of what a call just changed. */
    private interface Read {
        Map<String, Object> run() throws Exception;
    }

    /**
     * The read again, at most 20 times 0.5 s apart, until it shows the change: Kafka's broker applies what its
     * controller committed from the metadata log a moment after the call returns (a loaded CI machine's Kafka
     * still described 2 partitions after createPartitions to 3, and the default retention.ms after setting it).
     */
    private static Map<String, Object> settled(Read read, java.util.function.Predicate<Map<String, Object>> shows)
            throws Exception {
        Map<String, Object> result = read.run();
        for (int i = 0; i < 20 && !shows.test(result); i++) {
            Thread.sleep(500);
            result = read.run();
        }
        return result;
    }

    private Map<String, Object> describe(String name) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(name)).allTopicNames().get().get(name);
        return Json.obj("partitions", d.partitions().size(), "internal", d.isInternal(),
                "replicas", d.partitions().get(0).replicas().size());
    }

    private Map<String, Object> config(ConfigResource resource, String name) throws Exception {
        Config config = admin.describeConfigs(List.of(resource)).all().get().get(resource);
        ConfigEntry e = config.get(name);
        return Json.obj("value", e.value(), "source", e.source().name(), "default", e.isDefault());
    }

    private long offset(TopicPartition tp, OffsetSpec spec) throws Exception {
        return admin.listOffsets(Map.of(tp, spec)).partitionResult(tp).get().offset();
    }

    private Map<String, Object> describeGroup(String id) throws Exception {
        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(id)).describedGroups().get(id).get();
        return Json.obj("state", d.groupState().name(), "members", d.members().size(), "type", d.type().name(),
                "simple", d.isSimpleConsumerGroup());
    }

    private Map<String, Object> groupOffsets(String id) throws Exception {
        Map<String, Object> out = new TreeMap<>();
        admin.listConsumerGroupOffsets(id).partitionsToOffsetAndMetadata().get()
                .forEach((tp, om) -> out.put(tp.toString(), om == null ? null : om.offset()));
        return out;
    }

    private Map<String, Object> producers(TopicPartition tp) throws Exception {
        PartitionProducerState state = admin.describeProducers(List.of(tp)).partitionResult(tp).get();
        List<Object> out = new ArrayList<>();
        for (ProducerState p : state.activeProducers()) {
            coordinatorEpoch = p.coordinatorEpoch().orElse(coordinatorEpoch);
            out.add(Json.obj("last_sequence", p.lastSequence(),
                    "txn_start_offset", p.currentTransactionStartOffset().isPresent()
                            ? p.currentTransactionStartOffset().getAsLong() : -1L));
        }
        return Json.obj("producers", out);
    }

    private static Map<String, Object> acls(Collection<AclBinding> bindings) {
        List<String> out = new ArrayList<>();
        for (AclBinding b : bindings) {
            out.add(b.entry().principal() + " " + b.entry().operation() + " " + b.entry().permissionType());
        }
        return Json.obj("acls", out);
    }

    private Map<String, Object> scram(String name) throws Exception {
        UserScramCredentialsDescription d = admin.describeUserScramCredentials(List.of(name)).description(name).get();
        List<String> out = new ArrayList<>();
        for (ScramCredentialInfo info : d.credentialInfos()) {
            out.add(info.mechanism() + "/" + info.iterations());
        }
        return Json.obj("credentials", out);
    }
}
