import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsResult;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.DescribeProducersResult.PartitionProducerState;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;

/**
 * KIP-1269 scenarios ({@code producer.state.batches.to.retain}) with the Java Admin, producer and
 * consumer. Runs commands in order with one Admin client and prints one JSON line per command:
 * {"cmd": ..., "ok": true, ...results} or {"cmd": ..., "ok": false, "error": ExceptionClass, "message": ...}.
 * A failing command does not stop the following ones.
 *
 * <p>Usage: {@code Kip1269Scenario BOOTSTRAP COMMAND ARG... [; COMMAND ARG...]...}. KIND is
 * {@code topic} or {@code broker}; a broker NAME of {@code -} means the cluster default resource "".
 * <pre>
 *   create TOPIC PARTITIONS [config=value ...]
 *   validate-create TOPIC PARTITIONS [config=value ...]   (createTopics with validateOnly)
 *   exists TOPIC
 *   config KIND NAME CONFIG          (describeConfigs with synonyms: value, source, synonyms, ...)
 *   set KIND NAME CONFIG VALUE       (incrementalAlterConfigs SET)
 *   delete KIND NAME CONFIG          (incrementalAlterConfigs DELETE)
 *   legacy KIND NAME [config=value ...]   (the deprecated alterConfigs: replaces the resource's configs)
 *   produce TOPIC COUNT [producer-setting=value ...]
 *   consume TOPIC PARTITIONS EXPECT
 *   producers TOPIC PARTITIONS       (describeProducers)
 * </pre>
 *
 * <p>produce sends record i to partition {@link #partitionOf}(i) with the value "P:S:i", S being the
 * record's sequence number within partition P (0, 1, 2, ...), from one idempotent producer
 * (acks=all, max.in.flight.requests.per.connection=5 unless overridden). consume reads every
 * partition from the beginning without a group and checks that partition P holds exactly the
 * values with S = 0, 1, 2, ... at offsets 0, 1, 2, ...
 */
public final class Kip1269Scenario {
    /** Record i goes to partition PATTERN[i % 10]: 40%, 30%, 20% and 10% of the records. */
    private static final int[] PATTERN = {0, 0, 0, 0, 1, 1, 1, 2, 2, 3};

    /** The producer metrics produce reports. */
    private static final java.util.Set<String> METRICS = java.util.Set.of(
            "record-send-total", "record-retry-total", "record-error-total", "records-per-request-avg");

    /** At most this many problems are listed by produce and consume. */
    private static final int MAX_PROBLEMS = 10;

    private final String bootstrap;
    private final Admin admin;

    private Kip1269Scenario(String bootstrap, Admin admin) {
        this.bootstrap = bootstrap;
        this.admin = admin;
    }

    static int partitionOf(long i) {
        return PATTERN[(int) (i % PATTERN.length)];
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        try (Admin admin = Admin.create(Records.baseConfig(bootstrap))) {
            Kip1269Scenario scenario = new Kip1269Scenario(bootstrap, admin);
            Records.runCommands(args, 1, scenario::run);
        }
    }

    private Map<String, Object> run(String[] c) throws Exception {
        switch (c[0]) {
            case "create": return create(c[1], Integer.parseInt(c[2]), Records.options(c, 3), false);
            case "validate-create": return create(c[1], Integer.parseInt(c[2]), Records.options(c, 3), true);
            case "exists": return Json.obj("exists", admin.listTopics().names().get().contains(c[1]));
            case "config": return config(resource(c[1], c[2]), c[3]);
            case "set": return alter(resource(c[1], c[2]), new ConfigEntry(c[3], c[4]), AlterConfigOp.OpType.SET);
            case "delete": return alter(resource(c[1], c[2]), new ConfigEntry(c[3], ""), AlterConfigOp.OpType.DELETE);
            case "legacy": return legacy(resource(c[1], c[2]), Records.options(c, 3));
            case "produce": return produce(c[1], Long.parseLong(c[2]), Records.options(c, 3));
            case "consume": return consume(c[1], Integer.parseInt(c[2]), Long.parseLong(c[3]));
            case "producers": return producers(c[1], Integer.parseInt(c[2]));
            default: throw new IllegalArgumentException("unknown command " + c[0]);
        }
    }

    private static ConfigResource resource(String kind, String name) {
        switch (kind) {
            case "topic": return new ConfigResource(ConfigResource.Type.TOPIC, name);
            case "broker": return new ConfigResource(ConfigResource.Type.BROKER, name.equals("-") ? "" : name);
            default: throw new IllegalArgumentException("unknown resource kind " + kind);
        }
    }

