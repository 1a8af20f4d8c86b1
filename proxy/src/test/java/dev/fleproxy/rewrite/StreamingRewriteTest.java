package dev.fleproxy.rewrite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.crypto.Envelopes;
import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.KeySource;
import dev.fleproxy.keys.KeyState;
import dev.fleproxy.keys.ResolvedKey;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.policy.PolicyParser;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.bson.EnvelopeBinary;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.CollectionContexts;
import dev.fleproxy.rewrite.paths.ReadShape;
import dev.fleproxy.rewrite.read.ReplyDecryptor;
import dev.fleproxy.rewrite.write.DocumentEncryptor;
import dev.fleproxy.server.ReplyOutcome;
import dev.fleproxy.testing.WireIO;
import dev.fleproxy.wire.BsonCursor;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpMsgView;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.bson.BSONException;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The byte-streaming rewriters on their own: documents encrypted in one pass from their bytes
 * (only policy fields change, every other byte is copied), replies decrypted the same way back to
 * the very values written, and the in-place BSON walk agreeing with the driver's decoder on every
 * type while refusing malformed input.
 */
class StreamingRewriteTest {
    private static final UUID KEY = UUID.fromString("11111111-2222-3333-4444-555555555555");
    private static final KeyResolver RESOLVER = new KeyResolver(new KeySource() {
        @Override
        public ResolvedKey fetch(UUID id) {
            byte[] material = new byte[32];
            Arrays.fill(material, (byte) 9);
            return new ResolvedKey(new DataKey(id, CipherAlgorithm.AES, material), KeyState.ACTIVE, "1", Instant.now());
        }

        @Override
        public String describe() {
            return "test keys";
        }
    }, KeyResolver.Settings.DEFAULT);
    private static final Envelopes ENVELOPES = new Envelopes();

    private static final Policy POLICY = PolicyParser.parse(Map.of(
            "hr.people", Map.of("key", KEY.toString(), "fields", Map.of(
                    "ssn", Map.of("deterministic", true),
                    "address.street", Map.of(),
                    "items.price", Map.of(),
                    "phones", Map.of())),
            "hr.all", Map.of("key", KEY.toString(), "fields", "*")), 0, "test");

    @BeforeAll
    static void keysInMemory() {
        RESOLVER.prefetch(List.of(KEY));
    }

    @AfterAll
    static void close() {
        RESOLVER.close();
    }

    private static CollectionContext ctx(String ns) {
        CollectionPolicy cp = POLICY.get(ns);
        return new CollectionContexts(() -> POLICY).of(cp, new CollectionKeys(RESOLVER, ENVELOPES, false, Duration.ofMillis(1000)));
    }

    private static BsonDocument person() {
        List<BsonValue> everyType = new ArrayList<>(EncryptedBsonValuesTest.EVERY_TYPE);
        BsonDocument doc = new BsonDocument("_id", new BsonInt32(1))
                .append("name", new BsonString("Ann"))
                .append("ssn", new BsonString("123-45-6789"))
                .append("address", new BsonDocument("street", new BsonDocument("no", new BsonInt32(1)))
                        .append("city", new BsonString("Oslo")))
                .append("items", new BsonArray(List.of(
                        new BsonDocument("price", new BsonInt64(5)).append("sku", new BsonString("a")),
                        new BsonArray(List.of(new BsonDocument("price", new BsonString("nested")))),
                        new BsonString("not a document"))))
                .append("phones", new BsonArray(List.of(new BsonString("+47 1"), new BsonString("+47 2"))))
                .append("0", new BsonDocument("ssn", new BsonString("under a digit name")))
                .append("other", new BsonArray(everyType));
        return doc;
    }

