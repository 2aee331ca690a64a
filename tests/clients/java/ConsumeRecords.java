import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;

/**
 * Reads a whole topic without a consumer group: assign() every partition, seekToBeginning(), and
 * poll until every partition's position reaches the end offset seen at start (and at least
 * {@code expect} records arrived, when given).
 *
 * <p>Usage: {@code ConsumeRecords BOOTSTRAP TOPIC [expect=N] [timeout.ms=MS] [name=value ...]};
 * other options are consumer settings. Prints one line per record, then {"done": true, ...};
 * exits 2 on timeout.
 */
public final class ConsumeRecords {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        Map<String, String> opts = Records.options(args, 2);
        long expect = Long.parseLong(opts.getOrDefault("expect", "-1"));
        opts.remove("expect");
        long deadline = System.currentTimeMillis() + Long.parseLong(opts.getOrDefault("timeout.ms", "60000"));
        opts.remove("timeout.ms");

        Properties props = Records.baseConfig(bootstrap);
        props.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        props.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        props.put("enable.auto.commit", "false");
        props.put("allow.auto.create.topics", "false");
        props.putAll(opts);

        long count = 0;
        boolean timedOut = false;
        Map<String, Object> beginning = new LinkedHashMap<>();
        Map<String, Object> end = new LinkedHashMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> parts = new ArrayList<>();
            while (parts.isEmpty()) {
                for (PartitionInfo pi : consumer.partitionsFor(topic)) {
                    parts.add(new TopicPartition(topic, pi.partition()));
                }
                if (parts.isEmpty()) {
                    if (System.currentTimeMillis() > deadline) {
                        throw new IllegalStateException("topic " + topic + " has no partitions");
                    }
                    Thread.sleep(200);
                }
            }
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            Map<TopicPartition, Long> ends = consumer.endOffsets(parts);
            consumer.beginningOffsets(parts).forEach((tp, o) -> beginning.put(Integer.toString(tp.partition()), o));
            ends.forEach((tp, o) -> end.put(Integer.toString(tp.partition()), o));

            while (!caughtUp(consumer, ends) || count < expect) {
                if (System.currentTimeMillis() > deadline) {
                    timedOut = true;
                    break;
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    count++;
                    Map<String, Object> headers = new LinkedHashMap<>();
                    for (Header h : r.headers()) {
                        headers.put(h.key(), h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
                    }
                    Json.line(Json.obj("partition", r.partition(), "offset", r.offset(), "key", r.key(),
                            "value", r.value(), "timestamp", r.timestamp(), "headers", headers));
                }
            }
        }
        Json.line(Json.obj("done", true, "count", count, "beginning", beginning, "end", end,
                "timed_out", timedOut));
        System.exit(timedOut ? 2 : 0);
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
