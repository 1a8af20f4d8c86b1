package dev.fleproxy.audit;

import dev.fleproxy.crypto.ChainMac;
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The audit trail (docs/access.md, "The audit trail"): events from the event loops go through a
 * queue to one writer thread, which numbers them, chains each line's MAC to the previous one
 * ({@link ChainMac}) and appends it to the file; past {@code rotateBytes} or {@code rotateEvery}
 * the file is renamed FILE.000001, FILE.000002, … and a new one begun, the chain going on. At
 * start the chain continues from the last whole line of the newest file ({@link AuditResume}).
 *
 * <p>Group commit: the writer takes what waits (a batch), writes it to the file in one go and
 * only then completes each event's {@link AuditEvent#written} — the answer to the request waits
 * for that, so no request is answered without its line on file. If the file cannot be written
 * (a full disk), the batch's events complete exceptionally, nothing more is written (a partial
 * batch is never retried: that would put bytes twice in the file) and {@link #admits} is false
 * from then on. Bounded: with {@code OnFull.REFUSE} a request is refused up front while {@code
 * capacity} events wait, so no access goes unrecorded (requests admitted just before may exceed
 * it by what is in flight); with {@code DROP} an event past the capacity is dropped, counted, and
 * its request not held.
 */
public final class AuditLog implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AuditLog.class);

    public enum OnFull { REFUSE, DROP }

    /**
     * Lines a batch takes at most: the first line's answer waits for the whole batch, so a long
     * backlog goes out in several writes rather than one that holds every answer.
     */
    private static final int BATCH = 256;
    /** Bytes gathered before they go to the file within a batch (the batch's answers still wait for its end). */
    private static final int WRITE_THROUGH = 64 * 1024;
    /**
     * How long the writer sleeps with nothing to do. Answers wait for it, so a line wakes it at
     * once ({@link #write}): this only bounds how long a missed wake-up could last.
     */
    private static final long IDLE_NANOS = 100_000_000;

    private final Path file;
    private final ChainMac mac;
    private final long rotateBytes;
    private final long rotateNanos;
    private final int capacity;
    private final OnFull onFull;
    private final boolean stdout;
    private final boolean fsync;
    private final LongSupplier nanoClock;
    private final SyslogSink syslog;
    private final String instance;
    /** {@code ,"instance":"NAME"}, the last member before the MAC of every line (empty without a name). */
    private final byte[] instanceMember;
    /** Lines waiting for the writer: many event loops, one writer, no lock and no node per line. */
    private final Queue<AuditEvent> queue = PlatformDependent.newMpscQueue();
    /**
     * True while the writer sleeps or is about to: a producer that sees it wakes the writer
     * (at most one wake-up per batch, not one per line: a wake-up costs more than a line).
     */
    private volatile boolean sleeping;
    /** Lines on file (by the writer alone). */
    private volatile long taken;
    private final AtomicLong dropped = new AtomicLong();
    private final AtomicLong syslogLost = new AtomicLong();
    private final Thread writer;
    private volatile boolean closing;
    private volatile boolean failed;
    /** Why the file could not be written; what every waiting event fails with from then on. */
    private volatile IOException failure;
    /** The previous line's MAC, and the array the next one is computed into (the two swap). */
    private byte[] previous;
    private byte[] current = new byte[ChainMac.LENGTH];
    private long seq;
    private FileChannel channel;
    /** Holds {@code .FILE.lock}'s lock while the log is open ({@link #lock}). */
    private FileChannel lockChannel;
    /** The writer thread's line being built, reused. */
    private final LineBuffer line = new LineBuffer();
    /** The batch's bytes not yet written to the file. */
    private final LineBuffer pending = new LineBuffer();
    private final List<AuditEvent> batch = new ArrayList<>(BATCH);
    private long bytes;
    private long openedAt;
    private int nextRotated;

    public AuditLog(Path file, ChainMac mac, long rotateBytes, Duration rotateEvery, int capacity, OnFull onFull,
                    boolean stdout) {
        this(file, mac, rotateBytes, rotateEvery, capacity, onFull, stdout, null, false, null, System::nanoTime);
    }

    /**
     * @param syslog where each line also goes over UDP (RFC 5424), null for nowhere (resolved already)
     * @param fsync  whether each batch is forced to the disk before its answers go (else to the page cache)
     * @param instance the proxy's name, in every line (null: none)
     */
    public AuditLog(Path file, ChainMac mac, long rotateBytes, Duration rotateEvery, int capacity, OnFull onFull,
                    boolean stdout, InetSocketAddress syslog, boolean fsync, String instance) {
        this(file, mac, rotateBytes, rotateEvery, capacity, onFull, stdout, syslog, fsync, instance, System::nanoTime);
    }

    AuditLog(Path file, ChainMac mac, long rotateBytes, Duration rotateEvery, int capacity, OnFull onFull,
             boolean stdout, InetSocketAddress syslog, boolean fsync, String instance, LongSupplier nanoClock) {
        this.file = file.toAbsolutePath();
        this.mac = mac;
        this.rotateBytes = rotateBytes;
        this.rotateNanos = rotateEvery.isZero() ? Long.MAX_VALUE : rotateEvery.toNanos();
        this.capacity = capacity;
        this.onFull = onFull;
        this.stdout = stdout;
        this.fsync = fsync;
        this.nanoClock = nanoClock;
        this.instance = instance;
        this.instanceMember = AuditLine.instanceMember(instance);
        resume();
        try {
            this.syslog = syslog == null ? null : new SyslogSink(syslog);
        } catch (IOException e) {
            closeQuietly();
            unlock();
            throw new UncheckedIOException("cannot open a UDP socket for audit.syslog: " + e.getMessage(), e);
        }
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
     * Hands the event to the writer (once: called again, it returns the same completion). The
     * completion is done when the line is on file (flushed with its batch; forced to the disk too
     * with fsync), exceptionally if it cannot be written; with onFull: drop, an event past the
     * capacity is dropped, counted ({@link AuditEvent#dropped}) and complete at once.
     */
    public CompletionStage<Void> write(AuditEvent e) {
        if (!e.emitOnce()) {
            return e.completion();
        }
        if (failed) {
            e.completion(CompletableFuture.failedFuture(failure));
            return e.completion();
        }
        if (onFull == OnFull.DROP && queue.size() >= capacity) {
            dropped.incrementAndGet();
            e.dropped(true);
            e.completion(CompletableFuture.completedFuture(null));
            return e.completion();
        }
        CompletableFuture<Void> c = new CompletableFuture<>();
        e.completion(c);
        queue.add(e);
        if (sleeping) {
            sleeping = false;
            LockSupport.unpark(writer);
        }
        return c;
    }

    public long dropped() {
        return dropped.get();
    }

    /** Lines on file. */
    public long written() {
        return taken;
    }

    /** True once the file could not be written: every request is refused then (a trail with a hole is no trail). */
    public boolean failed() {
        return failed;
    }

    /** The chain's state from the newest file, so that it goes on across restarts ({@link AuditResume}). */
    private void resume() {
        try {
            Files.createDirectories(file.getParent());
            lock(); // before anything is read or written
            AuditResume.End end = AuditResume.of(file, mac, fsync, instance);
            previous = end.mac();
            seq = end.seq();
            nextRotated = end.nextRotated();
            open();
        } catch (IOException | RuntimeException e) {
            closeQuietly();
            unlock();
            if (e instanceof IOException io) {
                throw new UncheckedIOException("cannot open the audit trail " + file + ": " + io.getMessage(), io);
            }
            throw (RuntimeException) e;
        }
    }

    private void open() throws IOException {
        channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        bytes = channel.size();
        openedAt = nanoClock.getAsLong();
    }

    /**
     * One writer per trail: two would interleave their lines and break both chains (several
     * proxies on one shared volume, a second proxy started with the same config). The lock is on a
     * file of its own beside the trail ({@code .FILE.lock}), held as long as this log is open: on
     * Linux closing any channel to a file drops the process's locks on it, and the trail's files
     * are opened and closed by the resume and by rotation.
     */
    private void lock() throws IOException {
        // hidden, so that FILE.* (the trail's files, as they are handed to audit verify) does not take it in
        Path lockFile = file.resolveSibling("." + file.getFileName() + ".lock");
        lockChannel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        java.nio.channels.FileLock lock;
        try {
            lock = lockChannel.tryLock();
        } catch (java.nio.channels.OverlappingFileLockException held) {
            lock = null; // by this process, through another AuditLog
        }
        if (lock == null) {
            lockChannel.close();
            lockChannel = null;
            throw new IllegalStateException(file + " is being written by another process (" + lockFile + " is locked: "
                    + "another proxy with the same audit.file?); each instance needs an audit.file of its own");
        }
    }

    private void run() {
        while (true) {
            AuditEvent e = queue.poll();
            if (e == null) {
                if (closing) {
                    return;
                }
                sleeping = true;
                if (queue.isEmpty() && !closing) { // a line added before sleeping was set is seen here
                    LockSupport.parkNanos(this, IDLE_NANOS);
                }
                sleeping = false;
                continue;
            }
            if (failed) {
                e.completion().completeExceptionally(failure);
                continue;
            }
            writeBatch(e);
        }
    }

    /** Writes the event and what waits behind it (up to a batch), then releases their answers. */
    private void writeBatch(AuditEvent first) {
        batch.clear();
        try {
            for (AuditEvent e = first; e != null; e = batch.size() < BATCH ? queue.poll() : null) {
                batch.add(e);
                append(e);
            }
            writePending();
            if (fsync) {
                channel.force(false);
            }
        } catch (IOException | RuntimeException x) {
            fail(x);
            for (AuditEvent e : batch) {
                e.completion().completeExceptionally(failure);
            }
            return;
        }
        taken += batch.size(); // the writer alone writes it
        for (AuditEvent e : batch) {
            e.completion().complete(null); // its answer may go now (the lane resumes on its own event loop)
        }
    }

    private void fail(Exception x) {
        failure = x instanceof IOException io ? io : new IOException(x.toString(), x);
        failed = true;
        log.error("the audit trail {} cannot be written: {}; the answers waiting for their lines are withheld "
                + "(9720042), and requests on encrypted collections refused from now on", file, x.getMessage());
        closeQuietly(); // nothing more is written: a partial batch written again would repeat bytes
    }

    private void append(AuditEvent e) throws IOException {
        if (bytes >= rotateBytes || nanoClock.getAsLong() - openedAt >= rotateNanos && bytes > 0) {
            rotate();
        }
        line.truncate(0).ascii("{\"seq\":").number(seq + 1).ascii(",");
        e.appendMembers(line);
        line.bytes(instanceMember).ascii("}");
        mac.next(previous, line.array(), line.length(), current); // the MAC covers the object as it reads without it
        line.truncate(line.length() - 1).ascii(",\"mac\":\"").hex(current, ChainMac.LENGTH).ascii("\"}\n");
        pending.bytes(line.array(), line.length());
        if (pending.length() >= WRITE_THROUGH) {
            writePending();
        }
        if (stdout || syslog != null) {
            copy(new String(line.array(), 0, line.length() - 1, StandardCharsets.UTF_8));
        }
        seq++;
        swap();
        bytes += line.length();
    }

    private void swap() {
        byte[] s = previous;
        previous = current;
        current = s;
    }

    /** The copies on standard output and syslog (copies: the file is the trail of record). */
    private void copy(String text) {
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

    private void writePending() throws IOException {
        ByteBuffer b = ByteBuffer.wrap(pending.array(), 0, pending.length());
        while (b.hasRemaining()) {
            channel.write(b);
        }
        pending.truncate(0);
    }

    private void rotate() throws IOException {
        writePending();
        if (fsync) {
            channel.force(false);
        }
        channel.close();
        Files.move(file, AuditFiles.rotatedName(file, nextRotated++));
        open();
    }

    private void closeQuietly() {
        try {
            if (channel != null) {
                channel.close();
            }
        } catch (IOException e) {
            log.warn("closing the audit trail {}: {}", file, e.getMessage());
        }
    }

    private void unlock() {
        try {
            if (lockChannel != null) {
                lockChannel.close();
            }
        } catch (IOException e) {
            log.warn("releasing the audit trail's lock beside {}: {}", file, e.getMessage());
        }
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
        closeQuietly();
        unlock();
        if (syslog != null) {
            try {
                syslog.close();
            } catch (IOException e) {
                log.warn("closing the audit trail's syslog socket: {}", e.getMessage());
            }
        }
    }
}
