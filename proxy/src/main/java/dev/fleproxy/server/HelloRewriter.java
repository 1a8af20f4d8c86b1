package dev.fleproxy.server;

import java.util.Set;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.types.ObjectId;

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

    /** Whether the client's hello opens a load-balanced connection (the Load Balancer spec's handshake). */
    public static boolean loadBalanced(BsonDocument hello) {
        return hello.get("loadBalanced") instanceof BsonBoolean b && b.getValue();
    }

    /**
     * Whether a load-balanced hello goes upstream as {@code isMaster}: the server behind the proxy is
     * not behind a balancer, and the embedded backend knows no {@code hello}, while every server
     * answers {@code isMaster}; with a Stable API version {@code hello} stays (isMaster is not in
     * API version 1).
     */
    public static boolean asksAsIsMaster(BsonDocument hello) {
        return loadBalanced(hello) && !hello.containsKey("apiVersion") && "hello".equals(hello.getFirstKey());
    }

    /**
     * The client's hello as it goes upstream: without {@code compression}, and a load-balanced one
     * without {@code loadBalanced} (the proxy is the balancer's server, not the server behind it) and
     * as {@link #asksAsIsMaster isMaster}; null if there was nothing to change.
     */
    public static BsonDocument rewriteRequest(BsonDocument hello) {
        boolean balanced = hello.containsKey("loadBalanced");
        if (!hello.containsKey("compression") && !balanced) {
            return null;
        }
        boolean rename = asksAsIsMaster(hello);
        BsonDocument out = new BsonDocument();
        hello.forEach((k, v) -> {
            if (!k.equals("compression") && !k.equals("loadBalanced")) {
                out.append(rename && k.equals("hello") ? "isMaster" : k, v);
            }
        });
        return out;
    }

    /**
     * The reply to a load-balanced hello, from the upstream's (already rewritten by
     * {@link #rewriteReply(BsonDocument, boolean, boolean)}): a mongos behind a balancer, with this
     * proxy's {@code serviceId} (drivers in that mode need it, and clear their pool by it), and
     * {@code isWritablePrimary} for the {@code ismaster} of an upstream asked as isMaster; null for
     * an error reply (it passes as it is).
     */
    public static BsonDocument loadBalancedReply(BsonDocument reply, ObjectId serviceId, boolean askedAsIsMaster) {
        if (!reply.containsKey("maxWireVersion")) {
            return null;
        }
        BsonDocument out = new BsonDocument();
        reply.forEach((k, v) -> {
            if (askedAsIsMaster && k.equals("ismaster")) {
                out.append("isWritablePrimary", v);
            } else if (!k.equals("msg") && !k.equals("serviceId")) {
                out.append(k, v);
            }
        });
        out.append("msg", new BsonString("isdbgrid"));
        out.append("serviceId", new BsonObjectId(serviceId));
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
