package dev.fleproxy.rewrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

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
import dev.fleproxy.rewrite.bson.EnvelopeBinary;
import dev.fleproxy.testing.ProxyFixture;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.junit.jupiter.api.Test;

/**
 * A batch written as one bulk write while the application writes the same documents: those it
 * changed after the batch was read match nothing and are planned afresh from what they hold now
 * (its value is kept, sealed again only if it is not current), those it deleted are counted gone,
 * and the rest are recognised as written by their new values. On the real embedded backend.
 */
class BatchRewrapTest {
    private static DataKey key(CipherAlgorithm alg, int bytes) {
        return RewrapTest.key(alg, bytes);
    }

    private static BsonBinary seal(DataKey key, CipherSuite suite, String value) {
        return RewrapTest.seal(FieldCipher.create(key, suite, false), "name", new BsonString(value));
    }

    private static BsonValue open(DataKey key, BsonValue stored) {
        assertEquals(key.id(), Envelope.parse(EnvelopeBinary.unwrap(stored)).keyId());
        return RewrapTest.open(key, "name", stored);
    }

    @Test
    void documentsTheApplicationChangedMeanwhileArePlannedAfreshAndNoWriteIsLost() {
        DataKey aes = key(CipherAlgorithm.AES, 32);
        DataKey tdes = key(CipherAlgorithm.TRIPLE_DES, 24);
        CollectionPolicy cp = new CollectionPolicy(RewrapTest.NS, aes.id(), List.of(tdes.id()), null, false,
                Map.of("name", new FieldRule("name", false)), EnvelopeBinary.GENERIC, false);
        DocumentRewrap ciphers = new DocumentRewrap(cp, aes, Map.of(aes.id(), aes, tdes.id(), tdes),
                new Adoption(cp, false, Set.of()));
        EmbeddedBackend backend = EmbeddedBackend.start("127.0.0.1", 0, null);
        try (MongoClient c = ProxyFixture.client("mongodb://127.0.0.1:" + backend.address().getPort(), b -> { })) {
            MongoCollection<BsonDocument> coll = c.getDatabase("t").getCollection("c", BsonDocument.class);
            for (int i = 1; i <= 6; i++) {
                coll.insertOne(new BsonDocument("_id", new BsonInt32(i)).append("name", seal(tdes,
                        CipherSuite.TDES_CBC_HMAC, "n" + i)));
            }
            List<BsonDocument> read = coll.find().into(new ArrayList<>());
            // the application, between the read and the write: 2 rewritten under the old key (an old
            // proxy), 3 under the current one, 4 deleted
            coll.updateOne(id(2), new BsonDocument("$set", new BsonDocument("name",
                    seal(tdes, CipherSuite.TDES_CBC_HMAC, "changed"))));
            BsonBinary appCurrent = seal(aes, CipherSuite.AES_GCM, "current by the app");
            coll.updateOne(id(3), new BsonDocument("$set", new BsonDocument("name", appCurrent)));
            coll.deleteOne(id(4));

            ByteArrayOutputStream err = new ByteArrayOutputStream();
            PrintStream errs = new PrintStream(err, true, StandardCharsets.UTF_8);
            Counts counts = new BatchRewrap(coll, false, new Retry(1, errs), errs).run(read, ciphers);

            assertEquals(6, counts.examined);
            assertEquals(4, counts.rewritten);  // 1, 5, 6 at once; 2 planned again
            assertEquals(4, counts.of(Category.PREVIOUS_KEY));
            assertEquals(1, counts.of(Category.CURRENT));
            assertEquals(1, counts.of(Category.GONE));
            for (int i : new int[] {1, 5, 6}) {
                assertEquals(new BsonString("n" + i), open(aes, coll.find(id(i)).first().get("name")));
            }
            assertEquals(new BsonString("changed"), open(aes, coll.find(id(2)).first().get("name")));
            assertEquals(appCurrent, coll.find(id(3)).first().get("name"), "a current value is left as written");
            assertNull(coll.find(id(4)).first());

            // the same stale batch again (a reply lost, the batch retried): nothing matches, nothing is overwritten
            Counts again = new BatchRewrap(coll, false, new Retry(1, errs), errs).run(read, ciphers);
            assertEquals(0, again.rewritten);
            assertEquals(5, again.of(Category.CURRENT));
            assertEquals(new BsonString("changed"), open(aes, coll.find(id(2)).first().get("name")));
            assertEquals(appCurrent, coll.find(id(3)).first().get("name"));
        } finally {
            backend.close();
        }
    }

    private static BsonDocument id(int i) {
        return new BsonDocument("_id", new BsonInt32(i));
    }
}
