package dev.fleproxy.audit;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What the audit trail records of one request on an encrypted collection: when, which
 * connection and identity from where ({@link #who}), the command, the namespace and each policy
 * field with what happened to it ({@link #what}), how many documents the answer held, and the
 * outcome code (0: ok). Never a value, a key or a query constant. Filled on the connection's event
 * loop, then handed to the {@link AuditLog} once.
 *
 * <p>Who and what are JSON members encoded once and reused (a connection sends many requests on
 * one collection), so that an event costs the event loop a time stamp and two references: the
 * writer thread copies the bytes into the line.
 *
 * <p>Once handed over, the event is also how its request learns that its line is on file
 * ({@link #onFile}): the answer waits for that (docs/access.md, "The audit trail").
 */
public final class AuditEvent {
    private final long epochMilli;
    private final byte[] who;
    private final byte[] what;
    private long documents = -1;
    private int code;
    private boolean emitted;
    /** Completed by the writer once the line is on file, exceptionally if it could not be written; null before. */
    private CompletableFuture<Void> onFile;
    private boolean dropped;

    /**
     * @param epochMilli when the proxy read the request ({@link System#currentTimeMillis})
     * @param who  {@link #who}'s members
     * @param what {@link #what}'s members
     */
    public AuditEvent(long epochMilli, byte[] who, byte[] what) {
        this.epochMilli = epochMilli;
        this.who = who;
        this.what = what;
    }

    /** The members {@code "conn":N,"identity":"…","client":"…"} of a connection's lines. */
    public static byte[] who(long connection, String identity, String client) {
        return ("\"conn\":" + connection + ",\"identity\":" + AuditLine.quote(identity)
                + ",\"client\":" + AuditLine.quote(client)).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The members {@code "cmd":"…","ns":"…","fields":{…}} of a command's lines: each policy field,
     * in order, with what happened to it (revealed, masked:KIND, refused, written).
     */
    public static byte[] what(String command, String namespace, Map<String, String> fields) {
        StringBuilder b = new StringBuilder(64 + 24 * fields.size());
        b.append("\"cmd\":").append(AuditLine.quote(command))
                .append(",\"ns\":").append(AuditLine.quote(namespace))
                .append(",\"fields\":{");
        boolean first = true;
        for (Map.Entry<String, String> f : fields.entrySet()) {
            b.append(first ? "" : ",").append(AuditLine.quote(f.getKey())).append(':').append(AuditLine.quote(f.getValue()));
            first = false;
        }
        return b.append('}').toString().getBytes(StandardCharsets.UTF_8);
    }

    public AuditEvent documents(long n) {
        documents = n;
        return this;
    }

    public AuditEvent code(int outcome) {
        code = outcome;
        return this;
    }

    /** True the first time only: an event is written once (an exhaust stream's later replies add nothing). */
    boolean emitOnce() {
        boolean first = !emitted;
        emitted = true;
        return first;
    }

    /** The completion of this event's line (null before {@link AuditLog#write}). */
    CompletableFuture<Void> completion() {
        return onFile;
    }

    void completion(CompletableFuture<Void> c) {
        onFile = c;
    }

    void dropped(boolean d) {
        dropped = d;
    }

    /** Completes once its line is on file (or dropped, with onFull: drop); exceptionally if it cannot be written. */
    public CompletionStage<Void> written() {
        return onFile;
    }

    /** True once its line is on file, or was dropped by onFull: drop (then nothing waits for it). */
    public boolean onFile() {
        return onFile != null && onFile.isDone() && !onFile.isCompletedExceptionally();
    }

    /** True if its line was dropped (onFull: drop with the queue full). */
    public boolean dropped() {
        return dropped;
    }

    /** Appends the members of its JSON object, after "seq" (the writer reuses one buffer). */
    void appendMembers(LineBuffer b) {
        b.ascii("\"t\":\"").time(epochMilli).ascii("\",").bytes(who).ascii(",").bytes(what);
        if (documents >= 0) {
            b.ascii(",\"docs\":").number(documents);
        }
        b.ascii(",\"code\":").number(code);
    }
}
