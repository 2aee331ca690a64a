import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;

/**
 * Transactional producers, read_committed / read_uncommitted consumers and the transaction Admin APIs,
 * driven by `;`-separated commands; prints one JSON line per command: {"cmd", "ok", ...}, and on failure
 * {"error": simple class name of the most specific exception, "message", "causes": [class names, outermost
 * first]}. A failure does not stop the commands after it.
 *
 * <p>Usage: {@code TxnScenario BOOTSTRAP COMMAND ARG... [; COMMAND ARG...]...}. The commands are
 * <pre>
 *   create TOPIC PARTITIONS
 *   producer NAME TRANSACTIONAL_ID [name=value...]   a KafkaProducer (not yet initialised); extra producer settings
 *   init NAME | begin NAME | commit NAME | abort NAME | close NAME
 *   send NAME TOPIC FROM COUNT PARTITIONS           records FROM..FROM+COUNT-1 (record i to partition
 *                                                    i % PARTITIONS, header i), then flush and wait for every ack
 *   sleep MS
 *   consume TOPIC PARTITIONS ISOLATION               assign every partition, read from the beginning up to the
 *                                                    end offsets of that isolation level: {"i": [...], "src": [...],
 *                                                    "end": {...}} (headers i and src of the records read)
 *   list-txns [STATE...]                             {"transactions": {id: {"state", "producer_id"}}}
 *   describe-txn TRANSACTIONAL_ID                    {"state", "producer_id", "epoch", "timeout_ms", "partitions"}
 *   group-offsets GROUP                              {"offsets": {"topic:partition": offset}} (Admin)
 *   send-offsets NAME GROUP TOPIC PARTITION OFFSET   sendOffsetsToTransaction with ConsumerGroupMetadata(GROUP)
 *   committed GROUP TOPIC PARTITIONS ISOLATION MS    KafkaConsumer.committed() of a consumer in GROUP at that
 *                                                    isolation level (read_committed asks for stable offsets),
 *                                                    waiting at most MS: {"offsets": {partition: offset or null}}
 * </pre>
 */
public final class TxnScenario {
    private final String bootstrap;
    private final Admin admin;
    private final Map<String, KafkaProducer<String, String>> producers = new HashMap<>();

    private TxnScenario(String bootstrap, Admin admin) {
        this.bootstrap = bootstrap;
        this.admin = admin;
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        try (Admin admin = Admin.create(Records.baseConfig(bootstrap))) {
            TxnScenario scenario = new TxnScenario(bootstrap, admin);
            try {
                for (List<String> words : split(args, 1)) {
                    Map<String, Object> out = Json.obj("cmd", String.join(" ", words));
                    try {
                        out.putAll(scenario.run(words.toArray(new String[0])));
                        out.put("ok", true);
                    } catch (Exception e) {
                        out.put("ok", false);
                        out.putAll(describe(e));
                    }
                    Json.line(out);
                }
            } finally {
                for (KafkaProducer<String, String> p : scenario.producers.values()) {
                    p.close(Duration.ofSeconds(5));
                }
            }
        }
    }

    private static List<List<String>> split(String[] args, int from) {
        List<List<String>> commands = new ArrayList<>();
        commands.add(new ArrayList<>());
        for (int i = from; i < args.length; i++) {
            if (args[i].equals(";")) {
                commands.add(new ArrayList<>());
            } else {
                commands.get(commands.size() - 1).add(args[i]);
            }
        }
        commands.removeIf(List::isEmpty);
        return commands;
    }

