package dev.fleproxy.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The rate limit on lines about bad input, with a clock the test moves. */
class BadInputLogTest {
    private static final long WINDOW = TimeUnit.SECONDS.toNanos(10);

    private final AtomicLong clock = new AtomicLong(1_000_000_000L);
    private final ListAppender<ILoggingEvent> lines = new ListAppender<>();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    private Logger logger;
    private BadInputLog log;

    @BeforeEach
    void setUp() {
        logger = (Logger) LoggerFactory.getLogger("test.BadInputLogTest");
        logger.setAdditive(false);
        lines.start();
        logger.addAppender(lines);
        log = new BadInputLog(logger, WINDOW, clock::get);
    }

    @AfterEach
    void tearDown() {
        logger.detachAppender(lines);
        scheduler.shutdownNow();
    }

    /** Reports and flushes by hand (the scheduler's summary is due in 10 s of real time, never reached here). */
    private void report(BadInputLog.Reason r, String who, String text) {
        log.report(r, who, text, null, scheduler);
    }

    private List<String> messages() {
        return lines.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    @Test
    void firstInFullThenOneSummaryPerWindowWithTheCount() {
        report(BadInputLog.Reason.PROTOCOL_ERROR, "conn#1 from /10.0.0.1:1", "closed: protocol error from client: a");
        for (int i = 2; i <= 12_346; i++) {
            report(BadInputLog.Reason.PROTOCOL_ERROR, "conn#" + i + " from /10.0.0.1:1", "closed: protocol error from client: b");
        }
        assertEquals(List.of("conn#1 from /10.0.0.1:1: closed: protocol error from client: a"), messages());
        assertEquals(Level.WARN, lines.list.get(0).getLevel());

        clock.addAndGet(WINDOW);
        log.flush(BadInputLog.Reason.PROTOCOL_ERROR); // what the scheduled task does at the window's end
        assertEquals(2, lines.list.size());
        assertEquals("conn#12346 from /10.0.0.1:1: closed: protocol error from client: b … and 12,345 more like it in "
                + "the last 10 s", messages().get(1));

        // the summary opened a new window: what comes within it is counted, not logged
        clock.addAndGet(WINDOW / 2);
        report(BadInputLog.Reason.PROTOCOL_ERROR, "conn#9", "closed: protocol error from client: c");
        assertEquals(2, lines.list.size());
        clock.addAndGet(WINDOW / 2);
        log.flush(BadInputLog.Reason.PROTOCOL_ERROR);
        assertTrue(messages().get(2).endsWith("… and 1 more like it in the last 10 s"), messages().get(2));

        // a quiet window: an empty flush writes nothing, and after it the next one is logged in full
        clock.addAndGet(WINDOW);
        log.flush(BadInputLog.Reason.PROTOCOL_ERROR);
        assertEquals(3, lines.list.size());
        clock.addAndGet(WINDOW + 1);
        report(BadInputLog.Reason.PROTOCOL_ERROR, "conn#10", "closed: protocol error from client: d");
        assertEquals("conn#10: closed: protocol error from client: d", messages().get(3));
    }

    @Test
    void eachReasonHasItsOwnWindow() {
        report(BadInputLog.Reason.PROTOCOL_ERROR, "conn#1", "p");
        report(BadInputLog.Reason.MALFORMED_BSON, "conn#2", "m");
        report(BadInputLog.Reason.INCOMPLETE_MESSAGE, "conn#3", "i");
        report(BadInputLog.Reason.PROTOCOL_ERROR, "conn#4", "p again");
        assertEquals(List.of("conn#1: p", "conn#2: m", "conn#3: i"), messages());
    }

    @Test
    void unexpectedErrorsAreErrorsWithOneStackTracePerWindow() {
        NullPointerException npe = new NullPointerException("x");
        log.report(BadInputLog.Reason.UNEXPECTED_ERROR, "conn#1", "closed after an unexpected error", npe, scheduler);
        log.report(BadInputLog.Reason.UNEXPECTED_ERROR, "conn#2", "closed after an unexpected error", npe, scheduler);
        clock.addAndGet(WINDOW);
        log.flush(BadInputLog.Reason.UNEXPECTED_ERROR);
        assertEquals(2, lines.list.size());
        assertEquals(Level.ERROR, lines.list.get(0).getLevel());
        assertNotNull(lines.list.get(0).getThrowableProxy(), "the first one carries its stack trace");
        assertEquals(Level.ERROR, lines.list.get(1).getLevel());
        assertNull(lines.list.get(1).getThrowableProxy(), "the summary does not");
        assertTrue(messages().get(1).endsWith("… and 1 more like it in the last 10 s"));
    }

    @Test
    void upstreamLinesKeepTheirLevelsInFullAndInTheSummary() {
        for (int i = 1; i <= 3; i++) {
            report(BadInputLog.Reason.UPSTREAM_CLOSED, "conn#" + i, "upstream 127.0.0.1:27017 closed the connection");
            report(BadInputLog.Reason.UPSTREAM_UNAVAILABLE, "conn#" + i, "upstream 127.0.0.1:27017 is unreachable: x");
        }
        clock.addAndGet(WINDOW);
        log.flush(BadInputLog.Reason.UPSTREAM_CLOSED);
        log.flush(BadInputLog.Reason.UPSTREAM_UNAVAILABLE);
        assertEquals(List.of("conn#1: upstream 127.0.0.1:27017 closed the connection",
                "conn#1: upstream 127.0.0.1:27017 is unreachable: x",
                "conn#3: upstream 127.0.0.1:27017 closed the connection … and 2 more like it in the last 10 s",
                "conn#3: upstream 127.0.0.1:27017 is unreachable: x … and 2 more like it in the last 10 s"), messages());
        assertEquals(List.of(Level.INFO, Level.WARN, Level.INFO, Level.WARN),
                lines.list.stream().map(ILoggingEvent::getLevel).toList());
    }

    @Test
    void aWindowOfZeroWritesEveryLine() {
        BadInputLog everything = new BadInputLog(logger, BadInputLog.windowFromEnvironment("0"), clock::get);
        for (int i = 0; i < 3; i++) {
            everything.report(BadInputLog.Reason.PROTOCOL_ERROR, "conn#" + i, "p", null, scheduler);
        }
        assertEquals(List.of("conn#0: p", "conn#1: p", "conn#2: p"), messages());
        assertEquals(WINDOW, BadInputLog.windowFromEnvironment(null));
        assertEquals(WINDOW, BadInputLog.windowFromEnvironment("ten"));
        assertEquals(TimeUnit.MILLISECONDS.toNanos(250), BadInputLog.windowFromEnvironment("250"));
    }

    @Test
    void theSummaryIsWrittenByTheSchedulerWhenTheWindowEnds() throws Exception {
        BadInputLog shortWindow = new BadInputLog(logger, TimeUnit.MILLISECONDS.toNanos(200), System::nanoTime);
        shortWindow.report(BadInputLog.Reason.OVER_BUDGET, "conn#1", "o", null, scheduler);
        for (int i = 0; i < 5; i++) {
            shortWindow.report(BadInputLog.Reason.OVER_BUDGET, "conn#2", "o", null, scheduler);
        }
        assertEquals(1, lines.list.size());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (lines.list.size() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals("conn#2: o … and 5 more like it in the last 200 ms", messages().get(1));
    }
}
