package dev.fleproxy.rewrite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.rewrite.bson.EnvelopeBinary;
import dev.fleproxy.server.ReplyDecision;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.server.Requests;
import dev.fleproxy.testing.InMemoryKeys;
import dev.fleproxy.testing.WireIO;
import dev.fleproxy.wire.DocumentSequence;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.WireMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The encryption filter on single messages, with keys from an in-memory key source (the
 * integration tests use the real KMS): its policy, its keys and the helpers its tests share.
 * Each test class gets a resolver of its own.
 */
abstract class FilterFixture {
    static final UUID AES_KEY = InMemoryKeys.AES_KEY;
    static final UUID ARIA_KEY = InMemoryKeys.ARIA_KEY;
    static final String SSN = "123-45-6789";

    /** Every key the KMS was asked for. */
    static final java.util.Set<UUID> FETCHED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    static KeyResolver RESOLVER;

    static final Policy POLICY = InMemoryKeys.policy("test");

    final EncryptionFilter filter = new EncryptionFilter(() -> POLICY, RESOLVER, Duration.ofMillis(5000));

    @BeforeAll
    static void keysInMemory() {
        RESOLVER = InMemoryKeys.resolver(FETCHED, KeyResolver.Settings.DEFAULT);
        // the filter reads keys from memory only: have them there, as the proxy does at start-up
        RESOLVER.prefetch(List.of(AES_KEY, ARIA_KEY));
    }

    @AfterAll
    static void close() {
        RESOLVER.close();
    }

    /** The admission gate, then the filter, as the session runs them while collections are encrypted. */
    RequestDecision decide(WireMessage m) {
        dev.fleproxy.server.Request r = Requests.of(m, filter);
        RequestDecision admitted = new dev.fleproxy.admission.AdmissionGate(() -> POLICY).onRequest(r);
        return admitted instanceof RequestDecision.Pass ? filter.onRequest(r) : admitted;
    }

    static OpMsg command(String json, DocumentSequence... sequences) {
        return new OpMsg(0, BsonDocument.parse(json), List.of(sequences));
    }

    static OpMsg rewritten(RequestDecision d) {
        return OpMsg.parse(assertInstanceOf(RequestDecision.Replace.class, d).frame());
    }

    static BsonDocument replied(ReplyDecision d) {
        return OpMsg.parse(assertInstanceOf(ReplyDecision.Replace.class, d).frame()).body();
    }

    static BsonDocument refusal(RequestDecision d) {
        return ((OpMsg) assertInstanceOf(RequestDecision.Refuse.class, d).reply()).body();
    }

    static byte[] envelope(BsonValue v) {
        byte[] env = EnvelopeBinary.unwrap(v);
        assertNotNull(env, "expected an envelope, got " + v);
        assertEquals(0x82, env[0] & 0xFF, "format byte");
        return env;
    }

    static boolean containsPlaintext(OpMsg m, String plaintext) {
        String bytes = new String(WireIO.encode(m, 1, 0), StandardCharsets.ISO_8859_1);
        return bytes.contains(plaintext);
    }
}
