import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Three KafkaShareConsumers of one share group on one partition, in explicit acknowledgement mode (KIP-932).
 *
 * Args: bootstrap topic group count [mode]. Creates the topic, sets the group's share.auto.offset.reset to earliest,
 * produces `count` records v0..v{count-1}, and consumes them with three consumers. Mode `explicit` (the default):
 * v5 is RELEASEd at its first delivery (and accepted when it comes back), v7 is REJECTed, every other record
 * ACCEPTed. Mode `implicit`: share.acknowledgement.mode=implicit, every record accepted by the next poll. Mode
 * `crash`: consumer-0 starts alone, takes its first records and then stops polling without acknowledging them (as
 * a consumer that hangs), the other two start then and accept everything, so the held records come back to them
 * once their acquisition lock runs out. Prints one JSON line: how often each value was delivered, at which delivery
 * counts, what consumer-0 held, how many consumers got records, and max.poll.records.
 *
 * In mode `crash`, consumer-0's client may hold more than its one poll returned, whatever the broker: a poll that
 * finds its buffer empty queues a ShareFetch, and the client's network thread may send it only after the answer
 * carrying the held records arrived, so one more ShareFetch (at most max.poll.records records, one record per
 * batch) acquires records no poll returns. Those come back after the lock too, seen only at delivery count 2.
 */
public class ShareConsume {
    static final int MAX_POLL_RECORDS = 4;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0], topic = args[1], group = args[2];
        int count = Integer.parseInt(args[3]);
        String mode = args.length > 4 ? args[4] : "explicit";
        boolean explicit = !mode.equals("implicit");
        boolean crash = mode.equals("crash");
        List<String> held = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.concurrent.CountDownLatch holding = new java.util.concurrent.CountDownLatch(1);
        Properties common = new Properties();
        common.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(common)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all().get();
        }
        Properties producerProps = new Properties();
        producerProps.putAll(common);
        producerProps.put("key.serializer", StringSerializer.class.getName());
        producerProps.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
            for (int i = 0; i < count; i++) {
                // one batch per record: Kafka acquires whole batches, so one batch of all would go to one consumer
                producer.send(new ProducerRecord<>(topic, 0, null, "v" + i)).get();
            }
            producer.flush();
        }
        Map<String, List<Integer>> deliveries = new ConcurrentHashMap<>();  // value -> delivery counts seen
        Map<String, String> acceptedBy = new ConcurrentHashMap<>();
        Map<String, Integer> perConsumer = new ConcurrentHashMap<>();
        List<String> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean stop = new AtomicBoolean(false);
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < 3; c++) {
            String name = "consumer-" + c;
            Thread thread = new Thread(() -> {
                Properties props = new Properties();
                props.putAll(common);
                props.put("group.id", group);
                props.put("client.id", name);
                props.put("share.acknowledgement.mode", explicit ? "explicit" : "implicit");
                props.put("max.poll.records", String.valueOf(MAX_POLL_RECORDS));
                try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(
                        props, new StringDeserializer(), new StringDeserializer())) {
                    consumer.subscribe(List.of(topic));
                    while (!stop.get()) {
                        ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                        if (crash && name.equals("consumer-0") && !records.isEmpty()) {
                            for (ConsumerRecord<String, String> record : records) {
                                held.add(record.value());
                                deliveries.computeIfAbsent(record.value(), k -> java.util.Collections
                                    .synchronizedList(new ArrayList<>())).add(record.deliveryCount().get().intValue());
                            }
                            perConsumer.merge(name, records.count(), Integer::sum);
                            holding.countDown();
                            while (!stop.get()) {
                                Thread.sleep(50);  // hangs: neither polls nor acknowledges again
                            }
                            break;
                        }
                        for (ConsumerRecord<String, String> record : records) {
                            String value = record.value();
                            int delivery = record.deliveryCount().map(Short::intValue).orElse(-1);
                            deliveries.computeIfAbsent(value, k -> java.util.Collections.synchronizedList(
                                new ArrayList<>())).add(delivery);
                            perConsumer.merge(name, 1, Integer::sum);
                            if (!explicit) {
                                if (acceptedBy.putIfAbsent(value, name) != null) {
                                    errors.add("delivered twice: " + value);
                                }
                            } else if (!crash && value.equals("v5") && delivery == 1) {
                                consumer.acknowledge(record, AcknowledgeType.RELEASE);
                            } else if (!crash && value.equals("v7")) {
                                consumer.acknowledge(record, AcknowledgeType.REJECT);
                            } else {
                                consumer.acknowledge(record, AcknowledgeType.ACCEPT);
                                if (acceptedBy.putIfAbsent(value, name) != null) {
                                    errors.add("accepted twice: " + value);
                                }
                            }
                        }
                        if (explicit && !records.isEmpty()) {
                            consumer.commitSync();
                        }
                    }
                } catch (Exception e) {
                    errors.add(name + ": " + e);
                }
            });
            threads.add(thread);
            thread.start();
            if (crash && c == 0 && !holding.await(60, java.util.concurrent.TimeUnit.SECONDS)) {
                errors.add("consumer-0 got no records");
            }
        }
        int expected = mode.equals("explicit") ? count - 1 : count;  // explicit: all but the rejected one
        long deadline = System.currentTimeMillis() + 90_000;
        while (acceptedBy.size() < expected && System.currentTimeMillis() < deadline) {
            Thread.sleep(100);
        }
        Thread.sleep(2_000);  // anything delivered again (the rejected record) would show up now
        stop.set(true);
        for (Thread thread : threads) {
            thread.join(60_000);
        }
        Map<String, Object> out = new TreeMap<>();
        out.put("accepted", acceptedBy.size());
        Map<String, Object> seen = new TreeMap<>();
        deliveries.forEach((k, v) -> seen.put(k, new ArrayList<>(v)));
        out.put("deliveries", seen);
        out.put("consumers_with_records", perConsumer.size());
        out.put("held", new ArrayList<>(held));
        out.put("max_poll_records", MAX_POLL_RECORDS);
        out.put("errors", new ArrayList<>(errors));
        Json.line(out);
    }
}
