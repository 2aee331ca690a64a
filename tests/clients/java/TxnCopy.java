import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;

/**
 * Exactly-once consume-transform-produce: a group consumer (read_committed, no auto commit) and a
 * transactional producer copy every record of INPUT to OUTPUT (same partition, value "copy-" + value,
 * headers i and src = "partition:offset"), sending the consumed offsets in the same transaction.
 *
 * <p>Usage: {@code TxnCopy BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID TOTAL [abort-at=K] [die-at=K]
 * [timeout.ms=MS] [name=value ...]}; other options are consumer settings. Stops once the consumer owns
 * every partition of INPUT, has nothing more to read and its positions add up to TOTAL.
 *
 * <p>Crashes on purpose: {@code abort-at=K} aborts this process's K-th transaction after its records
 * reached the broker and rewinds to the committed offsets; {@code die-at=K} halts the JVM (exit 3, no
 * cleanup) in the K-th transaction, after its records and offsets reached the broker.
 *
 * <p>Events, one JSON line each: {"event": "assigned", "partitions"}, {"event": "committed"|"aborted",
 * "txn", "records", "offsets": {partition: offset}}, {"event": "rewound", "to"}, {"event": "dying"},
 * {"done": true, "positions"}; a failure prints {"event": "error", ...} and exits 1.
 */
public final class TxnCopy {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String input = args[1];
        String output = args[2];
        String group = args[3];
        String txnId = args[4];
        long total = Long.parseLong(args[5]);
        Map<String, String> opts = Records.options(args, 6);
        int abortAt = Integer.parseInt(take(opts, "abort-at", "-1"));
        int dieAt = Integer.parseInt(take(opts, "die-at", "-1"));
        long timeout = Long.parseLong(take(opts, "timeout.ms", "60000"));

        Properties cp = Records.baseConfig(bootstrap);
        cp.put("group.id", group);
        cp.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        cp.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        cp.put("enable.auto.commit", "false");
        cp.put("auto.offset.reset", "earliest");
        cp.put("isolation.level", "read_committed");
        cp.put("max.poll.records", "7");
        cp.putAll(opts);

        Properties pp = Records.baseConfig(bootstrap);
        pp.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        pp.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        pp.put("transactional.id", txnId);
        pp.put("max.block.ms", "30000");
        pp.put("linger.ms", "5");

        try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp);
             KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp)) {
            producer.initTransactions();
            Json.line(Json.obj("event", "initialized"));
            consumer.subscribe(List.of(input), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(java.util.Collection<TopicPartition> partitions) {
                    Json.line(Json.obj("event", "revoked", "partitions", numbers(partitions)));
                }

                @Override
                public void onPartitionsAssigned(java.util.Collection<TopicPartition> partitions) {
                    Json.line(Json.obj("event", "assigned", "partitions", numbers(partitions)));
                }
            });
            int inputPartitions = consumer.partitionsFor(input).size();
            long deadline = System.currentTimeMillis() + timeout;
            int txn = 0;
            while (true) {
                if (System.currentTimeMillis() > deadline) {
                    Json.line(Json.obj("event", "error", "error", "timeout", "positions", positions(consumer)));
                    System.exit(2);
                }
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                if (records.isEmpty()) {
                    Set<TopicPartition> assigned = consumer.assignment();
                    if (assigned.size() == inputPartitions && sum(consumer, assigned) >= total) {
                        break;
                    }
                    continue;
                }
                txn++;
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offsets = new java.util.HashMap<>();
                for (ConsumerRecord<String, String> r : records) {
                    ProducerRecord<String, String> out = new ProducerRecord<>(output, r.partition(), r.key(),
                            "copy-" + r.value());
                    Header i = r.headers().lastHeader("i");
                    if (i != null) {
                        out.headers().add("i", i.value());
                    }
                    out.headers().add("src", (r.partition() + ":" + r.offset()).getBytes(StandardCharsets.UTF_8));
                    producer.send(out);
                    offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
                Map<String, Object> shown = new TreeMap<>();
                for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
                    shown.put(Integer.toString(e.getKey().partition()), e.getValue().offset());
                }
                if (txn == dieAt) {
                    producer.flush();
                    Json.line(Json.obj("event", "dying", "txn", txn, "records", records.count(), "offsets", shown));
                    Runtime.getRuntime().halt(3);
                }
                if (txn == abortAt) {
                    producer.flush();
                    producer.abortTransaction();
                    Json.line(Json.obj("event", "aborted", "txn", txn, "records", records.count(), "offsets", shown));
                    Map<String, Object> to = new TreeMap<>();
                    Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(consumer.assignment());
                    for (TopicPartition tp : consumer.assignment()) {
                        OffsetAndMetadata c = committed.get(tp);
                        if (c == null) {
                            consumer.seekToBeginning(List.of(tp));
                            to.put(Integer.toString(tp.partition()), null);
                        } else {
                            consumer.seek(tp, c.offset());
                            to.put(Integer.toString(tp.partition()), c.offset());
                        }
                    }
                    Json.line(Json.obj("event", "rewound", "to", to));
                    continue;
                }
                producer.commitTransaction();
                Json.line(Json.obj("event", "committed", "txn", txn, "records", records.count(), "offsets", shown));
            }
            Json.line(Json.obj("done", true, "transactions", txn, "positions", positions(consumer)));
        } catch (Exception e) {
            Map<String, Object> out = Json.obj("event", "error");
            out.putAll(TxnScenario.describe(e));
            Json.line(out);
            System.exit(1);
        }
    }

    private static String take(Map<String, String> opts, String name, String dflt) {
        String v = opts.remove(name);
        return v == null ? dflt : v;
    }

    private static List<Integer> numbers(java.util.Collection<TopicPartition> partitions) {
        List<Integer> out = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            out.add(tp.partition());
        }
        out.sort(null);
        return out;
    }

    private static long sum(KafkaConsumer<String, String> consumer, Set<TopicPartition> partitions) {
        long n = 0;
        for (TopicPartition tp : partitions) {
            n += consumer.position(tp);
        }
        return n;
    }

    private static Map<String, Object> positions(KafkaConsumer<String, String> consumer) {
        Map<String, Object> out = new TreeMap<>();
        for (TopicPartition tp : consumer.assignment()) {
            out.put(Integer.toString(tp.partition()), consumer.position(tp));
        }
        return out;
    }
}
