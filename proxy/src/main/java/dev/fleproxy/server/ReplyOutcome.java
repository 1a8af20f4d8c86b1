package dev.fleproxy.server;

import dev.fleproxy.wire.BsonCursor;
import java.nio.charset.StandardCharsets;

/**
 * What a reply says of its command, for the audit trail: the code (0: ok; the error's code; the
 * first write error's) and how many documents it returned or counted (-1: none said, or not an ok
 * reply). A filter that writes a reply anew (the decrypting one) knows this as it writes, and hands it over with
 * the reply ({@link ReplyDecision#replace(dev.fleproxy.wire.Frame, ReplyOutcome)}), so the reply
 * is not copied and read again for it; any other reply is read once, in place ({@link #of}).
 */
public record ReplyOutcome(int code, long documents) {

    /** An ok reply that returned this many documents. */
    public static ReplyOutcome returned(long documents) {
        return new ReplyOutcome(0, documents);
    }

    private static final byte[] OK = "ok".getBytes(StandardCharsets.UTF_8);
    private static final byte[] CODE = "code".getBytes(StandardCharsets.UTF_8);
    private static final byte[] N = "n".getBytes(StandardCharsets.UTF_8);
    private static final byte[] CURSOR = "cursor".getBytes(StandardCharsets.UTF_8);
    private static final byte[] FIRST_BATCH = "firstBatch".getBytes(StandardCharsets.UTF_8);
    private static final byte[] NEXT_BATCH = "nextBatch".getBytes(StandardCharsets.UTF_8);
    private static final byte[] VALUE = "value".getBytes(StandardCharsets.UTF_8);
    private static final byte[] WRITE_ERRORS = "writeErrors".getBytes(StandardCharsets.UTF_8);

    /** Read in place from a reply's body bytes (nothing decoded): ok, code, n, value, a cursor's batch, writeErrors. */
    public static ReplyOutcome of(byte[] b) {
        BsonCursor c = new BsonCursor(b, 0, b.length);
        double ok = 0;
        int code = -1;
        int writeError = 0;
        long docs = -1;
        while (c.next()) {
            if (c.nameIs(OK)) {
                ok = c.numberValue();
            } else if (c.nameIs(CODE)) {
                code = (int) c.numberValue();
            } else if (c.nameIs(N) && !Double.isNaN(c.numberValue()) && docs < 0) {
                docs = (long) c.numberValue();
            } else if (c.nameIs(VALUE)) {
                docs = c.type == BsonCursor.NULL ? 0 : 1;
            } else if (c.nameIs(CURSOR) && c.type == BsonCursor.DOCUMENT) {
                BsonCursor inner = new BsonCursor(b, c.valueStart, c.valueEnd);
                while (inner.next()) {
                    if (inner.type == BsonCursor.ARRAY && (inner.nameIs(FIRST_BATCH) || inner.nameIs(NEXT_BATCH))) {
                        docs = count(b, inner);
                    }
                }
            } else if (c.nameIs(WRITE_ERRORS) && c.type == BsonCursor.ARRAY && writeError == 0) {
                BsonCursor first = new BsonCursor(b, c.valueStart, c.valueEnd);
                if (first.next() && first.type == BsonCursor.DOCUMENT) {
                    BsonCursor err = new BsonCursor(b, first.valueStart, first.valueEnd);
                    writeError = err.find(CODE) ? (int) err.numberValue() : -1;
                }
            }
        }
        return ok == 1.0 ? new ReplyOutcome(writeError, docs) : new ReplyOutcome(code, -1);
    }

    private static long count(byte[] b, BsonCursor array) {
        BsonCursor e = new BsonCursor(b, array.valueStart, array.valueEnd);
        long n = 0;
        while (e.next()) {
            n++;
        }
        return n;
    }
}
