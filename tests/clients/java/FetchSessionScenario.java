import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * One consumer (assign(), no group) reading a topic while its partition set changes, which the client
 * carries out with incremental fetch sessions (partitions added and forgotten).
 *
 * <p>Usage: {@code FetchSessionScenario BOOTSTRAP TOPIC PARTITIONS PER_ROUND SET [SET ...]}, each SET a
 * comma-separated list of partitions. For each SET: produce PER_ROUND records to every partition, assign
 * SET (partitions read before resume where they stopped, new ones from the beginning), and poll until
 * every assigned partition is read to its end. Prints one line per round, then a summary of what was read
 * per partition: {"done": true, "read": {p: count}, "distinct": {p: count}, "end": {p: offset}}.
 */
public final class FetchSessionScenario {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        int partitions = Integer.parseInt(args[2]);
        int perRound = Integer.parseInt(args[3]);
        long deadline = System.currentTimeMillis() + 90_000;

        Properties producerProps = Records.baseConfig(bootstrap);
        producerProps.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        producerProps.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        producerProps.put("linger.ms", "5");
        Properties consumerProps = Records.baseConfig(bootstrap);
        consumerProps.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        consumerProps.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        consumerProps.put("enable.auto.commit", "false");
        consumerProps.put("allow.auto.create.topics", "false");
        consumerProps.put("max.partition.fetch.bytes", "4096");  // several fetches per round

        Map<Integer, Long> read = new HashMap<>();
        Map<Integer, Set<Long>> distinct = new HashMap<>();
        Map<Integer, Long> saved = new HashMap<>();  // where a partition stopped when it was unassigned
        Map<Integer, Long> end = new HashMap<>();
        long produced = 0;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps);
             KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
            for (int round = 4; round < args.length; round++) {
                for (int p = 0; p < partitions; p++) {
                    for (int i = 0; i < perRound; i++, produced++) {
                        producer.send(new ProducerRecord<>(topic, p, Records.key(produced), Records.value(produced)));
                    }
                }
                producer.flush();
                List<TopicPartition> assigned = new ArrayList<>();
                for (String p : args[round].split(",")) {
                    assigned.add(new TopicPartition(topic, Integer.parseInt(p)));
                }
                for (TopicPartition tp : consumer.assignment()) {
                    if (!assigned.contains(tp)) {
                        saved.put(tp.partition(), consumer.position(tp));
                    }
                }
                Set<TopicPartition> before = new HashSet<>(consumer.assignment());
                consumer.assign(assigned);
                for (TopicPartition tp : assigned) {
                    if (!before.contains(tp)) {
                        consumer.seek(tp, saved.getOrDefault(tp.partition(), 0L));
                    }
                }
                Map<TopicPartition, Long> ends = consumer.endOffsets(assigned);
                ends.forEach((tp, o) -> end.put(tp.partition(), o));
                long polled = 0;
                while (!caughtUp(consumer, ends)) {
                    if (System.currentTimeMillis() > deadline) {
                        throw new IllegalStateException("round " + (round - 3) + " timed out");
                    }
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        polled++;
                        read.merge(r.partition(), 1L, Long::sum);
                        distinct.computeIfAbsent(r.partition(), k -> new HashSet<>()).add(r.offset());
                    }
                }
                Json.line(Json.obj("round", round - 3, "assigned", args[round], "polled", polled));
            }
        }
        Map<String, Object> readOut = new LinkedHashMap<>();
        Map<String, Object> distinctOut = new LinkedHashMap<>();
        Map<String, Object> endOut = new LinkedHashMap<>();
        read.forEach((p, n) -> readOut.put(Integer.toString(p), n));
        distinct.forEach((p, s) -> distinctOut.put(Integer.toString(p), (long) s.size()));
        end.forEach((p, o) -> endOut.put(Integer.toString(p), o));
        Json.line(Json.obj("done", true, "produced", produced, "read", readOut, "distinct", distinctOut,
                "end", endOut));
    }

    private static boolean caughtUp(KafkaConsumer<?, ?> consumer, Map<TopicPartition, Long> ends) {
        for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
            if (consumer.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }
}
