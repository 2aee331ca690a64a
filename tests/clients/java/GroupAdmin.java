import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Consumer group Admin API commands, run in order with one Admin client; prints one JSON line per
 * command (see {@link Records#runCommands}).
 *
 * <p>Usage: {@code GroupAdmin BOOTSTRAP COMMAND ARG... [; COMMAND ARG...]...}. The commands are
 * <pre>
 *   create TOPIC PARTITIONS
 *   produce TOPIC FROM COUNT PARTITIONS   (records FROM..FROM+COUNT-1, record i to partition i % PARTITIONS,
 *                                          key/value as Records, header i)
 *   list-groups                           {"groups": {group: {"state", "simple"}}}
 *   describe-group GROUP                  {"state", "simple", "assignor", "coordinator", "members": [...]}
 *   group-offsets GROUP                   {"offsets": {"topic:partition": offset}}
 *   alter-offsets GROUP TOPIC PARTITION OFFSET
 *   delete-offsets GROUP TOPIC PARTITION
 *   delete-group GROUP
 * </pre>
 */
public final class GroupAdmin {
    private final String bootstrap;
    private final Admin admin;

    private GroupAdmin(String bootstrap, Admin admin) {
        this.bootstrap = bootstrap;
        this.admin = admin;
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        try (Admin admin = Admin.create(Records.baseConfig(bootstrap))) {
            GroupAdmin scenario = new GroupAdmin(bootstrap, admin);
            Records.runCommands(args, 1, scenario::run);
        }
    }

    private Map<String, Object> run(String[] c) throws Exception {
        switch (c[0]) {
            case "create":
                admin.createTopics(List.of(new NewTopic(c[1], Integer.parseInt(c[2]), (short) 1))).all().get();
                return Json.obj();
            case "produce":
                return produce(c[1], Long.parseLong(c[2]), Long.parseLong(c[3]), Integer.parseInt(c[4]));
            case "list-groups": return listGroups();
            case "describe-group": return describe(c[1]);
            case "group-offsets": return offsets(c[1]);
            case "alter-offsets":
                admin.alterConsumerGroupOffsets(c[1], Map.of(tp(c[2], c[3]),
                        new OffsetAndMetadata(Long.parseLong(c[4])))).all().get();
                return Json.obj();
            case "delete-offsets":
                admin.deleteConsumerGroupOffsets(c[1], Set.of(tp(c[2], c[3]))).all().get();
                return Json.obj();
            case "delete-group":
                admin.deleteConsumerGroups(List.of(c[1])).all().get();
                return Json.obj();
            default: throw new IllegalArgumentException("unknown command " + c[0]);
        }
    }

    private static TopicPartition tp(String topic, String partition) {
        return new TopicPartition(topic, Integer.parseInt(partition));
    }

    private Map<String, Object> produce(String topic, long from, long count, int partitions) throws Exception {
        Properties p = Records.baseConfig(bootstrap);
        p.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        p.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        p.put("acks", "all");
        p.put("linger.ms", "5");
        List<java.util.concurrent.Future<org.apache.kafka.clients.producer.RecordMetadata>> futures = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (long i = from; i < from + count; i++) {
                ProducerRecord<String, String> rec = new ProducerRecord<>(topic, (int) (i % partitions),
                        Records.key(i), Records.value(i));
                rec.headers().add("i", Long.toString(i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
                futures.add(producer.send(rec));
            }
            producer.flush();
            for (java.util.concurrent.Future<org.apache.kafka.clients.producer.RecordMetadata> f : futures) {
                f.get();
            }
        }
        return Json.obj("sent", count);
    }

    private Map<String, Object> listGroups() throws Exception {
        Map<String, Object> groups = new TreeMap<>();
        Collection<ConsumerGroupListing> listings = admin.listConsumerGroups().all().get();
        for (ConsumerGroupListing l : listings) {
            groups.put(l.groupId(), Json.obj("state", l.state().map(Object::toString).orElse(null),
                    "simple", l.isSimpleConsumerGroup()));
        }
        return Json.obj("groups", groups);
    }

    private Map<String, Object> describe(String group) throws Exception {
        ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
        List<Object> members = new ArrayList<>();
        for (MemberDescription m : d.members()) {
            List<String> parts = new ArrayList<>();
            for (TopicPartition tp : m.assignment().topicPartitions()) {
                parts.add(tp.topic() + ":" + tp.partition());
            }
            parts.sort(null);
            Optional<String> instance = m.groupInstanceId();
            members.add(Json.obj("member_id", m.consumerId(), "client_id", m.clientId(), "host", m.host(),
                    "instance_id", instance.orElse(null), "partitions", parts));
        }
        return Json.obj("group_id", d.groupId(), "state", String.valueOf(d.state()), "simple",
                d.isSimpleConsumerGroup(), "assignor", d.partitionAssignor(),
                "coordinator", d.coordinator() == null ? null : d.coordinator().id(), "members", members);
    }

    private Map<String, Object> offsets(String group) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> offsets =
                admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        Map<String, Object> out = new TreeMap<>();
        Map<String, Object> metadata = new LinkedHashMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
            String name = e.getKey().topic() + ":" + e.getKey().partition();
            out.put(name, e.getValue() == null ? null : e.getValue().offset());
            if (e.getValue() != null) {
                metadata.put(name, e.getValue().metadata());
            }
        }
        return Json.obj("offsets", out, "metadata", metadata);
    }
}
