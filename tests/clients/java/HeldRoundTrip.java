import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * Produces records 0..count-1 ({@link Records#key}, {@link Records#value}), reads them back without a
 * group, then keeps both clients connected until stdin closes, so a test can look at the broker's
 * side of the connections (the principal of a mutual-TLS client, say) while they are open.
 *
 * <p>Usage: {@code HeldRoundTrip BOOTSTRAP TOPIC COUNT [name=value ...]}; the options are settings of
 * both the producer and the consumer (security.protocol, ssl.keystore.*, ...). Prints
 * {"event": "acked", "i", "partition", "offset"} per record, {"event": "record", "partition", "offset",
 * "key", "value"} per record read, then {"holding": true}; once stdin is closed, {"done": true}.
 * A failure to send or read exits 1 (the read gives up after 30 s).
 */
public final class HeldRoundTrip {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        int count = Integer.parseInt(args[2]);
        Map<String, String> opts = Records.options(args, 3);

        Properties producerProps = Records.baseConfig(bootstrap);
        producerProps.remove("default.api.timeout.ms");
        producerProps.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        producerProps.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        producerProps.put("acks", "all");
        producerProps.put("delivery.timeout.ms", "30000");
        producerProps.put("max.block.ms", "20000");
        producerProps.putAll(opts);

        Properties consumerProps = Records.baseConfig(bootstrap);
        consumerProps.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        consumerProps.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        consumerProps.put("enable.auto.commit", "false");
        consumerProps.put("allow.auto.create.topics", "false");
        consumerProps.putAll(opts);

        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps);
             KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
            for (int i = 0; i < count; i++) {
                // one send at a time: the acknowledgements come out in record order
                RecordMetadata md = producer.send(new ProducerRecord<>(topic, Records.key(i), Records.value(i))).get();
                Json.line(Json.obj("event", "acked", "i", i, "partition", md.partition(), "offset", md.offset()));
            }

            List<TopicPartition> parts = new ArrayList<>();
            for (PartitionInfo pi : consumer.partitionsFor(topic)) {
                parts.add(new TopicPartition(topic, pi.partition()));
            }
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            long deadline = System.currentTimeMillis() + 30000;
            int read = 0;
            while (read < count) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("read " + read + " of " + count + " records in 30 s");
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    read++;
                    Json.line(Json.obj("event", "record", "partition", r.partition(), "offset", r.offset(),
                            "key", r.key(), "value", r.value()));
                }
            }

            Json.line(Json.obj("holding", true));
            while (System.in.read() != -1) {
                // the test closes stdin once it has looked at the connections
            }
        }
        Json.line(Json.obj("done", true));
        System.exit(0);
    }

    private HeldRoundTrip() {}
}
