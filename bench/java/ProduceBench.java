import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The Java side of bench/produce.py: an idempotent, acks=all producer of fixed-size records.
 *
 * <p>Usage: {@code ProduceBench BOOTSTRAP TOPIC COUNT WARMUP RECORD_SIZE BATCH_SIZE}. Sends WARMUP
 * untimed records, prints {"ready": true}, waits for a line on stdin, then sends COUNT records with a
 * null key and prints one JSON line with the elapsed time and send-to-callback latency percentiles.
 * Exits 1 if any record failed.
 */
public final class ProduceBench {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        int count = Integer.parseInt(args[2]);
        int warmup = Math.max(1, Integer.parseInt(args[3]));
        int recordSize = Integer.parseInt(args[4]);
        String batchSize = args[5];

        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("key.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        props.put("value.serializer", "org.apache.kafka.common.serialization.ByteArraySerializer");
        props.put("acks", "all");
        props.put("enable.idempotence", "true");
        props.put("batch.size", batchSize);

        byte[] value = new byte[recordSize];
        new Random(42).nextBytes(value);
        long[] sentAt = new long[count];
        long[] latency = new long[count];
        AtomicLong acked = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        String firstError = null;
        long elapsed;

        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
            for (int i = 1; i < warmup; i++) {
                producer.send(new ProducerRecord<>(topic, value));
            }
            producer.send(new ProducerRecord<>(topic, value)).get(60, TimeUnit.SECONDS);
            System.out.println("{\"ready\": true}");
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();

            final String[] error = new String[1];
            long start = System.nanoTime();
            for (int i = 0; i < count; i++) {
                final int n = i;
                sentAt[i] = System.nanoTime();
                producer.send(new ProducerRecord<>(topic, value), (md, err) -> {
                    latency[n] = System.nanoTime() - sentAt[n];
                    if (err == null) {
                        acked.incrementAndGet();
                    } else if (failed.getAndIncrement() == 0) {
                        error[0] = err.toString();
                    }
                });
            }
            producer.flush();
            elapsed = System.nanoTime() - start;
            firstError = error[0];
        }

        long[] sorted = Arrays.copyOf(latency, count);
        Arrays.sort(sorted);
        StringBuilder out = new StringBuilder("{");
        out.append("\"records\": ").append(acked.get());
        out.append(", \"failed\": ").append(failed.get());
        out.append(", \"seconds\": ").append(elapsed / 1e9);
        out.append(", \"p50_ms\": ").append(percentile(sorted, 50) / 1e6);
        out.append(", \"p99_ms\": ").append(percentile(sorted, 99) / 1e6);
        if (firstError != null) {
            out.append(", \"error\": \"").append(firstError.replace("\\", "\\\\").replace("\"", "'"))
                    .append('"');
        }
        out.append('}');
        System.out.println(out);
        System.out.flush();
        System.exit(failed.get() == 0 && acked.get() == count ? 0 : 1);
    }

    /** The nearest-rank percentile of sorted values. */
    private static long percentile(long[] sorted, int pct) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(pct / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }
}