    /** The most specific exception of a failure (past ExecutionException and plain KafkaException wrappers). */
    static Map<String, Object> describe(Throwable t) {
        List<String> causes = new ArrayList<>();
        Throwable specific = null;
        for (Throwable c = t; c != null && causes.size() < 10; c = c.getCause()) {
            causes.add(c.getClass().getSimpleName());
            boolean wrapper = c instanceof java.util.concurrent.ExecutionException
                    || c.getClass() == org.apache.kafka.common.KafkaException.class;
            if (specific == null && (!wrapper || c.getCause() == null)) {
                specific = c;
            }
        }
        if (specific == null) {
            specific = t;
        }
        return Json.obj("error", specific.getClass().getSimpleName(), "message", String.valueOf(specific.getMessage()),
                "causes", causes, "top_message", String.valueOf(t.getMessage()));
    }

    private KafkaProducer<String, String> producer(String name) {
        KafkaProducer<String, String> p = producers.get(name);
        if (p == null) {
            throw new IllegalArgumentException("no producer " + name);
        }
        return p;
    }

    private Map<String, Object> run(String[] c) throws Exception {
        switch (c[0]) {
            case "create":
                admin.createTopics(List.of(new NewTopic(c[1], Integer.parseInt(c[2]), (short) 1))).all().get();
                return Json.obj();
            case "producer": {
                Properties p = Records.baseConfig(bootstrap);
                p.put("key.serializer", "org.apache.kafka.common.serialization.StringSerializer");
                p.put("value.serializer", "org.apache.kafka.common.serialization.StringSerializer");
                p.put("transactional.id", c[2]);
                p.put("max.block.ms", "30000");
                p.put("linger.ms", "5");
                p.putAll(Records.options(c, 3));
                producers.put(c[1], new KafkaProducer<>(p));
                return Json.obj();
            }
            case "init":
                producer(c[1]).initTransactions();
                return Json.obj();
            case "begin":
                producer(c[1]).beginTransaction();
                return Json.obj();
            case "commit":
                producer(c[1]).commitTransaction();
                return Json.obj();
            case "abort":
                producer(c[1]).abortTransaction();
                return Json.obj();
            case "close":
                producers.remove(c[1]).close(Duration.ofSeconds(5));
                return Json.obj();
            case "send":
                return send(producer(c[1]), c[2], Long.parseLong(c[3]), Long.parseLong(c[4]), Integer.parseInt(c[5]));
            case "sleep":
                Thread.sleep(Long.parseLong(c[1]));
                return Json.obj();
            case "consume":
                return consume(c[1], Integer.parseInt(c[2]), c[3]);
            case "list-txns":
                return listTransactions(java.util.Arrays.copyOfRange(c, 1, c.length));
            case "describe-txn":
                return describeTransaction(c[1]);
            case "group-offsets":
                return groupOffsets(c[1]);
            case "send-offsets":
                producer(c[1]).sendOffsetsToTransaction(
                        Map.of(new TopicPartition(c[3], Integer.parseInt(c[4])),
                                new OffsetAndMetadata(Long.parseLong(c[5]))),
                        new ConsumerGroupMetadata(c[2]));
                return Json.obj();
            case "committed":
                return committed(c[1], c[2], Integer.parseInt(c[3]), c[4], Long.parseLong(c[5]));
            default:
                throw new IllegalArgumentException("unknown command " + c[0]);
        }
    }

    private Map<String, Object> send(KafkaProducer<String, String> producer, String topic, long from, long count,
                                     int partitions) throws Exception {
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        for (long i = from; i < from + count; i++) {
            ProducerRecord<String, String> rec = new ProducerRecord<>(topic, (int) (i % partitions),
                    Records.key(i), Records.value(i));
            rec.headers().add("i", Long.toString(i).getBytes(StandardCharsets.UTF_8));
            futures.add(producer.send(rec));
        }
        producer.flush();
        List<Object> offsets = new ArrayList<>();
        for (Future<RecordMetadata> f : futures) {
            RecordMetadata m = f.get(30, TimeUnit.SECONDS);
            offsets.add(m.partition() + ":" + m.offset());
        }
        return Json.obj("sent", count, "offsets", offsets);
    }