    @Test
    void onlyPolicyFieldsChangeAndEveryOtherByteIsCopied() {
        BsonDocument in = person();
        BsonDocument out = DocumentEncryptor.encryptDocument(in, ctx("hr.people"));
        assertTrue(out instanceof RawBsonDocument);
        assertEquals(in.get("_id"), out.get("_id"));
        assertEquals(in.get("name"), out.get("name"));
        assertEquals(in.get("other"), out.get("other"), "values of every type outside the policy, unchanged");
        assertEquals(in.getDocument("address").get("city"), out.getDocument("address").get("city"));
        for (BsonValue v : new BsonValue[] {out.get("ssn"), out.getDocument("address").get("street"), out.get("phones"),
                out.getArray("items").get(0).asDocument().get("price"),
                out.getArray("items").get(1).asArray().get(0).asDocument().get("price"),
                out.getDocument("0").get("ssn")}) {
            assertNotNull(EnvelopeBinary.unwrap(v), "an envelope: " + v);
        }
        assertEquals(new BsonString("a"), out.getArray("items").get(0).asDocument().get("sku"));
        assertEquals(new BsonString("not a document"), out.getArray("items").get(2));

        BsonDocument plain = new BsonDocument("_id", new BsonInt32(2)).append("name", new BsonString("n"));
        assertSame(plain, DocumentEncryptor.encryptDocument(plain, ctx("hr.people")), "nothing to encrypt: the same object");
    }

    @Test
    void underEveryFieldEachTopLevelValueButIdIsOneEnvelope() {
        BsonDocument out = DocumentEncryptor.encryptDocument(person(), ctx("hr.all"));
        for (String k : out.keySet()) {
            assertEquals(!k.equals("_id"), EnvelopeBinary.unwrap(out.get(k)) != null, k);
        }
    }

