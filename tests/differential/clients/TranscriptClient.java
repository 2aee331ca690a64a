import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * The Java client (kafka-clients 4.x) side of tests/differential/test_client_transcripts.py: one application run
 * against one broker, printing what it saw as one JSON line, as transcript_app.py does for the Python clients.
 *
 * <p>Usage: {@code TranscriptClient SCENARIO BOOTSTRAP TOPIC GROUP TXN}; SCENARIO is produce_consume_group,
 * idempotent, transactional or admin. Records, offsets and exceptions are printed by name, never by id or time.
 * The consumer uses the classic group protocol.
 */
public final class TranscriptClient {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    public static void main(String[] args) {
        String scenario = args[0];
        String bootstrap = args[1];
        String topic = args[2];
        String group = args[3];
        String txn = args[4];
        String line;
        try {
            line = "{\"seen\": " + run(scenario, bootstrap, topic, group, txn) + "}";
        } catch (Exception e) {
            Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            line = "{\"exception\": " + quote(cause.getClass().getSimpleName()) + ", \"message\": "
                + quote(String.valueOf(cause.getMessage())) + "}";
        }
        System.out.println(line);
        System.out.flush();
        System.exit(0);
    }

    private static Properties base(String bootstrap) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("client.id", "transcript");
        return props;
    }

    private static String run(String scenario, String bootstrap, String topic, String group, String txn)
            throws Exception {
        StringBuilder seen = new StringBuilder("{");
        try (Admin admin = Admin.create(base(bootstrap))) {
            if (scenario.equals("admin")) {
                admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(60, TimeUnit.SECONDS);
                try {
                    admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1))).all().get(60, TimeUnit.SECONDS);
                    seen.append("\"create_again\": \"ok\", ");
                } catch (ExecutionException e) {
                    seen.append("\"create_again\": ").append(quote(e.getCause().getClass().getSimpleName()))
                        .append(", ");
                }
                TopicDescription described = admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(30, TimeUnit.SECONDS).get(topic);
                List<String> replicas = new ArrayList<>();
                described.partitions().forEach(p -> replicas.add(String.valueOf(p.replicas().size())));
                seen.append("\"described\": [").append(described.partitions().size()).append(", [")
                    .append(String.join(", ", replicas)).append("]]");
                admin.deleteTopics(List.of(topic)).all().get(60, TimeUnit.SECONDS);
                return seen.append("}").toString();
            }
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(60, TimeUnit.SECONDS);
        }
        Properties producerProps = base(bootstrap);
        producerProps.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        producerProps.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        producerProps.put("acks", "all");
        String isolation = "read_uncommitted";
        int want = 5;
        List<Long> offsets = new ArrayList<>();
        if (scenario.equals("transactional")) {
            producerProps.put("transactional.id", txn);
            isolation = "read_committed";
            want = 2;
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
                producer.initTransactions();
                for (String outcome : List.of("commit", "abort", "commit")) {
                    producer.beginTransaction();
                    offsets.add(producer.send(new ProducerRecord<>(topic, outcome)).get(60, TimeUnit.SECONDS)
                        .offset());
                    if (outcome.equals("commit")) {
                        producer.commitTransaction();
                    } else {
                        producer.abortTransaction();
                    }
                }
            }
        } else {
            producerProps.put("enable.idempotence", String.valueOf(scenario.equals("idempotent")));
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
                for (int i = 0; i < 5; i++) {
                    RecordMetadata sent = producer.send(new ProducerRecord<>(topic, "v" + i)).get(60, TimeUnit.SECONDS);
                    offsets.add(sent.offset());
                }
            }
        }
        seen.append("\"offsets\": ").append(offsets).append(", ");
        Properties consumerProps = base(bootstrap);
        consumerProps.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        consumerProps.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        consumerProps.put("group.id", group);
        consumerProps.put("group.protocol", "classic");
        consumerProps.put("auto.offset.reset", "earliest");
        consumerProps.put("enable.auto.commit", "false");
        consumerProps.put("isolation.level", isolation);
        List<ConsumerRecord<String, String>> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            while (records.size() < want && System.nanoTime() < deadline) {
                consumer.poll(Duration.ofMillis(500)).forEach(records::add);
            }
            consumer.commitSync();
            Set<TopicPartition> assigned = consumer.assignment();
            Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(assigned, Duration.ofSeconds(30));
            seen.append("\"committed\": ").append(committedJson(committed.values())).append(", ");
        }
        records.sort(Comparator.comparingInt((ConsumerRecord<String, String> r) -> r.partition())
            .thenComparingLong(ConsumerRecord::offset));
        List<String> items = new ArrayList<>();
        for (ConsumerRecord<String, String> r : records) {
            items.add("[" + r.partition() + ", " + r.offset() + ", " + quote(r.value()) + "]");
        }
        seen.append("\"records\": [").append(String.join(", ", items)).append("]");
        return seen.append("}").toString();
    }

    private static String committedJson(Collection<OffsetAndMetadata> committed) {
        List<String> items = new ArrayList<>();
        for (OffsetAndMetadata offset : committed) {
            items.add(offset == null ? "null" : String.valueOf(offset.offset()));
        }
        return "[" + String.join(", ", items) + "]";
    }

    private static String quote(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }
}
