import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.TreeSet;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.CloseOptions;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * A Kafka Streams word count: lines in, (word, count) updates out, through a repartition (groupBy word) and a
 * state store "counts" (with its changelog topic), exactly_once_v2, the classic rebalance protocol unless a sixth
 * argument names another ({@code streams}: KIP-1071, the broker assigns the tasks).
 *
 * <p>Usage: {@code WordCountStreams BOOTSTRAP APPLICATION_ID INPUT OUTPUT STATE_DIR [PROTOCOL]}. It prints one JSON line
 * per state change, {"state": ..., "active": [task ids]} (the active tasks once RUNNING), and runs until its
 * standard input closes or it gets SIGTERM; then it closes, leaving the group so its tasks move at once.
 */
public final class WordCountStreams {
    private WordCountStreams() {}

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String input = args[2];
        String output = args[3];
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        String protocol = args.length > 5 ? args[5] : "classic";
        props.put("group.protocol", protocol);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        // small figures keep the test short: frequent commits (so purges) and no record cache delaying output
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        props.put(StreamsConfig.REPARTITION_PURGE_INTERVAL_MS_CONFIG, 200);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        if (protocol.equals("classic")) {
            // a streams group's session and heartbeat are the broker's group configs, not the client's
            props.put(StreamsConfig.consumerPrefix("session.timeout.ms"), 10000);
            props.put(StreamsConfig.consumerPrefix("heartbeat.interval.ms"), 1000);
        }

        StreamsBuilder builder = new StreamsBuilder();
        KStream<String, String> lines = builder.stream(input);
        lines.flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
                .filter((key, word) -> !word.isEmpty())
                .groupBy((key, word) -> word, Grouped.as("words"))
                .count(Materialized.as("counts"))
                .toStream()
                .to(output, Produced.with(Serdes.String(), Serdes.Long()));

        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        streams.setStateListener((now, before) -> Json.line(Json.obj("state", now.name(),
                "active", now == KafkaStreams.State.RUNNING ? activeTasks(streams) : List.of())));
        streams.setUncaughtExceptionHandler(e -> {
            Json.line(Json.error(e));
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse
                    .SHUTDOWN_CLIENT;
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> close(streams)));
        streams.start();
        // stdin closed (the test's way to stop it besides SIGTERM)
        while (System.in.read() != -1) {
            // nothing to read: the test never writes
        }
        close(streams);
        Json.line(Json.obj("closed", true));
        System.exit(0);
    }

    private static synchronized void close(KafkaStreams streams) {
        // leave the group on close (Streams stays in by default), so the other instance takes the tasks at once
        streams.close(CloseOptions.groupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP)
                .withTimeout(Duration.ofSeconds(30)));
    }

    private static List<String> activeTasks(KafkaStreams streams) {
        TreeSet<String> tasks = new TreeSet<>();
        for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
            for (TaskMetadata task : thread.activeTasks()) {
                tasks.add(task.taskId().toString());
            }
        }
        return new ArrayList<>(tasks);
    }
}