    private Map<String, Object> create(String topic, int partitions, Map<String, String> configs, boolean validateOnly)
            throws Exception {
        NewTopic nt = new NewTopic(topic, partitions, (short) 1).configs(configs);
        var result = admin.createTopics(List.of(nt), new CreateTopicsOptions().validateOnly(validateOnly));
        result.all().get();
        return Json.obj("partitions", result.numPartitions(topic).get());
    }

    private Map<String, Object> config(ConfigResource resource, String name) throws Exception {
        Config config = admin.describeConfigs(List.of(resource), new DescribeConfigsOptions().includeSynonyms(true))
                .all().get().get(resource);
        ConfigEntry e = config.get(name);
        if (e == null) {
            return Json.obj("present", false);
        }
        List<Object> synonyms = new ArrayList<>();
        for (ConfigEntry.ConfigSynonym s : e.synonyms()) {
            synonyms.add(Json.obj("name", s.name(), "value", s.value(), "source", s.source().name()));
        }
        return Json.obj("present", true, "value", e.value(), "source", e.source().name(), "default", e.isDefault(),
                "read_only", e.isReadOnly(), "sensitive", e.isSensitive(), "type", e.type().name(),
                "synonyms", synonyms);
    }

    private Map<String, Object> alter(ConfigResource resource, ConfigEntry entry, AlterConfigOp.OpType op)
            throws Exception {
        Map<ConfigResource, Collection<AlterConfigOp>> ops = Map.of(resource, List.of(new AlterConfigOp(entry, op)));
        admin.incrementalAlterConfigs(ops).all().get();
        return Json.obj();
    }

    private Map<String, Object> legacy(ConfigResource resource, Map<String, String> configs) throws Exception {
        List<ConfigEntry> entries = new ArrayList<>();
        configs.forEach((k, v) -> entries.add(new ConfigEntry(k, v)));
        // Admin.alterConfigs (the legacy AlterConfigs request) is gone from kafka-clients 4.x: called by
        // reflection so this program compiles against both client sets; a 4.x client fails this command.
        Method alterConfigs;
        try {
            alterConfigs = Admin.class.getMethod("alterConfigs", Map.class);
        } catch (NoSuchMethodException e) {
            throw new UnsupportedOperationException("Admin.alterConfigs is not in this kafka-clients release");
        }
        Object result;
        try {
            result = alterConfigs.invoke(admin, Map.of(resource, new Config(entries)));
        } catch (InvocationTargetException e) {
            throw (Exception) e.getCause();
        }
        ((AlterConfigsResult) result).all().get();
        return Json.obj();
    }

