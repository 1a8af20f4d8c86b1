package dev.fleproxy.protocol;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpReply;
import dev.fleproxy.wire.WireMessage;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;

/** Builds error replies shaped like the server's own, in the form the request expects. */
public final class ErrorReplies {
    private ErrorReplies() {
    }

    /** How much of a client's name an error quotes back. */
    private static final int QUOTED = 64;

    /**
     * A name the client chose (a command, an argument, a database), as an error quotes it: cut short,
     * NUL shown as a backslash and 0, and other control characters as {@code ?}, so the line stays printable.
     */
    public static String quoted(String name) {
        StringBuilder b = new StringBuilder(Math.min(name.length(), QUOTED) + 1);
        for (int i = 0; i < name.length() && i < QUOTED; i++) {
            char ch = name.charAt(i);
            b.append(ch == '\0' ? "\\0" : Character.isISOControl(ch) ? "?" : String.valueOf(ch));
        }
        return name.length() > QUOTED ? b.append('…').toString() : b.toString();
    }

    public static BsonDocument document(ProxyError error, String message) {
        return new BsonDocument("ok", new BsonDouble(0))
                .append("errmsg", new BsonString(ProxyError.PRODUCT + ": " + message))
                .append("code", new BsonInt32(error.code()))
                .append("codeName", new BsonString(error.codeName()));
    }

    /** The code of an error reply built here (0 if it has none), for the metrics' {@code code} label. */
    public static int codeOf(WireMessage reply) {
        BsonDocument doc = reply instanceof OpMsg m ? m.body()
                : reply instanceof OpReply r && !r.documents().isEmpty() ? r.documents().get(0) : null;
        return doc != null && doc.isNumber("code") ? doc.getNumber("code").intValue() : 0;
    }

    /** An OP_REPLY for a legacy OP_QUERY request, an OP_MSG for anything else. */
    public static WireMessage replyTo(Frame request, ProxyError error, String message) {
        BsonDocument doc = document(error, message);
        if (request.opCode() == OpCode.OP_QUERY) {
            return new OpReply(0, 0L, 0, List.of(doc));
        }
        return new OpMsg(0, doc);
    }
}