    @Test
    void repliesDecryptBackToTheValuesWritten() {
        for (String ns : new String[] {"hr.people", "hr.all"}) {
            List<BsonValue> written = new ArrayList<>();
            List<BsonValue> stored = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                BsonDocument d = person().append("_id", new BsonInt32(i));
                written.add(d);
                stored.add(DocumentEncryptor.encryptDocument(d, ctx(ns)));
            }
            BsonDocument body = new BsonDocument("cursor", new BsonDocument("firstBatch", new BsonArray(stored))
                    .append("id", new BsonInt64(0)).append("ns", new BsonString(ns))).append("ok", new BsonInt32(1));
            BsonDocument decrypted = decryptReply(body, ns);
            assertEquals(new BsonArray(written), decrypted.getDocument("cursor").getArray("firstBatch"), ns);
            assertEquals(body.getDocument("cursor").get("id"), decrypted.getDocument("cursor").get("id"));
        }
    }

    @Test
    void findAndModifyValuesAndDistinctValuesAreDecrypted() {
        CollectionContext c = ctx("hr.people");
        BsonDocument doc = person();
        BsonDocument value = new BsonDocument("lastErrorObject", new BsonDocument("n", new BsonInt32(1)))
                .append("value", DocumentEncryptor.encryptDocument(doc, c)).append("ok", new BsonInt32(1));
        assertEquals(doc, decryptReply(value, "hr.people").getDocument("value"));

        BsonValue e1 = c.encrypt(new dev.fleproxy.policy.FieldRule("ssn", false), new BsonString("x"));
        BsonDocument distinct = new BsonDocument("values", new BsonArray(List.of(e1, e1)))
                .append("ok", new BsonInt32(1));
        assertEquals(new BsonArray(List.of(new BsonString("x"), new BsonString("x"))),
                decryptReply(distinct, "hr.people").getArray("values"));
        // a plaintext value of a policy field is not passed off as decrypted
        BsonDocument plain = new BsonDocument("values", new BsonArray(List.of(e1, new BsonString("plain"))))
                .append("ok", new BsonInt32(1));
        Refusal r = assertThrows(Refusal.class, () -> decryptReply(plain, "hr.people"));
        assertTrue(r.getMessage().contains("field 'ssn' of a returned document holds a value that is not an envelope"),
                r.getMessage());
    }

    @Test
    void aValueThatDecryptsToNoBsonFailsTheReply() {
        // well authenticated, but not a value of its type: a document whose length lies
        byte[] env = ENVELOPES.cipher(RESOLVER.forEncryption(KEY), dev.fleproxy.crypto.CipherSuite.AES_GCM, false)
                .encrypt((byte) 0x03, new byte[] {9, 0, 0, 0, 0}, dev.fleproxy.crypto.Envelope.context("hr.people", "ssn"));
        BsonDocument body = new BsonDocument("value", new BsonDocument("ssn", EnvelopeBinary.wrap(env, (byte) 0)))
                .append("ok", new BsonInt32(1));
        Refusal r = assertThrows(Refusal.class, () -> decryptReply(body, "hr.people"));
        assertTrue(r.getMessage().contains("field 'ssn' decrypted to no valid BSON value"), r.getMessage());
    }

    @Test
    void errorRepliesAndRepliesWithoutEnvelopesAreLeftAlone() {
        assertEquals(null, decryptFrame(new BsonDocument("ok", new BsonInt32(0)).append("errmsg", new BsonString("e")),
                "hr.people"));
        assertEquals(null, decryptFrame(new BsonDocument("cursor", new BsonDocument("firstBatch",
                new BsonArray(List.of(new BsonDocument("_id", new BsonInt32(1)))))).append("ok", new BsonInt32(1)),
                "hr.people"));
    }

    @Test
    void whatTheDecryptorCountsIsWhatTheDecryptedReplySays() {
        // the audit trail takes the decryptor's count instead of reading the reply again (issue 43)
        CollectionContext c = ctx("hr.people");
        List<BsonValue> stored = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            stored.add(DocumentEncryptor.encryptDocument(person().append("_id", new BsonInt32(i)), c));
        }
        BsonDocument cursor = new BsonDocument("cursor", new BsonDocument("nextBatch", new BsonArray(stored))
                .append("id", new BsonInt64(7)).append("ns", new BsonString("hr.people"))).append("ok", new BsonDouble(1));
        BsonDocument value = new BsonDocument("lastErrorObject", new BsonDocument("n", new BsonInt32(1)))
                .append("value", stored.get(0)).append("ok", new BsonInt32(1));
        for (BsonDocument body : List.of(cursor, value)) {
            Frame in = new Frame(Unpooled.wrappedBuffer(WireIO.encode(new OpMsg(0, body), 5, 4)));
            CollectionKeys keys = new CollectionKeys(RESOLVER, ENVELOPES, false, Duration.ofMillis(1000));
            ReadShape shape = c.paths.readShape();
            ReplyDecryptor d = new ReplyDecryptor(keys, shape, shape.root, false);
            Frame out = d.decrypt(OpMsgView.of(in), ByteBufAllocator.DEFAULT, keys);
            try {
                ReplyOutcome read = ReplyOutcome.of(OpMsgView.of(out).bodyBytes());
                assertEquals(body == cursor ? 3 : 1, d.returned(), body.toJson());
                assertEquals(read, ReplyOutcome.returned(d.returned()), body.toJson());
            } finally {
                out.release();
            }
        }
    }

    @Test
    void aReplyOutcomeIsReadInPlace() {
        assertEquals(new ReplyOutcome(0, 2), outcome(new BsonDocument("n", new BsonInt32(2)).append("ok", new BsonInt32(1))));
        assertEquals(new ReplyOutcome(0, 0), outcome(new BsonDocument("value", new org.bson.BsonNull()).append("ok", new BsonDouble(1))));
        assertEquals(new ReplyOutcome(11000, 0), outcome(new BsonDocument("n", new BsonInt32(0)).append("writeErrors",
                new BsonArray(List.of(new BsonDocument("index", new BsonInt32(0)).append("code", new BsonInt32(11000)))))
                .append("ok", new BsonInt32(1))));
        assertEquals(new ReplyOutcome(13, -1), outcome(new BsonDocument("ok", new BsonInt32(0)).append("code", new BsonInt32(13))
                .append("errmsg", new BsonString("unauthorized"))));
        assertEquals(new ReplyOutcome(-1, -1), outcome(new BsonDocument("ok", new BsonInt32(0))));
    }

    private static ReplyOutcome outcome(BsonDocument body) {
        org.bson.io.BasicOutputBuffer out = new org.bson.io.BasicOutputBuffer();
        new org.bson.codecs.BsonDocumentCodec().encode(new org.bson.BsonBinaryWriter(out), body,
                org.bson.codecs.EncoderContext.builder().build());
        return ReplyOutcome.of(out.toByteArray());
    }

    private static BsonDocument decryptReply(BsonDocument body, String ns) {
        Frame out = decryptFrame(body, ns);
        assertNotNull(out, "something was decrypted");
        try {
            return OpMsg.parse(out).body();
        } finally {
            out.release();
        }
    }

    private static Frame decryptFrame(BsonDocument body, String ns) {
        Frame in = new Frame(Unpooled.wrappedBuffer(WireIO.encode(new OpMsg(0, body), 5, 4)));
        CollectionKeys keys = new CollectionKeys(RESOLVER, ENVELOPES, false, Duration.ofMillis(1000));
        ReadShape shape = ctx(ns).paths.readShape();
        boolean distinct = body.containsKey("values");
        Frame out = new ReplyDecryptor(keys, shape, distinct ? shape.distinctValues("ssn") : shape.root, distinct)
                .decrypt(OpMsgView.of(in), ByteBufAllocator.DEFAULT, keys);
        if (out != null) {
            assertEquals(5, out.requestId());
            assertEquals(4, out.responseTo());
        }
        return out;
    }

    // ---- the in-place walk -------------------------------------------------------------------

    @Test
    void theCursorMeasuresEveryTypeAsTheDriverDoes() {
        BsonDocument doc = new BsonDocument();
        int i = 0;
        for (BsonValue v : EncryptedBsonValuesTest.EVERY_TYPE) {
            doc.append("f" + i++, v);
        }
        doc.append("cws", new org.bson.BsonJavaScriptWithScope("x", new BsonDocument("a", new BsonInt32(1))));
        doc.append("sym", new org.bson.BsonSymbol("s")).append("undef", new org.bson.BsonUndefined())
                .append("ptr", new org.bson.BsonDbPointer("db.c", new org.bson.types.ObjectId()));
        RawBsonDocument raw = dev.fleproxy.wire.BsonBytes.toRaw(doc);
        byte[] bytes = new byte[raw.getByteBuffer().remaining()];
        raw.getByteBuffer().get(bytes);
        BsonCursor c = new BsonCursor(bytes, 0, bytes.length);
        List<String> names = new ArrayList<>();
        while (c.next()) {
            names.add(c.name());
            BsonCursor.validate(c.type, bytes, c.valueStart, c.valueEnd, 10);
        }
        assertEquals(new ArrayList<>(doc.keySet()), names);
    }

    @Test
    void malformedBsonIsRefusedNotReadPastItsEnd() {
        byte[][] bad = {
            {5, 0, 0, 0},                                   // shorter than its own frame
            {9, 0, 0, 0, 2, 'a', 0, 0, 0},                  // a string cut short
            {14, 0, 0, 0, 2, 'a', 0, 2, 0, 0, 0, 'x', 'y', 0}, // a string not NUL-terminated
            {13, 0, 0, 0, 5, 'b', 0, -1, -1, -1, -1, 0, 0}, // a negative binary length
            {8, 0, 0, 0, 0x42, 'c', 0, 0},                  // an unknown type
            {6, 0, 0, 0, 10, 1},                            // no terminating NUL
            {12, 0, 0, 0, 3, 'd', 0, 99, 0, 0, 0, 0},       // a sub-document longer than its parent
        };
        for (byte[] b : bad) {
            assertThrows(BSONException.class, () -> {
                BsonCursor c = new BsonCursor(b, 0, b.length);
                while (c.next()) {
                    BsonCursor.validate(c.type, b, c.valueStart, c.valueEnd, 10);
                }
            }, Arrays.toString(b));
        }
    }
}
