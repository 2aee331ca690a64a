import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Transactions through the Java client, for the client's own choice of transactions V1 or V2 (it reads the
 * finalized transaction.version from ApiVersions): args bootstrap, prefix. It commits 10 records and aborts 5
 * on topic prefix-out, then copies the 20 records of prefix-in to prefix-copy with a consume-transform-produce
 * loop (read_committed consumer, offsets sent to the transaction) under injected faults: one batch aborted and
 * re-read from the committed offsets, and one instance fenced by a new one with the same transactional.id in the
 * middle of its transaction. Prints one JSON line: what read_committed and read_uncommitted consumers read.
 */
public class TxnV2 {
    static String bootstrap;

    static Properties producerProps(String txnId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        if (txnId != null) p.put("transactional.id", txnId);
        p.put("linger.ms", "0");
        return p;
    }

    static KafkaConsumer<String, String> consumer(String group, String isolation) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("isolation.level", isolation);
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        if (group != null) p.put("group.id", group);
        return new KafkaConsumer<>(p);
    }

    static List<String> readAll(String topic, String isolation, int partitions) {
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> c = consumer(null, isolation)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (int i = 0; i < partitions; i++) tps.add(new TopicPartition(topic, i));
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> ends = c.endOffsets(tps);
            long deadline = System.currentTimeMillis() + 60000;
            while (System.currentTimeMillis() < deadline) {
                boolean done = true;
                for (TopicPartition tp : tps) if (c.position(tp) < ends.get(tp)) done = false;
                if (done) break;
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) values.add(r.value());
            }
        }
        Collections.sort(values);
        return values;
    }

    static String json(List<String> values) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < values.size(); i++) b.append(i == 0 ? "" : ",").append('"').append(values.get(i)).append('"');
        return b.append(']').toString();
    }

    public static void main(String[] args) throws Exception {
        bootstrap = args[0];
        String prefix = args[1];
        String out = prefix + "-out", in = prefix + "-in", copy = prefix + "-copy";
        Properties ap = new Properties();
        ap.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(out, 3, (short) 1), new NewTopic(in, 3, (short) 1),
                                       new NewTopic(copy, 3, (short) 1))).all().get();
        }
        // commit 10, abort 5
        try (KafkaProducer<String, String> p = new KafkaProducer<>(producerProps(prefix + "-txn"))) {
            p.initTransactions();
            p.beginTransaction();
            for (int i = 0; i < 10; i++) p.send(new ProducerRecord<>(out, i % 3, "k" + i, "c" + i));
            p.commitTransaction();
            p.beginTransaction();
            for (int i = 0; i < 5; i++) p.send(new ProducerRecord<>(out, i % 3, "k" + i, "a" + i)).get();
            p.abortTransaction();
            p.beginTransaction();  // a transaction that adds nothing, committed
            p.commitTransaction();
        }
        try (KafkaProducer<String, String> p = new KafkaProducer<>(producerProps(null))) {
            for (int i = 0; i < 20; i++) p.send(new ProducerRecord<>(in, i % 3, "k" + i, String.format("v%02d", i)));
            p.flush();
        }
        // consume-transform-produce with faults
        String group = prefix + "-group", copyTxn = prefix + "-copy-txn";
        int batches = 0, aborted = 0, fenced = 0;
        KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps(copyTxn));
        producer.initTransactions();
        try (KafkaConsumer<String, String> c = consumer(group, "read_committed")) {
            c.subscribe(List.of(in));
            int copied = 0;
            long deadline = System.currentTimeMillis() + 90000;
            while (copied < 20 && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> records = c.poll(Duration.ofMillis(200));
                if (records.isEmpty()) continue;
                batches++;
                producer.beginTransaction();
                Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (ConsumerRecord<String, String> r : records) {
                    producer.send(new ProducerRecord<>(copy, r.partition(), r.key(), r.value().toUpperCase()));
                    offsets.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
                }
                producer.sendOffsetsToTransaction(offsets, c.groupMetadata());
                if (batches == 1) {
                    // fault 1: abort, and read again from the committed offsets
                    producer.flush();
                    producer.abortTransaction();
                    aborted++;
                    rewind(c);
                    continue;
                }
                if (batches == 2) {
                    // fault 2: a new instance fences this one in the middle of its transaction
                    producer.flush();
                    KafkaProducer<String, String> next = new KafkaProducer<>(producerProps(copyTxn));
                    next.initTransactions();
                    try {
                        producer.commitTransaction();
                        throw new IllegalStateException("the fenced instance committed");
                    } catch (ProducerFencedException | org.apache.kafka.common.errors.InvalidProducerEpochException e) {
                        fenced++;
                    } catch (KafkaException e) {
                        if (!(e.getCause() instanceof ProducerFencedException)) throw e;
                        fenced++;
                    }
                    producer.close(Duration.ZERO);
                    producer = next;
                    rewind(c);
                    continue;
                }
                producer.commitTransaction();
                copied += records.count();
            }
        } finally {
            producer.close();
        }
        List<String> committed = readAll(out, "read_committed", 3);
        List<String> uncommitted = readAll(out, "read_uncommitted", 3);
        List<String> copied = readAll(copy, "read_committed", 3);
        System.out.println("{\"committed\": " + json(committed) + ", \"uncommitted\": " + json(uncommitted)
            + ", \"copied\": " + json(copied) + ", \"batches\": " + batches + ", \"aborted\": " + aborted
            + ", \"fenced\": " + fenced + "}");
    }

    /** Seek every assigned partition back to the group's committed offset (or the beginning). */
    static void rewind(KafkaConsumer<String, String> c) {
        Map<TopicPartition, OffsetAndMetadata> committed = c.committed(c.assignment());
        for (TopicPartition tp : c.assignment()) {
            OffsetAndMetadata o = committed.get(tp);
            if (o == null) c.seekToBeginning(List.of(tp)); else c.seek(tp, o.offset());
        }
    }
}
