import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Pattern;

import org.apache.kafka.common.utils.Exit;

/**
 * Runs several of Kafka's command-line tools one after the other in one JVM (a JVM start costs seconds on a
 * small machine): arguments are groups separated by ";", each a tool's main class followed by its arguments.
 * A group may start with "--stdin" and a file: that tool reads its standard input from the file (the console
 * producer), where the others read an empty one. A group may start with "--until" and a regular expression: that
 * tool runs again (up to UNTIL_RUNS times, half a second apart) while its standard output does not contain it, as
 * a tool that reads a change may run before Kafka's broker applied that change from its metadata log (CreateAcls
 * answers when the controller committed the ACL; the broker's authorizer sees it a moment later).
 * Prints one JSON line per tool: {"tool": index, "exit": code, "out": stdout, "err": stderr}.
 *
 * Each tool runs in a thread of its own; its Exit.exit ends that tool only (exit code -1: it threw, -2: it
 * did not finish in TOOL_TIMEOUT_S). Its standard output and error are
 * captured by swapping the target of the streams installed before anything else (Scala's Console keeps the
 * System.out it first saw, so the stream itself never changes). The shutdown hooks a tool adds (through
 * Exit.addShutdownHook or Runtime.addShutdownHook) run when it ends, as they would when its own JVM exits: the
 * verifiable producer closes its producer and prints its last events in one. Seeing Runtime's hooks takes
 * --add-opens=java.base/java.lang=ALL-UNNAMED; without it they do not run.
 */
public final class ToolRunner {

    /** A tool that neither returns nor exits within this is reported with exit code -2. */
    private static final long TOOL_TIMEOUT_S = 90;

    /** How often a tool marked "--until" runs at most. */
    private static final int UNTIL_RUNS = 20;

    /** What one run of a tool left: its exit code and captured streams. */
    private record Run(int code, ByteArrayOutputStream stdout, ByteArrayOutputStream stderr) { }

    /** An OutputStream whose target can be swapped. */
    private static final class Switch extends OutputStream {
        volatile OutputStream target;

        Switch(OutputStream target) { this.target = target; }

        @Override public void write(int b) throws java.io.IOException { target.write(b); }

        @Override public void write(byte[] b, int off, int len) throws java.io.IOException { target.write(b, off, len); }

        @Override public void flush() throws java.io.IOException { target.flush(); }
    }

    /** The tool running now: where its Exit.exit code goes. */
    private static volatile CompletableFuture<Integer> running = new CompletableFuture<>();

    /** The shutdown hooks the running tool added. */
    private static final List<Runnable> HOOKS = new java.util.concurrent.CopyOnWriteArrayList<>();

    public static void main(String[] args) throws Exception {
        PrintStream real = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        Switch out = new Switch(OutputStream.nullOutputStream());
        Switch err = new Switch(OutputStream.nullOutputStream());
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        // Exit.exit never returns in a real run, and some tools call it inside a catch-all: the calling
        // thread hands over the code and parks for good instead of unwinding through the tool's handlers.
        Exit.Procedure exit = (code, message) -> {
            running.complete(code);
            while (true) LockSupport.park();
        };
        Exit.setExitProcedure(exit);
        Exit.setHaltProcedure(exit);
        Exit.setShutdownHookAdder((name, hook) -> HOOKS.add(hook));

        List<List<String>> tools = new ArrayList<>();
        List<String> current = new ArrayList<>();
        for (String arg : args) {
            if (arg.equals(";")) {
                if (!current.isEmpty()) tools.add(current);
                current = new ArrayList<>();
            } else {
                current.add(arg);
            }
        }
        if (!current.isEmpty()) tools.add(current);

        for (int index = 0; index < tools.size(); index++) {
            List<String> group = tools.get(index);
            Pattern until = null;
            if (group.size() > 2 && group.get(0).equals("--until")) {
                until = Pattern.compile(group.get(1));
                group = group.subList(2, group.size());
            }
            String stdinFile = null;
            if (group.size() > 2 && group.get(0).equals("--stdin")) {
                stdinFile = group.get(1);
                group = group.subList(2, group.size());
            }
            Run run = runOnce(group, stdinFile, index, out, err);
            for (int again = 1; until != null && again < UNTIL_RUNS
                                && !until.matcher(run.stdout().toString(StandardCharsets.UTF_8)).find(); again++) {
                Thread.sleep(500);
                run = runOnce(group, stdinFile, index, out, err);
            }
            real.println("{\"tool\": " + index + ", \"exit\": " + run.code() + ", \"out\": " + json(run.stdout())
                         + ", \"err\": " + json(run.stderr()) + "}");
        }
        real.flush();
        Runtime.getRuntime().halt(0);  // parked tool threads and their clients' threads must not keep the JVM up
    }

