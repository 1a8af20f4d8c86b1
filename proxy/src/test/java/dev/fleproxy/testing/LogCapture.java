package dev.fleproxy.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

/** What every logger writes during a test, for tests of log lines. Register it with {@code @RegisterExtension}. */
public final class LogCapture implements BeforeEachCallback, AfterEachCallback {
    private static final Pattern SUMMARY = Pattern.compile("… and ([0-9,]+) more like it in the last \\d+ m?s$");

    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
    private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);

    @Override
    public void beforeEach(ExtensionContext context) {
        appender.start();
        root.addAppender(appender);
    }

    /** Everything so far (a copy: the proxy's threads keep logging). */
    public List<ILoggingEvent> all() {
        synchronized (appender) {
            return new ArrayList<>(appender.list);
        }
    }

    public List<ILoggingEvent> containing(String text) {
        return all().stream().filter(e -> e.getFormattedMessage().contains(text)).toList();
    }

    public List<ILoggingEvent> atLeast(Level level) {
        return all().stream().filter(e -> e.getLevel().isGreaterOrEqual(level)).toList();
    }

    /** The messages of the lines at this level or above: what an assertion failure should show. */
    public List<String> messagesAtLeast(Level level) {
        return atLeast(level).stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    /**
     * How many occurrences these rate-limited lines stand for: one each, or the count of a
     * window's summary ("… and 1,234 more like it in the last 10 s").
     */
    public static long occurrences(List<ILoggingEvent> lines) {
        long n = 0;
        for (ILoggingEvent e : lines) {
            Matcher m = SUMMARY.matcher(e.getFormattedMessage());
            n += m.find() ? Long.parseLong(m.group(1).replace(",", "")) : 1;
        }
        return n;
    }

    @Override
    public void afterEach(ExtensionContext context) {
        root.detachAppender(appender);
    }
}
