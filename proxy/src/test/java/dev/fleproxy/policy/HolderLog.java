package dev.fleproxy.policy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.LoggerFactory;

/** What PolicyHolder logs during one test (the key check logs there too), by level. */
final class HolderLog implements BeforeEachCallback, AfterEachCallback {
    private final Logger holderLog = (Logger) LoggerFactory.getLogger(PolicyHolder.class);
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();

    @Override
    public void beforeEach(ExtensionContext context) {
        logged.start();
        holderLog.addAppender(logged);
    }

    @Override
    public void afterEach(ExtensionContext context) {
        holderLog.detachAppender(logged);
    }

    List<String> lines(Level level) {
        synchronized (logged) { // the appender's own lock: a line may be added meanwhile
            return logged.list.stream().filter(e -> e.getLevel() == level).map(ILoggingEvent::getFormattedMessage)
                    .toList();
        }
    }

    void clear() {
        logged.list.clear();
    }
}
