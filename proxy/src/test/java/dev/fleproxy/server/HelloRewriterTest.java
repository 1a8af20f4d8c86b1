package dev.fleproxy.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

class HelloRewriterTest {

    @Test
    void stripsCompressionFromTheRequestAndKeepsEverythingElseInOrder() {
        BsonDocument hello = new BsonDocument("isMaster", new BsonInt32(1))
                .append("helloOk", BsonBoolean.TRUE)
                .append("compression", new BsonArray(java.util.List.of(new BsonString("zstd"))))
                .append("saslSupportedMechs", new BsonString("admin.app"))
                .append("speculativeAuthenticate", new BsonDocument("saslStart", new BsonInt32(1)));
        BsonDocument out = HelloRewriter.rewriteRequest(hello);
        assertEquals(java.util.List.of("isMaster", "helloOk", "saslSupportedMechs", "speculativeAuthenticate"),
                java.util.List.copyOf(out.keySet()));
        assertEquals(hello.get("speculativeAuthenticate"), out.get("speculativeAuthenticate"));
        assertNull(HelloRewriter.rewriteRequest(new BsonDocument("hello", new BsonInt32(1))), "nothing to strip");
    }

    @Test
    void hidesTheReplicaSetButKeepsAuthAndLimits() {
        BsonDocument reply = new BsonDocument("isWritablePrimary", BsonBoolean.TRUE)
                .append("hosts", new BsonArray(java.util.List.of(new BsonString("10.0.0.1:27017"))))
                .append("passives", new BsonArray())
                .append("arbiters", new BsonArray())
                .append("setName", new BsonString("rs0"))
                .append("me", new BsonString("10.0.0.1:27017"))
                .append("primary", new BsonString("10.0.0.1:27017"))
                .append("compression", new BsonArray(java.util.List.of(new BsonString("zlib"))))
                .append("saslSupportedMechs", new BsonArray(java.util.List.of(new BsonString("SCRAM-SHA-256"))))
                .append("speculativeAuthenticate", new BsonDocument("done", BsonBoolean.FALSE))
                .append("maxBsonObjectSize", new BsonInt32(16777216))
                .append("ok", new BsonInt32(1));
        BsonDocument out = HelloRewriter.rewriteReply(reply);
        assertEquals(java.util.List.of("isWritablePrimary", "saslSupportedMechs", "speculativeAuthenticate",
                "maxBsonObjectSize", "ok"), java.util.List.copyOf(out.keySet()));
        BsonDocument mongos = new BsonDocument("ismaster", BsonBoolean.TRUE).append("msg", new BsonString("isdbgrid"));
        assertNull(HelloRewriter.rewriteReply(mongos), "a mongos reply passes as it is");
    }

    @Test
    void inFrontOfAReplicaSetTheProxyAnswersAsAMongos() {
        BsonDocument member = new BsonDocument("isWritablePrimary", BsonBoolean.TRUE)
                .append("setName", new BsonString("rs0"))
                .append("hosts", new BsonArray(java.util.List.of(new BsonString("10.0.0.1:27017"))))
                .append("logicalSessionTimeoutMinutes", new BsonInt32(30))
                .append("maxWireVersion", new BsonInt32(21));
        BsonDocument out = HelloRewriter.rewriteReply(member, false, true);
        assertEquals(new BsonString("isdbgrid"), out.get("msg"));
        assertNull(out.get("setName"));
        assertEquals(new BsonInt32(30), out.get("logicalSessionTimeoutMinutes"), "sessions: retryable writes");
        BsonDocument mongos = new BsonDocument("msg", new BsonString("isdbgrid")).append("maxWireVersion", new BsonInt32(21));
        assertNull(HelloRewriter.rewriteReply(mongos, false, true), "a mongos stays as it is");
        assertNull(HelloRewriter.rewriteReply(new BsonDocument("ok", new BsonInt32(0)), false, true),
                "an error reply is not a hello");
        assertNull(HelloRewriter.rewriteReply(member.clone().append("ok", new BsonInt32(1)), false, false)
                .get("msg"), "not in front of a replica set: a standalone");
    }

    @Test
    void aLoadBalancedHelloGoesUpAsIsMasterWithoutTheFlagAndComesBackAsAMongosWithItsServiceId() {
        BsonDocument hello = new BsonDocument("hello", new BsonInt32(1)).append("loadBalanced", BsonBoolean.TRUE)
                .append("client", new BsonDocument("application", new BsonDocument("name", new BsonString("app"))));
        BsonDocument up = HelloRewriter.rewriteRequest(hello);
        assertEquals(java.util.List.of("isMaster", "client"), java.util.List.copyOf(up.keySet()));
        BsonDocument stable = hello.clone().append("apiVersion", new BsonString("1"));
        assertEquals("hello", HelloRewriter.rewriteRequest(stable).getFirstKey(), "isMaster is not in API version 1");
        assertNull(HelloRewriter.rewriteRequest(new BsonDocument("hello", new BsonInt32(1))), "not load-balanced");

        org.bson.types.ObjectId id = new org.bson.types.ObjectId();
        BsonDocument reply = new BsonDocument("ismaster", BsonBoolean.TRUE).append("maxWireVersion", new BsonInt32(13))
                .append("connectionId", new BsonInt32(7)).append("ok", new BsonInt32(1));
        BsonDocument out = HelloRewriter.loadBalancedReply(reply, id, true);
        assertEquals(java.util.List.of("isWritablePrimary", "maxWireVersion", "connectionId", "ok", "msg", "serviceId"),
                java.util.List.copyOf(out.keySet()));
        assertEquals(new org.bson.BsonObjectId(id), out.get("serviceId"));
        assertEquals(new BsonString("isdbgrid"), out.get("msg"));
        assertEquals(BsonBoolean.TRUE, HelloRewriter.loadBalancedReply(reply, id, false).get("ismaster"),
                "asked as hello: the upstream's own field");
        assertNull(HelloRewriter.loadBalancedReply(new BsonDocument("ok", new BsonInt32(0)), id, true),
                "an error reply passes as it is");
    }
}
