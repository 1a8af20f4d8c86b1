package dev.fleproxy.rewrite.read;

import dev.fleproxy.policy.Policy;
import dev.fleproxy.server.Request;
import java.util.Objects;
import org.bson.BsonValue;

/**
 * Who opened a cursor: the connection's identity under the policy's {@code identities:}
 * (anonymous without them) and the session ({@code lsid}, null outside one). A getMore or
 * killCursors is served only for the same identity in the same session, as mongod serves a cursor
 * only to the user and session that created it (docs/access.md, "Cursors"): an identity refused a
 * query must not read its answer through the cursor of one allowed it.
 */
public record CursorOwner(String identity, BsonValue lsid) {

    /** The owner a request would give the cursors it opens. */
    public static CursorOwner of(Request request, Policy p) {
        return new CursorOwner(request.peer().identity(p.identities()), lsid(request.msg()));
    }

    private static final byte[] LSID = "lsid".getBytes(java.nio.charset.StandardCharsets.UTF_8);

    /**
     * The request's lsid, found by name in the body's bytes and decoded apart (a value read in
     * place would keep the whole request's bytes alive with the record); null outside a session.
     */
    private static BsonValue lsid(dev.fleproxy.wire.OpMsgView msg) {
        msg.body(); // the body checked well-formed all the way down first (once per message), as for any decoding
        byte[] body = msg.bodyBytes();
        dev.fleproxy.wire.BsonCursor c = new dev.fleproxy.wire.BsonCursor(body, 0, msg.bodyLength());
        if (!c.find(LSID)) {
            return null;
        }
        if (c.type == dev.fleproxy.wire.BsonCursor.DOCUMENT) {
            return new org.bson.RawBsonDocument(body, c.valueStart, c.valueEnd - c.valueStart).toBsonDocument();
        }
        return msg.body().get("lsid"); // not a session's document: as the driver reads it
    }

    /** Why {@code other} may not use a cursor this owner opened, or null if it may. */
    String refuses(CursorOwner other) {
        if (!identity.equals(other.identity)) {
            return "was not opened by this connection's identity";
        }
        if (!Objects.equals(lsid, other.lsid)) {
            return lsid == null ? "was opened outside a session" : "was opened in another session";
        }
        return null;
    }
}
