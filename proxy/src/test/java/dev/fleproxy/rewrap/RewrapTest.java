package dev.fleproxy.rewrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import dev.fleproxy.backend.EmbeddedBackend;
import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.CipherSuite;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.crypto.Envelope;
import dev.fleproxy.crypto.FieldCipher;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldRule;
import dev.fleproxy.rewrite.bson.BsonValueBytes;
import dev.fleproxy.rewrite.bson.EnvelopeBinary;
import dev.fleproxy.testing.ProxyFixture;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

/**
 * Every category rewrap meets, on the real embedded backend through the Java driver, with keys
 * in memory: a v1 envelope becomes v2, a previous key's (3DES) and another suite's envelopes move
 * to the key and suite, plaintext is encrypted, current values and other fields are left alone,
 * and what cannot be opened (an unknown key, a tampered value) is skipped and counted.
 */
class RewrapTest {
    private static final SecureRandom RANDOM = new SecureRandom();
    static final String NS = "t.c";

    static DataKey key(CipherAlgorithm alg, int bytes) {
        byte[] m = new byte[bytes];
        RANDOM.nextBytes(m);
        return new DataKey(UUID.randomUUID(), alg, m);
    }

    static BsonBinary seal(FieldCipher fc, String path, BsonValue v) {
        BsonValueBytes b = BsonValueBytes.of(v);
        return EnvelopeBinary.wrap(fc.encrypt(b.type(), b.bytes(), Envelope.context(NS, path)), EnvelopeBinary.GENERIC);
    }

    static BsonValue open(DataKey key, String path, BsonValue stored) {
        byte[] env = EnvelopeBinary.unwrap(stored);
        Envelope.Header h = Envelope.parse(env);
        FieldCipher.Plaintext p = FieldCipher.create(key, h.suite(), h.deterministic()).decrypt(env,
                Envelope.context(NS, path));
        return new BsonValueBytes(p.bsonType(), p.value()).toBsonValue();
    }

