import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TopicListing;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;

/**
 * Runs Admin API commands in order with one Admin client and prints one JSON line per command:
 * {"cmd": ..., "ok": true, ...results} or {"cmd": ..., "ok": false, "error": ExceptionClass, "message": ...}.
 * A failing command does not stop the following ones.
 *
 * <p>Usage: {@code AdminScenario BOOTSTRAP COMMAND ARG... [; COMMAND ARG...]...}: commands are
 * separated by a lone ";" argument (so names may hold spaces). The commands are
 * <pre>
 *   cluster
 *   create TOPIC PARTITIONS [config=value ...]
 *   list
 *   describe TOPIC
 *   add-partitions TOPIC TOTAL
 *   produce TOPIC PARTITION COUNT TIMESTAMP_BASE    (record i gets timestamp base + 1000 * i)
 *   delete-records TOPIC PARTITION BEFORE_OFFSET
 *   offsets TOPIC PARTITION earliest|latest|max|TIMESTAMP
 *   configs TOPIC
 *   first-offset TOPIC PARTITION                    (offset of the first record a consumer reads)
 *   delete TOPIC
 *   reassign TOPIC PARTITION NODE,NODE...             (alterPartitionReassignments)
 *   elect TOPIC PARTITION                            (electLeaders, PREFERRED)
 *   leader TOPIC PARTITION                           (leader id and replica ids from describeTopics)
 * </pre>
 */
public final class AdminScenario {
    private final String bootstrap;
    private final Admin admin;

    private AdminScenario(String bootstrap, Admin admin) {
        this.bootstrap = bootstrap;
        this.admin = admin;
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        try (Admin admin = Admin.create(Records.baseConfig(bootstrap))) {
            AdminScenario scenario = new AdminScenario(bootstrap, admin);
            Records.runCommands(args, 1, scenario::run);
        }
    }

    private Map<String, Object> run(String[] c) throws Exception {
        switch (c[0]) {
            case "cluster": return cluster();
            case "create": return create(c[1], Integer.parseInt(c[2]), Records.options(c, 3));
            case "list": return list();
            case "describe": return describe(c[1]);
            case "add-partitions":
                admin.createPartitions(Map.of(c[1], NewPartitions.increaseTo(Integer.parseInt(c[2])))).all().get();
                return Json.obj();
            case "produce":
                return produce(c[1], Integer.parseInt(c[2]), Integer.parseInt(c[3]), Long.parseLong(c[4]));
            case "delete-records": return deleteRecords(tp(c[1], c[2]), Long.parseLong(c[3]));
            case "offsets": return offsets(tp(c[1], c[2]), c[3]);
            case "configs": return configs(c[1]);
            case "first-offset": return firstOffset(tp(c[1], c[2]));
            case "delete":
                admin.deleteTopics(List.of(c[1])).all().get();
                return Json.obj();
            case "reassign": return reassign(tp(c[1], c[2]), c[3]);
            case "elect":
                admin.electLeaders(ElectionType.PREFERRED, Set.of(tp(c[1], c[2]))).all().get();
                return Json.obj();
            case "leader": return leader(tp(c[1], c[2]));
            default: throw new IllegalArgumentException("unknown command " + c[0]);
        }
    }

