import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Java side of bench/compare.py's "typical test": what one integration test does against a broker.
 *
 * <p>Usage: {@code TypicalTest BOOTSTRAP TESTS RECORDS PREFIX}. Each of TESTS tests creates a topic of one partition
 * (PREFIX-i), produces RECORDS records of 100 bytes with an idempotent producer (acks=all) and flushes, consumes them
 * all with a new consumer group (PREFIX-group-i; subscribe, the classic protocol, Kafka's default), commits
 * synchronously, closes the consumer and the producer and deletes the topic. One Admin client serves the whole loop,
 * as a test suite's fixture would. Prints one JSON line per test, {"test": i, "ms": milliseconds, "phases": {...}} (the milliseconds of
 * create, produce, consume, commit_close and delete); exits 1 on a failure.
 */
public final class TypicalTest {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        int tests = Integer.parseInt(args[1]);
        int records = Integer.parseInt(args[2]);
        String prefix = args[3];
        byte[] value = new byte[100];
        Properties adminProps = new Properties();
        adminProps.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(adminProps)) {
            for (int i = 0; i < tests; i++) {
                String topic = prefix + "-" + i;
                long start = System.nanoTime();
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
                long created = System.nanoTime();

                Properties producerProps = new Properties();
                producerProps.put("bootstrap.servers", bootstrap);
                producerProps.put("enable.idempotence", "true");
                producerProps.put("acks", "all");
                try (KafkaProducer<byte[], byte[]> producer =
                        new KafkaProducer<>(producerProps, new ByteArraySerializer(), new ByteArraySerializer())) {
                    for (int r = 0; r < records; r++) {
                        producer.send(new ProducerRecord<>(topic, value));
                    }
                    producer.flush();
                }
                long produced = System.nanoTime();
                long consumed = 0;

                Properties consumerProps = new Properties();
                consumerProps.put("bootstrap.servers", bootstrap);
                consumerProps.put("group.id", prefix + "-group-" + i);
                consumerProps.put("auto.offset.reset", "earliest");
                consumerProps.put("enable.auto.commit", "false");
                // -Dtypical.consumer.NAME=VALUE sets a consumer config (to see what a client setting changes)
                System.getProperties().stringPropertyNames().stream()
                        .filter(name -> name.startsWith("typical.consumer."))
                        .forEach(name -> consumerProps.put(name.substring("typical.consumer.".length()),
                                System.getProperty(name)));
                int seen = 0;
                try (KafkaConsumer<byte[], byte[]> consumer =
                        new KafkaConsumer<>(consumerProps, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                    consumer.subscribe(Collections.singletonList(topic));
                    long deadline = System.nanoTime() + 60_000_000_000L;
                    while (seen < records && System.nanoTime() < deadline) {
                        ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(100));
                        seen += batch.count();
                    }
                    consumed = System.nanoTime();
                    consumer.commitSync();
                }
                if (seen != records) {
                    System.out.println("{\"error\": \"test " + i + " consumed " + seen + " of " + records + "\"}");
                    System.exit(1);
                }
                long closed = System.nanoTime();
                admin.deleteTopics(List.of(topic)).all().get();
                long deleted = System.nanoTime();
                // one line per test: the bench bounds each test, so a broker that stalls one is reported
                System.out.println(String.format("{\"test\": %d, \"ms\": %.3f, \"phases\": {\"create\": %.3f, "
                        + "\"produce\": %.3f, \"consume\": %.3f, \"commit_close\": %.3f, \"delete\": %.3f}}", i,
                        (deleted - start) / 1e6, (created - start) / 1e6, (produced - created) / 1e6,
                        (consumed - produced) / 1e6, (closed - consumed) / 1e6, (deleted - closed) / 1e6));
            }
        }
    }
}
