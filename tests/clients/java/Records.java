import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/** The record contents shared by the test programs and tests/integration/test_java_client.py. */
public final class Records {
    private Records() {}

    /** Key of record number {@code i}. */
    public static String key(long i) {
        return "key-" + i;
    }

    /** Value of record number {@code i}: compressible, so every codec has something to do. */
    public static String value(long i) {
        return "value-" + i + "-" + "payload".repeat(10);
    }

    /** Splits {@code name=value} arguments, starting at {@code from}. */
    public static Map<String, String> options(String[] args, int from) {
        Map<String, String> opts = new LinkedHashMap<>();
        for (int i = from; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("expected name=value, got " + args[i]);
            }
            opts.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        return opts;
    }

    /** Client settings common to every program: short, bounded timeouts. */
    public static Properties baseConfig(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("client.id", "minibroker-java-test");
        p.put("request.timeout.ms", "20000");
        p.put("default.api.timeout.ms", "30000");
        return p;
    }

    /** One scenario command: its words in, its JSON fields out. */
    public interface Command {
        Map<String, Object> run(String[] words) throws Exception;
    }

    /** Runs the `;`-separated commands in args[from..], printing one JSON line per command; a failure does not stop the rest. */
    public static void runCommands(String[] args, int from, Command command) {
        java.util.List<java.util.List<String>> commands = new java.util.ArrayList<>();
        commands.add(new java.util.ArrayList<>());
        for (int i = from; i < args.length; i++) {
            if (args[i].equals(";")) {
                commands.add(new java.util.ArrayList<>());
            } else {
                commands.get(commands.size() - 1).add(args[i]);
            }
        }
        for (java.util.List<String> words : commands) {
            if (words.isEmpty()) {
                continue;
            }
            Map<String, Object> out = Json.obj("cmd", String.join(" ", words));
            try {
                out.putAll(command.run(words.toArray(new String[0])));
                out.put("ok", true);
            } catch (Exception e) {
                out.put("ok", false);
                out.putAll(Json.error(e));
            }
            Json.line(out);
        }
    }
}
