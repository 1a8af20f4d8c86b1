package dev.fleproxy.audit;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the audit trail records of one request on an encrypted collection: when, which
 * connection and identity from where, the command and namespace, each policy field with what
 * happened to it (revealed, masked, refused, written), how many documents the answer held, and
 * the outcome code (0: ok). Never a value, a key or a query constant. Filled on the connection's
 * event loop, then handed to the {@link AuditLog} once.
 */
public final class AuditEvent {
    private final Instant at;
    private final long connection;
    private final String identity;
    private final String client;
    private final String command;
    private final String namespace;
    private final Map<String, String> fields = new LinkedHashMap<>();
    private long documents = -1;
    private int code;
    private boolean emitted;

    public AuditEvent(Instant at, long connection, String identity, String client, String command, String namespace) {
        this.at = at;
        this.connection = connection;
        this.identity = identity;
        this.client = client;
        this.command = command;
        this.namespace = namespace;
    }

    /** What happened to a policy field: revealed, masked (with its mask), refused, written. */
    public AuditEvent field(String path, String outcome) {
        fields.merge(path, outcome, (a, b) -> a.equals(b) ? a : a + "+" + b);
        return this;
    }

    public AuditEvent documents(long n) {
        documents = n;
        return this;
    }

    public AuditEvent code(int outcome) {
        code = outcome;
        return this;
    }

    public String identity() {
        return identity;
    }

    /** What happened to each field, in order (for the metrics by identity). */
    public java.util.Collection<String> outcomes() {
        return fields.values();
    }

    /** True the first time only: an event is written once (an exhaust stream's later replies add nothing). */
    boolean emitOnce() {
        boolean first = !emitted;
        emitted = true;
        return first;
    }

    /** The members of its JSON object, after "seq" (which the log numbers). */
    String members() {
        StringBuilder b = new StringBuilder(160);
        appendMembers(b);
        return b.toString();
    }

    /** Appends the members of its JSON object, after "seq" (the writer reuses one builder). */
    void appendMembers(StringBuilder b) {
        b.append("\"t\":").append(AuditLine.quote(at.toString()))
                .append(",\"conn\":").append(connection)
                .append(",\"identity\":").append(AuditLine.quote(identity))
                .append(",\"client\":").append(AuditLine.quote(client))
                .append(",\"cmd\":").append(AuditLine.quote(command))
                .append(",\"ns\":").append(AuditLine.quote(namespace))
                .append(",\"fields\":{");
        boolean first = true;
        for (Map.Entry<String, String> f : fields.entrySet()) {
            b.append(first ? "" : ",").append(AuditLine.quote(f.getKey())).append(':').append(AuditLine.quote(f.getValue()));
            first = false;
        }
        b.append('}');
        if (documents >= 0) {
            b.append(",\"docs\":").append(documents);
        }
        b.append(",\"code\":").append(code);
    }
}
