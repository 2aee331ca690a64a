import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.admin.TopicListing;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AclOperation;

/**
 * Admin commands for the metadata-fidelity tests (internal topics, authorized operations, manual
 * assignments, bounded creations); one JSON line per command, as AdminScenario prints them.
 *
 * <pre>
 *   list                               (listTopics: names, internal topics excluded)
 *   list-internal                      (listTopics with listInternal: names and the internal ones)
 *   create TOPIC PARTITIONS
 *   commit GROUP TOPIC                 (a consumer commits offset 0 of TOPIC-0 for GROUP)
 *   describe TOPIC                     (isInternal and partition count)
 *   partitions TOPIC
 *   topic-ops TOPIC                    (describeTopics with includeAuthorizedOperations)
 *   cluster-ops                        (describeCluster with includeAuthorizedOperations)
 *   group-ops GROUP                    (describeConsumerGroups with includeAuthorizedOperations)
 *   add-partitions TOPIC TOTAL BROKER  (createPartitions, the new partitions assigned to BROKER)
 * </pre>
 */
public final class MetadataFidelity {
    private final String bootstrap;
    private final Admin admin;

    private MetadataFidelity(String bootstrap, Admin admin) {
        this.bootstrap = bootstrap;
        this.admin = admin;
    }

    public static void main(String[] args) throws Exception {
        try (Admin admin = Admin.create(Records.baseConfig(args[0]))) {
            MetadataFidelity scenario = new MetadataFidelity(args[0], admin);
            Records.runCommands(args, 1, scenario::run);
        }
    }

    private Map<String, Object> run(String[] c) throws Exception {
        switch (c[0]) {
            case "list": return list(false);
            case "list-internal": return list(true);
            case "create":
                admin.createTopics(List.of(new NewTopic(c[1], Integer.parseInt(c[2]), (short) 1))).all().get();
                return Json.obj();
            case "commit": return commit(c[1], c[2]);
            case "describe": {
                TopicDescription d = describe(c[1], false);
                return Json.obj("internal", d.isInternal(), "partitions", d.partitions().size());
            }
            case "partitions": return Json.obj("partitions", describe(c[1], false).partitions().size());
            case "topic-ops": return ops(describe(c[1], true).authorizedOperations());
            case "cluster-ops":
                return ops(admin.describeCluster(new DescribeClusterOptions().includeAuthorizedOperations(true))
                        .authorizedOperations().get());
            case "group-ops":
                return ops(admin.describeConsumerGroups(List.of(c[1]),
                        new DescribeConsumerGroupsOptions().includeAuthorizedOperations(true))
                        .describedGroups().get(c[1]).get().authorizedOperations());
            case "add-partitions":
                admin.createPartitions(Map.of(c[1], NewPartitions.increaseTo(Integer.parseInt(c[2]),
                        List.of(List.of(Integer.parseInt(c[3])))))).all().get();
                return Json.obj();
            default: throw new IllegalArgumentException("unknown command " + c[0]);
        }
    }

    private Map<String, Object> list(boolean internal) throws Exception {
        TreeSet<String> names = new TreeSet<>();
        TreeSet<String> internals = new TreeSet<>();
        for (TopicListing l : admin.listTopics(new ListTopicsOptions().listInternal(internal)).listings().get()) {
            names.add(l.name());
            if (l.isInternal()) {
                internals.add(l.name());
            }
        }
        return Json.obj("topics", new ArrayList<>(names), "internal", new ArrayList<>(internals));
    }

    private TopicDescription describe(String topic, boolean withOperations) throws Exception {
        return admin.describeTopics(List.of(topic),
                new DescribeTopicsOptions().includeAuthorizedOperations(withOperations))
                .allTopicNames().get().get(topic);
    }

    private static Map<String, Object> ops(Set<AclOperation> operations) {
        TreeSet<String> names = new TreeSet<>();
        if (operations != null) {
            for (AclOperation op : operations) {
                names.add(op.name());
            }
        }
        return Json.obj("operations", new ArrayList<>(names));
    }

    private Map<String, Object> commit(String group, String topic) {
        Properties p = Records.baseConfig(bootstrap);
        p.put("group.id", group);
        p.put("enable.auto.commit", "false");
        p.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        p.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.commitSync(Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(0)));
        }
        return Json.obj();
    }
}
