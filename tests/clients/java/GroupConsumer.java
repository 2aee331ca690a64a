import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;

/**
 * A KafkaConsumer in a consumer group: subscribe() to one topic and poll, printing one JSON line
 * per event on stdout.
 *
 * <p>Usage: {@code GroupConsumer BOOTSTRAP TOPIC GROUP [expect=N] [linger.ms=MS] [commit=true]
 * [interactive=true] [timeout.ms=MS] [name=value ...]}; other options are consumer settings
 * (auto.offset.reset defaults to earliest, enable.auto.commit to false).
 *
 * <p>One-shot mode (the default): poll until {@code expect} records arrived, keep polling for
 * {@code linger.ms} more (to catch redeliveries), commitSync() when {@code commit=true}, close()
 * and print {"done": true, ...}; exits 2 on timeout.
 *
 * <p>Interactive mode ({@code interactive=true}): poll until told otherwise on stdin, one command
 * a line: {@code commit} (commitSync, prints a "committed" event), {@code close} (close() and
 * exit 0). End of input also closes.
 *
 * <p>Events: {"event": "subscribed"}, {"event": "assigned"|"revoked"|"lost", "partitions": [...],
 * "ms": ms since subscribe(), "generation": ..., "member_id": ...}, {"event": "record", "partition",
 * "offset", "i"} (i is the record's header i, or null), {"event": "committed", "offsets":
 * {partition: offset}}, {"event": "closed"}; a failure prints {"event": "error", "error": ...}
 * and exits 1.
 */
public final class GroupConsumer {
    private static long subscribedAt;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        String group = args[2];
        Map<String, String> opts = Records.options(args, 3);
        long expect = Long.parseLong(take(opts, "expect", "-1"));
        long linger = Long.parseLong(take(opts, "linger.ms", "0"));
        boolean commit = Boolean.parseBoolean(take(opts, "commit", "false"));
        boolean interactive = Boolean.parseBoolean(take(opts, "interactive", "false"));
        long timeout = Long.parseLong(take(opts, "timeout.ms", "60000"));

        Properties props = Records.baseConfig(bootstrap);
        props.put("group.id", group);
        props.put("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        props.put("value.deserializer", "org.apache.kafka.common.serialization.StringDeserializer");
        props.put("enable.auto.commit", "false");
        props.put("auto.offset.reset", "earliest");
        props.putAll(opts);

        ConcurrentLinkedQueue<String> commands = new ConcurrentLinkedQueue<>();
        if (interactive) {
            Thread reader = new Thread(() -> {
                try (java.io.BufferedReader in = new java.io.BufferedReader(
                        new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = in.readLine()) != null) {
                        commands.add(line.trim());
                    }
                } catch (java.io.IOException e) {
                    // treated as end of input
                }
                commands.add("close");
            }, "stdin");
            reader.setDaemon(true);
            reader.start();
        }

        long count = 0;
        boolean timedOut = false;
        long deadline = System.currentTimeMillis() + timeout;
        Map<Integer, Long> positions = new TreeMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    event(consumer, "revoked", partitions);
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    event(consumer, "assigned", partitions);
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    event(consumer, "lost", partitions);
                }
            };
            subscribedAt = System.nanoTime();
            consumer.subscribe(List.of(topic), listener);
            Json.line(Json.obj("event", "subscribed"));
            long lingerUntil = -1;
            while (true) {
                if (interactive) {
                    String cmd = commands.poll();
                    if ("close".equals(cmd)) {
                        break;
                    } else if ("commit".equals(cmd)) {
                        commit(consumer);
                    } else if (cmd != null && !cmd.isEmpty()) {
                        Json.line(Json.obj("event", "error", "error", "unknown command " + cmd));
                    }
                } else {
                    if (count >= expect && lingerUntil < 0) {
                        lingerUntil = System.currentTimeMillis() + linger;
                    }
                    if (lingerUntil >= 0 && System.currentTimeMillis() >= lingerUntil) {
                        break;
                    }
                    if (System.currentTimeMillis() > deadline) {
                        timedOut = true;
                        break;
                    }
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                    count++;
                    Header h = r.headers().lastHeader("i");
                    String i = h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
                    Json.line(Json.obj("event", "record", "partition", r.partition(), "offset", r.offset(),
                            "i", i == null ? null : Long.parseLong(i)));
                    positions.put(r.partition(), r.offset() + 1);
                }
            }
            if (commit && !timedOut) {
                commit(consumer);
            }
        } catch (Exception e) {
            Map<String, Object> out = Json.obj("event", "error");
            out.putAll(Json.error(e));
            Json.line(out);
            System.exit(1);
        }
        Json.line(Json.obj("event", "closed"));
        if (!interactive) {
            Map<String, Object> pos = new LinkedHashMap<>();
            positions.forEach((p, o) -> pos.put(Integer.toString(p), o));
            Json.line(Json.obj("done", true, "count", count, "positions", pos, "timed_out", timedOut));
        }
        System.exit(timedOut ? 2 : 0);
    }

    private static String take(Map<String, String> opts, String name, String dflt) {
        String v = opts.remove(name);
        return v == null ? dflt : v;
    }

    private static void commit(KafkaConsumer<String, String> consumer) {
        consumer.commitSync();
        Map<String, Object> offsets = new TreeMap<>();
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(consumer.assignment());
        committed.forEach((tp, om) -> offsets.put(Integer.toString(tp.partition()), om == null ? null : om.offset()));
        Json.line(Json.obj("event", "committed", "offsets", offsets));
    }

    private static void event(KafkaConsumer<String, String> consumer, String kind,
                              Collection<TopicPartition> partitions) {
        List<Integer> parts = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            parts.add(tp.partition());
        }
        parts.sort(null);
        ConsumerGroupMetadata meta = consumer.groupMetadata();
        Json.line(Json.obj("event", kind, "partitions", parts,
                "ms", (System.nanoTime() - subscribedAt) / 1_000_000.0,
                "generation", meta.generationId(), "member_id", meta.memberId()));
    }
}
