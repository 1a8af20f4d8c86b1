package dev.fleproxy.server;

import java.util.Set;
import org.bson.BsonDocument;

/**
 * The pure part of handshake rewriting, on documents. A hello reply must not tell a driver
 * about other servers (it would connect to them and bypass the proxy), nor offer compression
 * (the proxy has to read every message). Everything else, including SCRAM's
 * {@code saslSupportedMechs} and {@code speculativeAuthenticate}, passes untouched.
 */
public final class HelloRewriter {
    /**
     * Reply fields that reveal the replica set or let a driver discover its members. Without
     * setName/isreplicaset a replica-set member looks like a standalone; a mongos reply
     * ({@code msg: "isdbgrid"}) has none of these and keeps its mongos identity.
     */
    static final Set<String> TOPOLOGY_FIELDS = Set.of(
            "hosts", "passives", "arbiters", "primary", "me", "setName", "setVersion", "electionId",
            "tags", "hidden", "arbiterOnly", "passive", "isreplicaset");

    private HelloRewriter() {
    }

    /** The client's hello without {@code compression}; null if there was nothing to remove. */
    public static BsonDocument rewriteRequest(BsonDocument hello) {
        if (!hello.containsKey("compression")) {
            return null;
        }
        BsonDocument out = new BsonDocument();
        hello.forEach((k, v) -> {
            if (!k.equals("compression")) {
                out.append(k, v);
            }
        });
        return out;
    }

    /**
     * With encryption on, messages grow on their way through (every encrypted field gains about 50–70
     * bytes): drivers are told of a smaller message limit, so that a batch they cut to fit still
     * fits once encrypted. The proxy still refuses, clearly, anything that grows past the real one.
     */
    public static final int ENCRYPTING_MAX_MESSAGE_SIZE = 40_000_000;

    /** The server's hello reply without topology or compression fields; null if unchanged. */
    public static BsonDocument rewriteReply(BsonDocument reply) {
        return rewriteReply(reply, false);
    }

    public static BsonDocument rewriteReply(BsonDocument reply, boolean encrypting) {
        return rewriteReply(reply, encrypting, false);
    }

    /**
     * @param asRouter the proxy follows a replica set's primary across elections: it says it is a
     *                 mongos ({@code msg: "isdbgrid"}), as it behaves like one, so drivers use
     *                 retryable writes and transactions with it, which they do not with the
     *                 standalone a member would otherwise look like once its topology is removed
     */
    public static BsonDocument rewriteReply(BsonDocument reply, boolean encrypting, boolean asRouter) {
        boolean router = asRouter && reply.containsKey("maxWireVersion") && !reply.containsKey("msg");
        boolean changes = router;
        for (String key : reply.keySet()) {
            if (hidden(key)) {
                changes = true;
                break;
            }
        }
        boolean cap = encrypting && reply.isNumber("maxMessageSizeBytes")
                && reply.getNumber("maxMessageSizeBytes").longValue() > ENCRYPTING_MAX_MESSAGE_SIZE;
        if (!changes && !cap) {
            return null;
        }
        BsonDocument out = new BsonDocument();
        reply.forEach((k, v) -> {
            if (!hidden(k)) {
                out.append(k, cap && k.equals("maxMessageSizeBytes")
                        ? new org.bson.BsonInt32(ENCRYPTING_MAX_MESSAGE_SIZE) : v);
            }
        });
        if (router) {
            out.append("msg", new org.bson.BsonString("isdbgrid"));
        }
        return out;
    }

    private static boolean hidden(String key) {
        return TOPOLOGY_FIELDS.contains(key) || key.equals("compression");
    }
}
