package dev.fleproxy.runtime;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives memory back to the system after a burst. Neither the JVM nor glibc does it on its own in
 * time: after 200 peers each sent half of a 16 MB message and left, the proxy's RSS went 100 →
 * 1,033 MB and stayed at 420 MB a minute later, 235 MB of it blocks glibc's malloc kept (the
 * buffers' memory is allocated natively, and glibc raises its mmap threshold after the first
 * large free, so later large blocks come from arenas it does not trim) and the rest heap G1 had
 * not uncommitted for want of a collection. So, as the JVM's own TrimNativeHeapInterval (JDK 21)
 * and G1PeriodicGCInterval do when given on the command line, which a {@code java -jar} user
 * does not: every {@link #PERIOD_SECONDS} s the native heap is trimmed (the diagnostic command
 * System.trim_native_heap, glibc's malloc_trim), and G1 runs a periodic concurrent collection when
 * none ran for 30 s, which uncommits the heap it no longer needs. A flag the operator set is
 * left as it is; where either is missing (another JVM or libc) it is skipped, once logged.
 */
final class MemoryReturn implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(MemoryReturn.class);
    static final int PERIOD_SECONDS = 10;

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "fle-memory-return");
        t.setDaemon(true);
        return t;
    });

    private MemoryReturn() {
    }

    static MemoryReturn start() {
        MemoryReturn m = new MemoryReturn();
        m.periodicCollections();
        m.timer.scheduleWithFixedDelay(() -> {
            m.collectWhenQuiet();
            m.trimNativeHeap();
        }, PERIOD_SECONDS, PERIOD_SECONDS, TimeUnit.SECONDS);
        return m;
    }

    /** G1PeriodicGCInterval (manageable: settable while running), unless set already. */
    private void periodicCollections() {
        try {
            HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            if (hotspot.getVMOption("UseG1GC").getValue().equals("true")
                    && hotspot.getVMOption("G1PeriodicGCInterval").getValue().equals("0")) {
                hotspot.setVMOption("G1PeriodicGCInterval", String.valueOf(30_000L));
            }
        } catch (RuntimeException e) {
            log.info("the heap is not returned to the system after bursts on this JVM ({})", e.toString());
        }
    }

    /** Collections the JVM had made at the last tick: none since, and the proxy is quiet. */
    private long lastCollections = -1;
    /** The heap committed after the last full collection this made (0: none yet). */
    private long committedAfter;
    /** Committed heap past this, or this much past what the last full collection left, is worth one when quiet. */
    static final long SPARE_BYTES = 256L * 1024 * 1024;

    /**
     * A full collection when the proxy has gone quiet with much heap committed: a periodic
     * concurrent cycle neither empties the young generation nor compacts, so after 30 clients
     * evaluating queries the heap stayed at 768 MB committed (430 MB "used", nearly all garbage) a
     * minute later. Quiet means no collection at all since the last tick (a busy proxy collects
     * several times a second), so the pause (tens of ms with little live) meets no traffic; and
     * not again until the heap has grown by as much since (a proxy that really holds that much,
     * in cursors, is not collected every tick).
     */
    private void collectWhenQuiet() {
        long collections = 0;
        for (java.lang.management.GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            collections += Math.max(0, gc.getCollectionCount());
        }
        boolean quiet = collections == lastCollections;
        lastCollections = collections;
        long committed = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getCommitted();
        if (quiet && committed > Math.max(SPARE_BYTES, committedAfter + SPARE_BYTES)) {
            System.gc(); // G1: a full collection, then the heap shrinks to MaxHeapFreeRatio
            committedAfter = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getCommitted();
            lastCollections = -1; // its own collection is not traffic
        }
    }

    /** glibc's malloc_trim, through the diagnostic command the JVM offers for it. */
    private void trimNativeHeap() {
        try {
            Object out = ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "systemTrimNativeHeap",
                    new Object[] {new String[0]}, new String[] {String[].class.getName()});
            log.debug("{}", out);
        } catch (Exception e) {
            log.info("native memory is not trimmed after bursts on this JVM or libc ({}); not tried again", e.toString());
            timer.shutdown();
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
