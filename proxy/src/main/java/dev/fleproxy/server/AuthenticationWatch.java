package dev.fleproxy.server;

import dev.fleproxy.protocol.CommandTable;
import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpReply;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Watches each connection's authentication pass, to learn the MongoDB user the server confirmed
 * ({@link Peer#authenticated}): a SCRAM conversation (SCRAM-SHA-1 or SCRAM-SHA-256, begun by
 * saslStart or by the speculativeAuthenticate of a hello) counts once the server's final reply
 * says {@code done: true, ok: 1}, and only then; the user is the one the client's first message
 * names, which the server's proof binds. A new attempt clears the user first, so a failed one
 * leaves none; logout clears it too. MONGODB-X509 is refused: the proxy terminates the client's
 * TLS, so the server would see the proxy's own certificate (or none), never the client's.
 */
public final class AuthenticationWatch implements MessageFilter {
    /** The commands this filter reads (and hello, for its speculativeAuthenticate). */
    private static final java.util.Set<String> WATCHED = java.util.Set.of("saslStart", "saslContinue", "authenticate",
            "logout");

    /** A conversation under way: the user its first message names, in the database it runs in. */
    record Conversation(String user, String db) {
    }

    @Override
    public RequestDecision onRequest(Request request) {
        String cmd = request.commandName();
        if (cmd == null || !WATCHED.contains(cmd) && !CommandTable.isHello(cmd)) {
            return RequestDecision.PASS; // every other command passes unread: this filter is on every request's path
        }
        BsonDocument body = request.msg() != null ? request.msg().body()
                : request.query() != null && request.query().isCommand() ? request.query().command() : null;
        if (body == null) {
            return RequestDecision.PASS;
        }
        String db = request.msg() != null ? string(body, "$db") : request.query().database();
        switch (cmd) {
            case "saslStart" -> {
                return start(request, body, db);
            }
            case "authenticate" -> {
                request.peer().authenticated(null);
                return "MONGODB-X509".equals(string(body, "mechanism")) ? refuseX509(request) : RequestDecision.PASS;
            }
            case "saslContinue" -> {
                request.expectReply(request.peer().conversation());
                return RequestDecision.PASS;
            }
            case "logout" -> {
                request.peer().authenticated(null);
                return RequestDecision.PASS;
            }
            default -> {
                if (CommandTable.isHello(cmd) && body.isDocument("speculativeAuthenticate")) {
                    BsonDocument spec = body.getDocument("speculativeAuthenticate");
                    if ("MONGODB-X509".equals(string(spec, "mechanism"))) {
                        return refuseX509(request);
                    }
                    return start(request, spec, spec.isString("db") ? string(spec, "db") : db);
                }
                return RequestDecision.PASS;
            }
        }
    }

    private static RequestDecision start(Request request, BsonDocument sasl, String db) {
        request.peer().authenticated(null); // a new attempt replaces what came before; a failed one leaves none
        String mechanism = string(sasl, "mechanism");
        if ("MONGODB-X509".equals(mechanism)) {
            return refuseX509(request);
        }
        String user = mechanism != null && mechanism.startsWith("SCRAM-SHA-") && sasl.isBinary("payload")
                ? ScramFirstMessage.user(sasl.getBinary("payload").getData()) : null;
        Conversation c = user == null || db == null ? null : new Conversation(user, db);
        request.peer().converse(c);
        if (c != null) {
            request.expectReply(c);
        }
        return RequestDecision.PASS;
    }

    private static RequestDecision refuseX509(Request request) {
        return RequestDecision.refuse(ErrorReplies.replyTo(request.frame(), ProxyError.AUTHENTICATION_NOT_SUPPORTED,
                "MONGODB-X509 authentication cannot pass this proxy: it terminates the client's TLS, so the server "
                        + "would never see the client's certificate; authenticate with SCRAM, and let the proxy "
                        + "identify certificates itself (identities: with tls.clientAuth)"));
    }

    @Override
    public ReplyDecision onReply(Reply reply, Object state) {
        if (!(state instanceof Conversation c) || c != reply.peer().conversation()) {
            return ReplyDecision.PASS; // not the conversation under way (a newer attempt replaced it)
        }
        BsonDocument body = body(reply);
        if (body == null) {
            return ReplyDecision.PASS;
        }
        BsonDocument result = body.isDocument("speculativeAuthenticate") ? body.getDocument("speculativeAuthenticate")
                : body;
        boolean ok = body.isNumber("ok") && body.getNumber("ok").doubleValue() == 1.0;
        if (ok && result.isBoolean("done") && result.getBoolean("done").getValue()) {
            reply.peer().authenticated(c.user() + "@" + c.db());
            reply.peer().converse(null);
        } else if (!ok || !result.containsKey("conversationId")) {
            // refused, or a hello whose speculative attempt the server did not take up: no user
            reply.peer().converse(null);
        }
        return ReplyDecision.PASS;
    }

    private static BsonDocument body(Reply reply) {
        if (reply.opCode() == OpCode.OP_MSG) {
            return reply.msg().body();
        }
        if (reply.opCode() == OpCode.OP_REPLY) {
            List<BsonDocument> docs = OpReply.parse(reply.frame()).documents();
            return docs.isEmpty() ? null : docs.get(0);
        }
        return null;
    }

    private static String string(BsonDocument d, String name) {
        BsonValue v = d.get(name);
        return v != null && v.isString() ? v.asString().getValue() : null;
    }

    /** The username of a SCRAM client-first message ("n,,n=user,r=nonce"), unescaped; null if malformed. */
    static final class ScramFirstMessage {
        private ScramFirstMessage() {
        }

        static String user(byte[] payload) {
            String m = new String(payload, StandardCharsets.UTF_8);
            // gs2-header: a channel-binding flag and an optional authzid, each ended by a comma
            int first = m.indexOf(',');
            int second = first < 0 ? -1 : m.indexOf(',', first + 1);
            if (second < 0) {
                return null;
            }
            String bare = m.substring(second + 1);
            if (!bare.startsWith("n=")) {
                return null;
            }
            int end = bare.indexOf(',');
            String name = end < 0 ? bare.substring(2) : bare.substring(2, end);
            if (name.isEmpty() || name.matches(".*=(?!2C|3D).*")) {
                return null;
            }
            return name.replace("=2C", ",").replace("=3D", "=");
        }
    }
}
