package dev.fleproxy.audit;

import dev.fleproxy.crypto.ChainMac;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import io.netty.util.internal.PlatformDependent;
import java.util.Queue;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit trail (docs/access.md, "The audit trail"): events from the event loops go through a
 * queue to one writer thread, which numbers them, chains each line's MAC to the previous one
 * ({@link ChainMac}) and appends it to the file; past {@code rotateBytes} or {@code rotateEvery}
 * the file is renamed FILE.000001, FILE.000002, … and a new one begun, the chain going on. At
 * start the chain continues from the last line of the newest file. Bounded: with {@code
 * OnFull.REFUSE} a request is refused up front while {@code capacity} events wait ({@link
 * #admits}), so no access goes unrecorded (requests admitted just before may exceed it by what
 * is in flight); with {@code DROP} an event past the capacity is dropped and counted.
 */
public final class AuditLog implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AuditLog.class);

    public enum OnFull { REFUSE, DROP }

    private final Path file;
    private final ChainMac mac;
    private final long rotateBytes;
    private final long rotateNanos;
    private final int capacity;
    private final OnFull onFull;
    private final boolean stdout;
    private final LongSupplier nanoClock;
    private final SyslogSink syslog;
    /**
     * Lines waiting for the writer. Not a blocking queue: the writer drains it and then sleeps
     * {@link #IDLE_NANOS}, so adding a line does not wake a thread (a wake-up per request cost
     * more CPU than the line itself), except past {@link #wakeAt} lines, so that a burst does not
     * fill the queue while the writer sleeps. Waking every 2 ms instead, the writer thread took
     * 1.45 s of CPU over a bench-audit pair's life, against 0.82 s (a wake-up costs, idle or not).
     */
    private final Queue<AuditEvent> queue = PlatformDependent.newMpscQueue(); // many event loops, one writer: no lock, no node per line
    private static final long IDLE_NANOS = 10_000_000;
    private final int wakeAt;
    /** Lines written (by the writer alone). */
    private volatile long taken;
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong syslogLost = new AtomicLong();
    private final Thread writer;
    private volatile boolean closing;
    /** The previous line's MAC, and the array the next one is computed into (the two swap). */
    private byte[] previous;
    private byte[] current = new byte[ChainMac.LENGTH];
    private long seq;
    private java.io.OutputStream out;
    /** The writer thread's line being built, reused. */
    private final LineBuffer line = new LineBuffer();
    private long bytes;
    private long openedAt;
    private int nextRotated;

    public AuditLog(Path file, ChainMac mac, long rotateBytes, Duration rotateEvery, int capacity, OnFull onFull,
                    boolean stdout) {
        this(file, mac, rotateBytes, rotateEvery, capacity, onFull, stdout, null, System::nanoTime);
    }

    /** @param syslog where each line also goes over UDP (RFC 5424), null for nowhere (resolved already) */
    public AuditLog(Path file, ChainMac mac, long rotateBytes, Duration rotateEvery, int capacity, OnFull onFull,
                    boolean stdout, InetSocketAddress syslog) {
        this(file, mac, rotateBytes, rotateEvery, capacity, onFull, stdout, syslog, System::nanoTime);
    }

    AuditLog(Path file, ChainMac mac, long rotateBytes, Duration rotateEvery, int capacity, OnFull onFull,
             boolean stdout, InetSocketAddress syslog, LongSupplier nanoClock) {
        this.file = file.toAbsolutePath();
        this.mac = mac;
        this.rotateBytes = rotateBytes;
        this.rotateNanos = rotateEvery.isZero() ? Long.MAX_VALUE : rotateEvery.toNanos();
        this.capacity = capacity;
        this.wakeAt = Math.max(1, capacity / 8);
        this.onFull = onFull;
        this.stdout = stdout;
        this.nanoClock = nanoClock;
        try {
            this.syslog = syslog == null ? null : new SyslogSink(syslog);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a UDP socket for audit.syslog: " + e.getMessage(), e);
        }
        resume();
        this.writer = new Thread(this::run, "audit-writer");
        writer.setDaemon(true);
        writer.start();
    }

    /**
     * Whether a request may go ahead: false with onFull: refuse while the queue is full, and
     * always once the file could not be written (a trail with a hole is no trail).
     */
    public boolean admits() {
        return !failed && (onFull == OnFull.DROP || queue.size() < capacity);
    }

    /**
     * Queues the event (once); with onFull: drop, an event past the capacity is dropped and
     * counted. False if it was dropped.
     */
    public boolean write(AuditEvent e) {
        if (!e.emitOnce()) {
            return true;
        }
        if (onFull == OnFull.DROP && queue.size() >= capacity) {
            dropped.incrementAndGet();
            return false;
        }
        queue.add(e);
        if (queue.size() >= wakeAt) {
            LockSupport.unpark(writer);
        }
        return true;
    }

    public long dropped() {
        return dropped.get();
    }

    public long written() {
        return taken;
    }

    /** The chain's state from the newest file, so that it goes on across restarts. */
    private void resume() {
        previous = new byte[ChainMac.LENGTH];
        try {
            Files.createDirectories(file.getParent());
            List<Path> rotated = AuditFiles.rotated(file);
            nextRotated = rotated.isEmpty() ? 1 : AuditFiles.number(rotated.get(rotated.size() - 1), file) + 1;
            Path newest = Files.exists(file) && Files.size(file) > 0 ? file
                    : rotated.isEmpty() ? null : rotated.get(rotated.size() - 1);
            if (newest != null) {
                AuditLine.Parsed last = AuditFiles.lastLine(newest);
                if (last == null) {
                    throw new IllegalStateException(newest + " does not end in an audit line; the chain cannot go on "
                            + "from it (move it aside after checking it with audit verify)");
                }
                previous = last.mac();
                seq = last.seq();
            }
            open();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the audit trail " + file + ": " + e.getMessage(), e);
        }
    }

    private void open() throws IOException {
        out = new java.io.BufferedOutputStream(Files.newOutputStream(file, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND), 64 * 1024);
        bytes = Files.size(file);
        openedAt = nanoClock.getAsLong();
    }

    private void run() {
        try {
            while (!closing || !queue.isEmpty()) {
                boolean dirty = false;
                for (AuditEvent e = queue.poll(); e != null; e = queue.poll()) {
                    append(e);
                    dirty = true;
                }
                if (dirty) {
                    out.flush(); // the queue is drained: what was written reaches the file
                }
                LockSupport.parkNanos(IDLE_NANOS);
            }
            out.flush();
        } catch (IOException e) {
            log.error("the audit trail {} cannot be written: {}; requests are refused from now on", file, e.getMessage());
            failed = true;
        }
    }

    private volatile boolean failed;

    /** True once the file could not be written: every request is refused then (a trail with a hole is no trail). */
    public boolean failed() {
        return failed;
    }

    private void append(AuditEvent e) throws IOException {
        if (bytes >= rotateBytes || nanoClock.getAsLong() - openedAt >= rotateNanos && bytes > 0) {
            rotate();
        }
        line.truncate(0).ascii("{\"seq\":").number(seq + 1).ascii(",");
        e.appendMembers(line);
        line.ascii("}");
        mac.next(previous, line.array(), line.length(), current); // the MAC covers the object as it reads without it
        line.truncate(line.length() - 1).ascii(",\"mac\":\"").hex(current, ChainMac.LENGTH).ascii("\"}\n");
        out.write(line.array(), 0, line.length());
        if (stdout || syslog != null) {
            String text = new String(line.array(), 0, line.length() - 1, StandardCharsets.UTF_8);
            if (stdout) {
                System.out.println(text);
            }
            if (syslog != null) {
                try {
                    syslog.send(text);
                } catch (IOException lost) {
                    syslogLost.incrementAndGet(); // UDP: the file is the trail of record
                }
            }
        }
        seq++;
        byte[] swap = previous;
        previous = current;
        current = swap;
        bytes += line.length();
        taken++; // the writer alone writes it
    }

    private void rotate() throws IOException {
        out.close();
        Files.move(file, AuditFiles.rotatedName(file, nextRotated++));
        open();
    }

    @Override
    public void close() {
        closing = true;
        LockSupport.unpark(writer);
        try {
            writer.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            out.close();
            if (syslog != null) {
                syslog.close();
            }
        } catch (IOException e) {
            log.warn("closing the audit trail {}: {}", file, e.getMessage());
        }
    }
}
