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
    public static final Set<String> HELLO_COMMANDS = Set.of("hello", "isMaster", "ismaster");

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

    /** The server's hello reply without topology or compression fields; null if unchanged. */
    public static BsonDocument rewriteReply(BsonDocument reply) {
        boolean hides = false;
        for (String key : reply.keySet()) {
            if (hidden(key)) {
                hides = true;
                break;
            }
        }
        if (!hides) {
            return null;
        }
        BsonDocument out = new BsonDocument();
        reply.forEach((k, v) -> {
            if (!hidden(k)) {
                out.append(k, v);
            }
        });
        return out;
    }

    private static boolean hidden(String key) {
        return TOPOLOGY_FIELDS.contains(key) || key.equals("compression");
    }
}