    private Map<String, Object> consume(String topic, int partitions, String isolation) {
        Properties p = Records.baseConfig(bootstrap);
        p.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        p.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        p.put("isolation.level", isolation);
        p.put("enable.auto.commit", "false");
        List<TopicPartition> tps = new ArrayList<>();
        for (int i = 0; i < partitions; i++) {
            tps.add(new TopicPartition(topic, i));
        }
        List<Object> got = new ArrayList<>();
        List<Object> sources = new ArrayList<>();
        Map<String, Object> ends = new TreeMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps);
            long deadline = System.currentTimeMillis() + 30000;
            while (true) {
                boolean done = true;
                for (TopicPartition tp : tps) {
                    if (consumer.position(tp) < end.get(tp)) {
                        done = false;
                    }
                }
                if (done) {
                    break;
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("did not reach the end offsets " + end + " within 30 s");
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    Header h = r.headers().lastHeader("i");
                    got.add(h == null ? null : Long.parseLong(new String(h.value(), StandardCharsets.UTF_8)));
                    Header src = r.headers().lastHeader("src");
                    if (src != null) {
                        sources.add(new String(src.value(), StandardCharsets.UTF_8));
                    }
                }
            }
            for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
                ends.put(Integer.toString(e.getKey().partition()), e.getValue());
            }
        }
        return Json.obj("i", got, "src", sources, "end", ends);
    }

    private Map<String, Object> listTransactions(String[] states) throws Exception {
        ListTransactionsOptions options = new ListTransactionsOptions();
        if (states.length > 0) {
            List<TransactionState> filter = new ArrayList<>();
            for (String s : states) {
                filter.add(TransactionState.parse(s));
            }
            options.filterStates(filter);
        }
        Map<String, Object> out = new TreeMap<>();
        for (TransactionListing l : admin.listTransactions(options).all().get()) {
            out.put(l.transactionalId(), Json.obj("state", l.state().toString(), "producer_id", l.producerId()));
        }
        return Json.obj("transactions", out);
    }

    private Map<String, Object> describeTransaction(String id) throws Exception {
        TransactionDescription d = admin.describeTransactions(List.of(id)).all().get().get(id);
        List<String> parts = new ArrayList<>();
        for (TopicPartition tp : d.topicPartitions()) {
            parts.add(tp.topic() + ":" + tp.partition());
        }
        parts.sort(null);
        return Json.obj("state", d.state().toString(), "producer_id", d.producerId(), "epoch", (int) d.producerEpoch(),
                "timeout_ms", d.transactionTimeoutMs(), "coordinator", d.coordinatorId(),
                "start_ms", d.transactionStartTimeMs().isPresent() ? d.transactionStartTimeMs().getAsLong() : null,
                "partitions", parts);
    }

    private Map<String, Object> committed(String group, String topic, int partitions, String isolation, long ms) {
        Properties p = Records.baseConfig(bootstrap);
        p.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        p.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        p.put("isolation.level", isolation);
        p.put("enable.auto.commit", "false");
        p.put("group.id", group);
        java.util.Set<TopicPartition> tps = new java.util.HashSet<>();
        for (int i = 0; i < partitions; i++) {
            tps.add(new TopicPartition(topic, i));
        }
        Map<String, Object> out = new TreeMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            for (Map.Entry<TopicPartition, OffsetAndMetadata> e
                    : consumer.committed(tps, Duration.ofMillis(ms)).entrySet()) {
                out.put(Integer.toString(e.getKey().partition()), e.getValue() == null ? null : e.getValue().offset());
            }
        }
        return Json.obj("offsets", out);
    }

    private Map<String, Object> groupOffsets(String group) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> offsets =
                admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        Map<String, Object> out = new TreeMap<>();
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
            out.put(e.getKey().topic() + ":" + e.getKey().partition(),
                    e.getValue() == null ? null : e.getValue().offset());
        }
        return Json.obj("offsets", out);
    }
}
