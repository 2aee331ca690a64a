import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * The Java side of bench/consume.py: reads a whole topic from offset 0 without a consumer group.
 *
 * <p>Usage: {@code ConsumeBench BOOTSTRAP TOPIC COUNT TIMEOUT_S}. Fetches the topic's metadata, prints
 * {"ready": true}, waits for a line on stdin, then assigns every partition, seeks to the beginning and
 * polls until COUNT records arrived (or TIMEOUT_S passed), and prints one JSON line with the records,
 * their value bytes, the elapsed time and the time to the first record. Exits 1 if COUNT was not reached.
 */
public final class ConsumeBench {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        long count = Long.parseLong(args[2]);
        long timeoutNanos = (long) (Double.parseDouble(args[3]) * 1e9);

        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
        props.put("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");

        long records = 0;
        long valueBytes = 0;
        long firstNanos = -1;
        long elapsed;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            // Metadata before the signal: the connection is open when the timed phase starts.
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo info : consumer.partitionsFor(topic, Duration.ofSeconds(60))) {
                partitions.add(new TopicPartition(topic, info.partition()));
            }
            System.out.println("{\"ready\": true, \"partitions\": " + partitions.size() + "}");
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();

            long start = System.nanoTime();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            while (records < count && System.nanoTime() - start < timeoutNanos) {
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(500));
                for (ConsumerRecord<byte[], byte[]> record : batch) {
                    records++;
                    valueBytes += record.value() == null ? 0 : record.value().length;
                }
                if (firstNanos < 0 && records > 0) {
                    firstNanos = System.nanoTime() - start;
                }
            }
            elapsed = System.nanoTime() - start;
        }

        StringBuilder out = new StringBuilder("{");
        out.append("\"records\": ").append(records);
        out.append(", \"value_bytes\": ").append(valueBytes);
        out.append(", \"seconds\": ").append(elapsed / 1e9);
        out.append(", \"first_record_ms\": ").append(firstNanos / 1e6);
        out.append('}');
        System.out.println(out);
        System.out.flush();
        System.exit(records >= count ? 0 : 1);
    }
}