    private Map<String, Object> produce(String topic, long count, Map<String, String> opts) throws Exception {
        Properties props = Records.baseConfig(bootstrap);
        props.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        props.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
        props.put("enable.idempotence", "true");
        props.put("acks", "all");
        props.put("max.in.flight.requests.per.connection", "5");
        props.put("delivery.timeout.ms", "60000");
        props.putAll(opts);

        Map<Integer, Long> sent = new LinkedHashMap<>();
        AtomicLong acked = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        AtomicLong offsetMismatches = new AtomicLong();
        List<Object> problems = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicReference<Object> producerId = new AtomicReference<>();
        AtomicReference<Object> producerEpoch = new AtomicReference<>();
        Map<String, Object> metrics = new java.util.TreeMap<>();
        long started = System.nanoTime();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (long i = 0; i < count; i++) {
                int partition = partitionOf(i);
                long seq = sent.merge(partition, 1L, Long::sum) - 1;
                String value = partition + ":" + seq + ":" + i;
                producer.send(new ProducerRecord<>(topic, partition, null, value), (md, err) -> {
                    if (err != null) {
                        failed.incrementAndGet();
                        if (problems.size() < MAX_PROBLEMS) {
                            problems.add(value + ": " + err);
                        }
                    } else {
                        acked.incrementAndGet();
                        if (md.offset() != seq || md.partition() != partition) {
                            offsetMismatches.incrementAndGet();
                            if (problems.size() < MAX_PROBLEMS) {
                                problems.add(value + " acknowledged at " + md.partition() + "/" + md.offset());
                            }
                        }
                    }
                });
            }
            producer.flush();
            for (var e : producer.metrics().entrySet()) {
                if (e.getKey().group().equals("producer-metrics") && METRICS.contains(e.getKey().name())) {
                    metrics.put(e.getKey().name(), e.getValue().metricValue());
                }
            }
            try {
                Object pidAndEpoch = producerIdAndEpoch(producer);
                producerId.set(pidAndEpoch.getClass().getField("producerId").get(pidAndEpoch));
                producerEpoch.set(pidAndEpoch.getClass().getField("epoch").get(pidAndEpoch));
            } catch (ReflectiveOperationException | RuntimeException e) {
                problems.add("cannot read the producer id: " + e);
            }
        }
        Map<String, Object> perPartition = new LinkedHashMap<>();
        sent.entrySet().stream().sorted(Map.Entry.comparingByKey())
                .forEach(e -> perPartition.put(Integer.toString(e.getKey()), e.getValue()));
        return Json.obj("sent", count, "acked", acked.get(), "failed", failed.get(),
                "offset_mismatches", offsetMismatches.get(), "problems", new ArrayList<>(problems),
                "per_partition", perPartition, "producer_id", producerId.get(), "producer_epoch", producerEpoch.get(),
                "metrics", metrics, "seconds", (System.nanoTime() - started) / 1e9);
    }

    /** The producer's ProducerIdAndEpoch (there is no public accessor: read KafkaProducer.transactionManager). */
    private static Object producerIdAndEpoch(KafkaProducer<?, ?> producer) throws ReflectiveOperationException {
        Field field = KafkaProducer.class.getDeclaredField("transactionManager");
        field.setAccessible(true);
        Object transactionManager = field.get(producer);
        Method method = transactionManager.getClass().getDeclaredMethod("producerIdAndEpoch");
        method.setAccessible(true);
        return method.invoke(transactionManager);
    }

    private Map<String, Object> consume(String topic, int partitions, long expect) throws Exception {
        Properties props = Records.baseConfig(bootstrap);
        props.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        props.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        props.put("enable.auto.commit", "false");
        props.put("allow.auto.create.topics", "false");
        props.put("max.poll.records", "2000");

        List<TopicPartition> parts = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            parts.add(new TopicPartition(topic, p));
        }
        long[] next = new long[partitions];
        long total = 0;
        long bad = 0;
        List<Object> problems = new ArrayList<>();
        boolean timedOut = false;
        Map<String, Object> ends = new LinkedHashMap<>();
        long deadline = System.currentTimeMillis() + 40000;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            consumer.endOffsets(parts).forEach((tp, o) -> ends.put(Integer.toString(tp.partition()), o));
            long quietUntil = Long.MAX_VALUE;
            // Read until EXPECT records arrived, then keep polling briefly: a duplicate would show up.
            while (System.currentTimeMillis() < quietUntil) {
                if (System.currentTimeMillis() > deadline) {
                    timedOut = true;
                    break;
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    total++;
                    int p = r.partition();
                    String expected = p + ":" + next[p] + ":";
                    if (r.value() == null || !r.value().startsWith(expected) || r.offset() != next[p]) {
                        bad++;
                        if (problems.size() < MAX_PROBLEMS) {
                            problems.add("partition " + p + " offset " + r.offset() + ": got " + r.value()
                                    + ", expected " + expected + "* at offset " + next[p]);
                        }
                    }
                    next[p] = r.offset() + 1;
                }
                if (total >= expect && quietUntil == Long.MAX_VALUE) {
                    quietUntil = System.currentTimeMillis() + 500;
                }
            }
        }
        Map<String, Object> perPartition = new LinkedHashMap<>();
        for (int p = 0; p < partitions; p++) {
            perPartition.put(Integer.toString(p), next[p]);
        }
        return Json.obj("total", total, "bad", bad, "problems", problems, "next_offsets", perPartition,
                "end_offsets", ends, "timed_out", timedOut);
    }

    private Map<String, Object> producers(String topic, int partitions) throws Exception {
        List<TopicPartition> parts = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            parts.add(new TopicPartition(topic, p));
        }
        Map<TopicPartition, PartitionProducerState> states = admin.describeProducers(parts).all().get();
        Map<String, Object> out = new LinkedHashMap<>();
        for (TopicPartition tp : parts) {
            List<Object> active = new ArrayList<>();
            for (ProducerState s : states.get(tp).activeProducers()) {
                active.add(Json.obj("producer_id", s.producerId(), "producer_epoch", s.producerEpoch(),
                        "last_sequence", s.lastSequence(), "last_timestamp", s.lastTimestamp(),
                        "coordinator_epoch", s.coordinatorEpoch().isPresent() ? s.coordinatorEpoch().getAsInt() : null,
                        "txn_start_offset", s.currentTransactionStartOffset().isPresent()
                                ? s.currentTransactionStartOffset().getAsLong() : null));
            }
            out.put(Integer.toString(tp.partition()), active);
        }
        return Json.obj("partitions", out);
    }
}