    private Map<String, Object> reassign(TopicPartition tp, String nodes) throws Exception {
        List<Integer> replicas = new ArrayList<>();
        for (String node : nodes.split(",")) {
            replicas.add(Integer.parseInt(node));
        }
        admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(replicas))))
                .all().get();
        return Json.obj("ongoing", admin.listPartitionReassignments().reassignments().get().size());
    }

    private Map<String, Object> leader(TopicPartition tp) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(tp.topic())).allTopicNames().get().get(tp.topic());
        TopicPartitionInfo p = d.partitions().get(tp.partition());
        List<Object> replicas = new ArrayList<>();
        for (Node n : p.replicas()) {
            replicas.add(n.id());
        }
        return Json.obj("leader", p.leader() == null ? null : p.leader().id(), "replicas", replicas);
    }

    private static TopicPartition tp(String topic, String partition) {
        return new TopicPartition(topic, Integer.parseInt(partition));
    }

    private Map<String, Object> cluster() throws Exception {
        DescribeClusterResult r = admin.describeCluster();
        List<Object> nodes = new ArrayList<>();
        for (Node n : r.nodes().get()) {
            nodes.add(Json.obj("id", n.id(), "host", n.host(), "port", n.port()));
        }
        Node controller = r.controller().get();
        return Json.obj("cluster_id", r.clusterId().get(), "nodes", nodes,
                "controller", controller == null ? null : controller.id());
    }

    private Map<String, Object> create(String topic, int partitions, Map<String, String> configs) throws Exception {
        NewTopic nt = new NewTopic(topic, partitions, (short) 1).configs(configs);
        var result = admin.createTopics(List.of(nt));
        result.all().get();
        return Json.obj("partitions", result.numPartitions(topic).get(),
                "replication_factor", result.replicationFactor(topic).get());
    }

    private Map<String, Object> list() throws Exception {
        TreeSet<String> names = new TreeSet<>();
        for (TopicListing l : admin.listTopics().listings().get()) {
            names.add(l.name());
        }
        return Json.obj("topics", new ArrayList<>(names));
    }

    private Map<String, Object> describe(String topic) throws Exception {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
        List<Object> parts = new ArrayList<>();
        for (TopicPartitionInfo p : d.partitions()) {
            parts.add(Json.obj("partition", p.partition(), "leader", p.leader() == null ? null : p.leader().id(),
                    "replicas", p.replicas().size(), "isr", p.isr().size()));
        }
        return Json.obj("name", d.name(), "internal", d.isInternal(), "topic_id", String.valueOf(d.topicId()),
                "partitions", parts);
    }

    private Map<String, Object> produce(String topic, int partition, int count, long tsBase) throws Exception {
        Properties p = Records.baseConfig(bootstrap);
        p.remove("default.api.timeout.ms");
        p.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        p.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        p.put("acks", "all");
        p.put("max.block.ms", "30000");
        p.put("delivery.timeout.ms", "60000");
        List<Object> offsets = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            List<java.util.concurrent.Future<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                futures.add(producer.send(new ProducerRecord<>(topic, partition, tsBase + 1000L * i,
                        Records.key(i), Records.value(i))));
            }
            for (var f : futures) {
                offsets.add(f.get().offset());
            }
        }
        return Json.obj("offsets", offsets);
    }

    private Map<String, Object> deleteRecords(TopicPartition tp, long before) throws Exception {
        var result = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(before)));
        return Json.obj("low_watermark", result.lowWatermarks().get(tp).get().lowWatermark());
    }

    private Map<String, Object> offsets(TopicPartition tp, String spec) throws Exception {
        OffsetSpec os;
        switch (spec) {
            case "earliest": os = OffsetSpec.earliest(); break;
            case "latest": os = OffsetSpec.latest(); break;
            case "max": os = OffsetSpec.maxTimestamp(); break;
            default: os = OffsetSpec.forTimestamp(Long.parseLong(spec));
        }
        ListOffsetsResult.ListOffsetsResultInfo info = admin.listOffsets(Map.of(tp, os)).partitionResult(tp).get();
        return Json.obj("offset", info.offset(), "timestamp", info.timestamp(),
                "leader_epoch", info.leaderEpoch().orElse(null));
    }

    private Map<String, Object> configs(String topic) throws Exception {
        ConfigResource res = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Config config = admin.describeConfigs(List.of(res)).all().get().get(res);
        Map<String, Object> entries = new LinkedHashMap<>();
        for (ConfigEntry e : config.entries()) {
            entries.put(e.name(), Json.obj("value", e.value(), "source", e.source().name(),
                    "read_only", e.isReadOnly(), "sensitive", e.isSensitive()));
        }
        return Json.obj("configs", entries);
    }

    private Map<String, Object> firstOffset(TopicPartition tp) {
        Properties p = Records.baseConfig(bootstrap);
        p.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        p.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        p.put("enable.auto.commit", "false");
        p.put("allow.auto.create.topics", "false");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.currentTimeMillis() + 30000;
            while (System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    return Json.obj("offset", r.offset(), "key", r.key(), "value", r.value());
                }
            }
            throw new IllegalStateException("no record from " + tp + " within 30 s");
        }
    }
}