    @Test
    void everyCategoryIsRewrittenOrSkippedAsItShouldBe() {
        DataKey aes = key(CipherAlgorithm.AES, 32);
        DataKey tdes = key(CipherAlgorithm.TRIPLE_DES, 24);
        DataKey stranger = key(CipherAlgorithm.AES, 32);
        CollectionPolicy cp = new CollectionPolicy(NS, aes.id(), List.of(tdes.id()), null, false,
                Map.of("name", new FieldRule("name", false), "tag", new FieldRule("tag", true)), EnvelopeBinary.GENERIC,
                false);
        FieldCipher current = FieldCipher.create(aes, CipherSuite.AES_GCM, false);
        FieldCipher currentDet = FieldCipher.create(aes, CipherSuite.AES_GCM, true);
        BsonString name = new BsonString("Ada");
        BsonString tag = new BsonString("blue");
        BsonValueBytes nb = BsonValueBytes.of(name);
        BsonBinary v1 = EnvelopeBinary.wrap(current.encryptLegacyV1(nb.type(), nb.bytes()), EnvelopeBinary.GENERIC);
        BsonBinary tampered = seal(current, "name", name);
        tampered.getData()[tampered.getData().length - 1] ^= 1;
        List<BsonDocument> docs = List.of(
                new BsonDocument("_id", new BsonInt32(1)).append("name", v1).append("tag", seal(currentDet, "tag", tag)),
                new BsonDocument("_id", new BsonInt32(2)).append("name",
                        seal(FieldCipher.create(tdes, CipherSuite.TDES_CBC_HMAC, false), "name", name))
                        .append("tag", seal(FieldCipher.create(tdes, CipherSuite.TDES_CBC_HMAC, true), "tag", tag)),
                new BsonDocument("_id", new BsonInt32(3)).append("name", name).append("tag", tag)
                        .append("note", new BsonString("not a policy field")),
                new BsonDocument("_id", new BsonInt32(4)).append("name", seal(current, "name", name))
                        .append("tag", seal(FieldCipher.create(aes, CipherSuite.AES_CBC_HMAC, true), "tag", tag)),
                new BsonDocument("_id", new BsonInt32(5)).append("name",
                        seal(FieldCipher.create(stranger, CipherSuite.AES_GCM, false), "name", name)),
                new BsonDocument("_id", new BsonInt32(6)).append("name", tampered));

        onBackend(docs, (coll, state) -> {
            Adoption adopt = new Adoption(cp, true, Set.of()); // --adopt-plaintext: _id 3 was written before the policy
            Supplier<DocumentRewrap> ciphers = () -> new DocumentRewrap(cp, aes, Map.of(aes.id(), aes, tdes.id(), tdes),
                    adopt);
            Rewrap.Result dry = run(coll, state, cp, ciphers, true);
            assertEquals(6, dry.examined());
            assertEquals(4, dry.rewritten());
            assertEquals("current 2, plaintext 2, v1 1, previous_key 2, other_suite 1, unknown_key 1, unreadable 1",
                    dry.fields());
            assertEquals(v1, coll.find(new BsonDocument("_id", new BsonInt32(1))).first().get("name"));
            assertNull(state.find().first(), "a dry run keeps no checkpoint");

            Rewrap.Result r = run(coll, state, cp, ciphers, false);
            assertEquals(dry.fields(), r.fields());
            assertEquals(2, r.skipped());
            assertEquals(List.of("adopted (plaintext): 1 document: 3", "left (unknown_key): 1 document: 5",
                    "left (unreadable): 1 document: 6"), r.listing());
            for (BsonDocument d : coll.find(new BsonDocument("_id", new BsonDocument("$lte", new BsonInt32(4))))) {
                for (String f : List.of("name", "tag")) {
                    Envelope.Header h = Envelope.parse(EnvelopeBinary.unwrap(d.get(f)));
                    assertEquals(Envelope.FORMAT_V2, h.format(), d.toJson());
                    assertEquals(CipherSuite.AES_GCM, h.suite());
                    assertEquals(f.equals("tag"), h.deterministic());
                    assertEquals(aes.id(), h.keyId());
                }
                assertEquals(name, open(aes, "name", d.get("name")));
                assertEquals(tag, open(aes, "tag", d.get("tag")));
            }
            BsonDocument three = coll.find(new BsonDocument("_id", new BsonInt32(3))).first();
            assertEquals(new BsonString("not a policy field"), three.get("note"));
            // deterministic: the same value under the same key gives the same envelope, whatever it came from
            assertArrayEquals(coll.find(new BsonDocument("_id", new BsonInt32(2))).first().getBinary("tag").getData(),
                    three.getBinary("tag").getData());
            assertEquals(docs.get(4).get("name"), coll.find(new BsonDocument("_id", new BsonInt32(5))).first().get("name"));
            assertEquals(tampered, coll.find(new BsonDocument("_id", new BsonInt32(6))).first().get("name"));
            BsonDocument saved = state.find().first();
            assertTrue(saved.getBoolean("finished").getValue());
            assertEquals(new BsonInt32(6), saved.get("lastId"));
        });
    }

    @Test
    void plantedValuesAreLeftAsTheyAreAndListedByIdUnlessAdopted() {
        DataKey aes = key(CipherAlgorithm.AES, 32);
        CollectionPolicy cp = new CollectionPolicy(NS, aes.id(), List.of(), null, false,
                Map.of("name", new FieldRule("name", false)), EnvelopeBinary.GENERIC, false);
        byte[] whole = seal(FieldCipher.create(aes, CipherSuite.AES_GCM, false), "name", new BsonString("x")).getData();
        List<BsonDocument> planted = List.of(
                new BsonDocument("_id", new BsonString("string")).append("name", new BsonString("planted")),
                new BsonDocument("_id", new BsonString("subdoc")).append("name", new BsonDocument("first", new BsonString("Ada"))),
                new BsonDocument("_id", new BsonString("zeros")).append("name", new BsonBinary(new byte[24])),
                new BsonDocument("_id", new BsonString("cut")).append("name",
                        new BsonBinary(java.util.Arrays.copyOf(whole, 10))));
        onBackend(planted, (coll, state) -> {
            Rewrap.Result r = run(coll, state, cp, ciphers(cp, aes, false), false);
            assertEquals(0, r.rewritten());
            assertEquals("plaintext_denied 1, not_adoptable 2, unreadable 1", r.fields());
            assertEquals(4, r.leftDocuments());
            assertEquals(List.of("left (plaintext_denied): 1 document: \"string\"",
                    "left (not_adoptable): 2 documents: \"subdoc\", \"zeros\"",
                    "left (unreadable): 1 document: \"cut\""), r.listing());
            for (BsonDocument d : planted) {
                assertEquals(d, coll.find(new BsonDocument("_id", d.get("_id"))).first(), "left exactly as planted");
            }
            BsonDocument listed = state.find().first().getDocument("counts").getDocument("listed");
            assertEquals(List.of(new BsonString("subdoc"), new BsonString("zeros")),
                    listed.getDocument("not_adoptable").getArray("ids").getValues());

            Rewrap.Result adopted = run(coll, state, cp, ciphers(cp, aes, true), false);
            assertEquals(1, adopted.rewritten());
            assertEquals(List.of("adopted (plaintext): 1 document: \"string\"",
                    "left (not_adoptable): 2 documents: \"subdoc\", \"zeros\"",
                    "left (unreadable): 1 document: \"cut\""), adopted.listing());
            assertEquals(new BsonString("planted"), open(aes, "name",
                    coll.find(new BsonDocument("_id", new BsonString("string"))).first().get("name")));
            for (BsonDocument d : planted.subList(1, 4)) {
                assertEquals(d, coll.find(new BsonDocument("_id", d.get("_id"))).first());
            }
        });
    }

