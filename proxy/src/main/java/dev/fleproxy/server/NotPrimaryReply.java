package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A reply that says its server is not (or no longer) the primary, or is shutting down: the
 * codes drivers treat as "state change" errors (server discovery and monitoring spec). Such a
 * reply is short; only replies under {@link #MAX_BYTES} are read for it, so the check costs a
 * large reply nothing.
 */
final class NotPrimaryReply {
    static final int MAX_BYTES = 4096;
    /** NotWritablePrimary, NotPrimaryNoSecondaryOk, NotPrimaryOrSecondary, LegacyNotPrimary,
     *  InterruptedDueToReplStateChange, PrimarySteppedDown, ShutdownInProgress, InterruptedAtShutdown. */
    static final Set<Integer> CODES = Set.of(10107, 13435, 13436, 10058, 11602, 189, 91, 11600);

    private NotPrimaryReply() {
    }

    /** The error's codeName (or code), if this reply is such an error; null otherwise. */
    static String of(Frame frame) {
        if (frame.opCode() != OpCode.OP_MSG || frame.length() > MAX_BYTES || OpMsg.isMoreToCome(frame)) {
            return null;
        }
        BsonDocument body;
        try {
            body = OpMsg.parse(frame).body();
        } catch (RuntimeException e) {
            return null; // the lane reports a broken reply as it does any other
        }
        BsonValue ok = body.get("ok");
        BsonValue code = body.get("code");
        if (ok == null || !ok.isNumber() || ok.asNumber().doubleValue() != 0 || code == null || !code.isNumber()
                || !CODES.contains(code.asNumber().intValue())) {
            return null;
        }
        return body.isString("codeName") ? body.getString("codeName").getValue() : "code " + code.asNumber().intValue();
    }
}
