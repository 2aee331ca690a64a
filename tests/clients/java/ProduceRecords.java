import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * Produces records 0..count-1 ({@link Records#key}, {@link Records#value}, header "i") to a topic.
 *
 * <p>Usage: {@code ProduceRecords BOOTSTRAP TOPIC COUNT [name=value ...]}. The options
 * {@code partition=N} and {@code timestamp.base=MS} (record i gets MS + 1000 * i) are used here;
 * every other option is a producer setting (compression.type, acks, enable.idempotence, ...).
 * Prints one line per acknowledged record, then {"done": true, ...}; exits 1 if any send failed.
 */
public final class ProduceRecords {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        long count = Long.parseLong(args[2]);
        Map<String, String> opts = Records.options(args, 3);
        String partitionOpt = opts.remove("partition");
        Integer partition = partitionOpt == null ? null : Integer.valueOf(partitionOpt);
        String tsOpt = opts.remove("timestamp.base");
        Long tsBase = tsOpt == null ? null : Long.valueOf(tsOpt);

        Properties props = Records.baseConfig(bootstrap);
        props.remove("default.api.timeout.ms");
        props.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        props.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        props.put("acks", "all");
        props.put("enable.idempotence", "true");
        props.put("linger.ms", "5");
        props.put("delivery.timeout.ms", "60000");
        props.put("max.block.ms", "30000");
        props.putAll(opts);

        AtomicLong acked = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (long i = 0; i < count; i++) {
                final long n = i;
                Long ts = tsBase == null ? null : tsBase + 1000 * i;
                ProducerRecord<String, String> rec =
                        new ProducerRecord<>(topic, partition, ts, Records.key(i), Records.value(i));
                rec.headers().add("i", Long.toString(i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
                producer.send(rec, (md, err) -> {
                    if (err != null) {
                        failed.incrementAndGet();
                        Map<String, Object> line = Json.error(err);
                        line.put("i", n);
                        Json.line(line);
                    } else {
                        acked.incrementAndGet();
                        Json.line(Json.obj("i", n, "partition", md.partition(), "offset", md.offset(),
                                "timestamp", md.timestamp()));
                    }
                });
            }
            producer.flush();
        }
        Json.line(Json.obj("done", true, "sent", count, "acked", acked.get(), "failed", failed.get()));
        System.exit(failed.get() == 0 && acked.get() == count ? 0 : 1);
    }
}