    @Test
    void parallelBatchesAreCountedInIdOrderAndTheCheckpointEndsAtTheLast() {
        DataKey aes = key(CipherAlgorithm.AES, 32);
        CollectionPolicy cp = new CollectionPolicy(NS, aes.id(), List.of(), null, false,
                Map.of("name", new FieldRule("name", false)), EnvelopeBinary.GENERIC, false);
        List<BsonDocument> plain = new java.util.ArrayList<>();
        for (int i = 0; i < 300; i++) {
            plain.add(new BsonDocument("_id", new BsonInt32(i)).append("name", new BsonString("p" + i)));
        }
        onBackend(plain, (coll, state) -> {
            Rewrap.Result r = new Rewrap(coll, state, cp, ciphers(cp, aes, true), new Rewrap.Options(7, 0, false, false,
                    1, 4), new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), false).run();
            assertEquals(300, r.examined());
            assertEquals(300, r.rewritten());
            // the first 100 in _id order, whichever batch finished first
            String listing = r.listing().get(0);
            assertTrue(listing.startsWith("adopted (plaintext): 300 documents: 0, 1, 2, 3, 4, 5, 6, 7, 8,"), listing);
            assertTrue(listing.contains(", 98, 99, … and 200 more"), listing);
            for (BsonDocument d : coll.find()) {
                int i = d.getInt32("_id").getValue();
                assertEquals(new BsonString("p" + i), open(aes, "name", d.get("name")));
            }
            BsonDocument saved = state.find().first();
            assertEquals(new BsonInt32(299), saved.get("lastId"));
            assertEquals(300, saved.getDocument("counts").getInt64("examined").getValue());
        });
    }

    private static Supplier<DocumentRewrap> ciphers(CollectionPolicy cp, DataKey key, boolean adoptPlaintext) {
        return () -> new DocumentRewrap(cp, key, Map.of(key.id(), key), new Adoption(cp, adoptPlaintext, Set.of()));
    }

    private static Rewrap.Result run(MongoCollection<BsonDocument> coll, MongoCollection<BsonDocument> state,
                                     CollectionPolicy cp, Supplier<DocumentRewrap> ciphers, boolean dryRun) {
        return new Rewrap(coll, state, cp, ciphers, new Rewrap.Options(2, 0, dryRun, false, 1, 2),
                new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8), false).run();
    }

    /** The documents in t.c of a fresh embedded backend, and its checkpoint collection. */
    private static void onBackend(List<BsonDocument> docs,
                                  BiConsumer<MongoCollection<BsonDocument>, MongoCollection<BsonDocument>> body) {
        EmbeddedBackend backend = EmbeddedBackend.start("127.0.0.1", 0, null);
        try (MongoClient c = ProxyFixture.client("mongodb://127.0.0.1:" + backend.address().getPort(), b -> { })) {
            MongoCollection<BsonDocument> coll = c.getDatabase("t").getCollection("c", BsonDocument.class);
            coll.insertMany(docs);
            body.accept(coll, c.getDatabase("fle_proxy").getCollection("rewrap_state", BsonDocument.class));
        } finally {
            backend.close();
        }
    }
}
