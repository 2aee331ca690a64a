package org.slf4j.impl;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.ILoggerFactory;
import org.slf4j.Logger;
import org.slf4j.helpers.FormattingTuple;
import org.slf4j.helpers.MarkerIgnoringBase;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.spi.LoggerFactoryBinder;

/**
 * A tiny SLF4J 1.7 binding for the test programs: client log lines at or above the level named by
 * the environment variable MINIBROKER_JAVA_LOG (trace, debug, info, warn (default), error, off) go
 * to stderr, where the pytest output shows them when a test fails.
 */
public final class StaticLoggerBinder implements LoggerFactoryBinder {
    public static String REQUESTED_API_VERSION = "1.6.99";
    private static final StaticLoggerBinder SINGLETON = new StaticLoggerBinder();
    private final ILoggerFactory factory = new StderrLoggerFactory();

    public static StaticLoggerBinder getSingleton() {
        return SINGLETON;
    }

    @Override
    public ILoggerFactory getLoggerFactory() {
        return factory;
    }

    @Override
    public String getLoggerFactoryClassStr() {
        return StderrLoggerFactory.class.getName();
    }

    static final class StderrLoggerFactory implements ILoggerFactory {
        private final ConcurrentMap<String, Logger> loggers = new ConcurrentHashMap<>();

        @Override
        public Logger getLogger(String name) {
            return loggers.computeIfAbsent(name, StderrLogger::new);
        }
    }

    static final class StderrLogger extends MarkerIgnoringBase {
        private static final long serialVersionUID = 1L;
        private static final String[] NAMES = {"TRACE", "DEBUG", "INFO", "WARN", "ERROR"};
        private static final int THRESHOLD = threshold();

        StderrLogger(String name) {
            this.name = name;
        }

        private static int threshold() {
            String level = System.getenv().getOrDefault("MINIBROKER_JAVA_LOG", "warn").toUpperCase();
            if (level.equals("OFF")) {
                return NAMES.length;
            }
            int i = java.util.Arrays.asList(NAMES).indexOf(level);
            return i < 0 ? 3 : i;
        }

        private void log(int level, String format, Object[] args, Throwable t) {
            if (level < THRESHOLD) {
                return;
            }
            FormattingTuple ft = t == null ? MessageFormatter.arrayFormat(format, args)
                    : MessageFormatter.arrayFormat(format, args, t);
            String shortName = name.substring(name.lastIndexOf('.') + 1);
            synchronized (System.err) {
                System.err.printf("%tT.%<tL %s [%s] %s: %s%n", System.currentTimeMillis(), NAMES[level],
                        Thread.currentThread().getName(), shortName, ft.getMessage());
                Throwable thrown = t != null ? t : ft.getThrowable();
                if (thrown != null) {
                    thrown.printStackTrace(System.err);
                }
            }
        }

        private static Object[] a(Object... args) {
            return args;
        }

        public boolean isTraceEnabled() { return THRESHOLD <= 0; }
        public void trace(String m) { log(0, m, null, null); }
        public void trace(String f, Object x) { log(0, f, a(x), null); }
        public void trace(String f, Object x, Object y) { log(0, f, a(x, y), null); }
        public void trace(String f, Object... xs) { log(0, f, xs, null); }
        public void trace(String m, Throwable t) { log(0, m, null, t); }

        public boolean isDebugEnabled() { return THRESHOLD <= 1; }
        public void debug(String m) { log(1, m, null, null); }
        public void debug(String f, Object x) { log(1, f, a(x), null); }
        public void debug(String f, Object x, Object y) { log(1, f, a(x, y), null); }
        public void debug(String f, Object... xs) { log(1, f, xs, null); }
        public void debug(String m, Throwable t) { log(1, m, null, t); }

        public boolean isInfoEnabled() { return THRESHOLD <= 2; }
        public void info(String m) { log(2, m, null, null); }
        public void info(String f, Object x) { log(2, f, a(x), null); }
        public void info(String f, Object x, Object y) { log(2, f, a(x, y), null); }
        public void info(String f, Object... xs) { log(2, f, xs, null); }
        public void info(String m, Throwable t) { log(2, m, null, t); }

        public boolean isWarnEnabled() { return THRESHOLD <= 3; }
        public void warn(String m) { log(3, m, null, null); }
        public void warn(String f, Object x) { log(3, f, a(x), null); }
        public void warn(String f, Object x, Object y) { log(3, f, a(x, y), null); }
        public void warn(String f, Object... xs) { log(3, f, xs, null); }
        public void warn(String m, Throwable t) { log(3, m, null, t); }

        public boolean isErrorEnabled() { return THRESHOLD <= 4; }
        public void error(String m) { log(4, m, null, null); }
        public void error(String f, Object x) { log(4, f, a(x), null); }
        public void error(String f, Object x, Object y) { log(4, f, a(x, y), null); }
        public void error(String f, Object... xs) { log(4, f, xs, null); }
        public void error(String m, Throwable t) { log(4, m, null, t); }
    }
}