    /** Runs one tool in a thread of its own and then the shutdown hooks it added; its exit code and output. */
    private static Run runOnce(List<String> tool, String stdinFile, int index, Switch out, Switch err) throws Exception {
        System.setIn(stdinFile == null ? InputStream.nullInputStream() : new FileInputStream(stdinFile));
        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        out.target = stdout;
        err.target = stderr;
        Map<Thread, Thread> before = runtimeHooks();
        Set<Thread> hooksBefore = before == null ? Set.of() : new HashSet<>(before.keySet());
        CompletableFuture<Integer> done = new CompletableFuture<>();
        running = done;
        Thread thread = new Thread(() -> {
            try {
                Class.forName(tool.get(0)).getMethod("main", String[].class)
                    .invoke(null, (Object) tool.subList(1, tool.size()).toArray(new String[0]));
                done.complete(0);  // returned without Exit.exit
            } catch (InvocationTargetException e) {
                e.getCause().printStackTrace();
                done.complete(-1);
            } catch (ReflectiveOperationException e) {
                e.printStackTrace();
                done.complete(-1);
            }
        }, "tool-" + index);
        thread.setDaemon(true);
        thread.start();
        int code;
        try {
            code = done.get(TOOL_TIMEOUT_S, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            code = -2;
        }
        List<Thread> hooks = new ArrayList<>();
        for (Runnable hook : HOOKS) hooks.add(new Thread(hook, "hook-" + index));
        HOOKS.clear();
        Map<Thread, Thread> registered = runtimeHooks();
        if (registered != null) {
            Set<Thread> added = new HashSet<>(registered.keySet());  // the tool ended: nothing adds more
            added.removeAll(hooksBefore);
            for (Thread hook : added) {
                Runtime.getRuntime().removeShutdownHook(hook);
                hooks.add(hook);
            }
        }
        for (Thread hook : hooks) {  // in turn; a JVM would start them together, but none waits on another
            hook.setDaemon(true);
            hook.start();
            hook.join(TimeUnit.SECONDS.toMillis(TOOL_TIMEOUT_S));
        }
        System.out.flush();
        System.err.flush();
        out.target = OutputStream.nullOutputStream();
        err.target = OutputStream.nullOutputStream();
        return new Run(code, stdout, stderr);
    }

    /** The JVM's registered shutdown hooks (java.lang.ApplicationShutdownHooks.hooks), or null if not open to us. */
    @SuppressWarnings("unchecked")
    private static Map<Thread, Thread> runtimeHooks() {
        try {
            Field field = Class.forName("java.lang.ApplicationShutdownHooks").getDeclaredField("hooks");
            field.setAccessible(true);
            return (Map<Thread, Thread>) field.get(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    private static String json(ByteArrayOutputStream bytes) {
        String text = bytes.toString(StandardCharsets.UTF_8);
        StringBuilder b = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"': b.append("\\\""); break;
                case '\\': b.append("\\\\"); break;
                case '\n': b.append("\\n"); break;
                case '\r': b.append("\\r"); break;
                case '\t': b.append("\\t"); break;
                default:
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c)); else b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
