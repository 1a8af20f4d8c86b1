package dev.fleproxy.rewrite;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.Updates;
import dev.fleproxy.backend.EmbeddedBackend;
import dev.fleproxy.runtime.ProxyRuntime;
import dev.fleproxy.testing.KmsFixture;
import dev.fleproxy.testing.ProxyFixture;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.bson.BsonBinary;
import org.bson.Document;
import org.bson.RawBsonDocument;
import org.bson.conversions.Bson;
import org.bson.types.Binary;
import org.bson.types.Decimal128;
import org.bson.types.ObjectId;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The MongoDB Java driver through the encrypting proxy: keys from a real PyKMIP server over mutual
 * TLS, the real embedded backend behind. Reading the backend directly shows what it stores.
 */
class JavaDriverEncryptionTest {
    private static final String MARKER = "PLAINTEXT-MARKER-java-3f9a";

    private static KmsFixture kms;
    private static EmbeddedBackend backend;
    private static ProxyRuntime proxy;
    private static MongoClient proxied;
    private static MongoClient direct;
    /** collection → key UUID and the suite byte its envelopes carry. */
    private static Map<String, Object[]> suites;

    @BeforeAll
    static void start() throws Exception {
        kms = KmsFixture.start();
        Map<String, String> extra = kms.extraKeys();
        suites = Map.of(
                "aes", new Object[] {KmsFixture.AES_256, 0x01},
                "aria", new Object[] {KmsFixture.ARIA_256, 0x02},
                "lea", new Object[] {extra.get("LEA-256"), 0x03},
                "seed", new Object[] {extra.get("SEED-128"), 0x14},
                "tdes", new Object[] {KmsFixture.TDES, 0x15});
        backend = EmbeddedBackend.start("127.0.0.1", 0, null);
        StringBuilder yaml = new StringBuilder()
                .append("listen: 127.0.0.1:0\n")
                .append("upstream: 127.0.0.1:").append(backend.address().getPort()).append('\n')
                .append("kmip:\n  host: 127.0.0.1\n  port: ").append(kms.port()).append('\n')
                .append("  ca: ").append(kms.dir().resolve("ca.pem")).append('\n')
                .append("  clientCert: ").append(kms.dir().resolve("proxy.pem")).append('\n')
                .append("  clientKey: ").append(kms.dir().resolve("proxy.key")).append('\n')
                .append("envelopeSubtype: 0\ncollections:\n");
        suites.forEach((coll, s) -> yaml.append("  app.").append(coll).append(": { key: ").append(s[0])
                .append(", fields: \"*\" }\n"));
        yaml.append("  app.people:\n    key: ").append(KmsFixture.AES_256).append('\n')
                .append("    fields:\n      ssn: { deterministic: true }\n      address.street: {}\n");
        Path config = kms.dir().resolve("proxy-java.yaml");
        Files.writeString(config, yaml);
        proxy = ProxyRuntime.start(config);
        proxied = ProxyFixture.client("mongodb://127.0.0.1:" + proxy.address().getPort(), b -> { });
        direct = ProxyFixture.client("mongodb://127.0.0.1:" + backend.address().getPort(), b -> { });
    }

    @AfterAll
    static void stop() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {proxied, direct, proxy, backend, kms}) {
            if (c != null) {
                c.close();
            }
        }
    }

    private static MongoDatabase app(MongoClient c) {
        return c.getDatabase("app");
    }

    private static Document sample(int i) {
        return new Document("_id", i).append("name", MARKER + " " + i).append("n", i).append("big", 1L << 40)
                .append("price", new Decimal128(1234 + i)).append("when", new Date(1_763_800_000_000L))
                .append("oid", new ObjectId("0123456789abcdef01234567")).append("flag", i % 2 == 0)
                .append("bytes", new Binary(new byte[] {0, 1, (byte) 255})).append("none", null)
                .append("tags", List.of(MARKER, i, 2.5)).append("sub", new Document("deep", new Document("x", MARKER)));
    }

    @ParameterizedTest
    @ValueSource(strings = {"aes", "aria", "lea", "seed", "tdes"})
    void everySuiteRoundTripsAndTheBackendHoldsOnlyEnvelopes(String coll) {
        MongoCollection<Document> via = app(proxied).getCollection(coll);
        via.drop();
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            docs.add(sample(i));
        }
        via.insertMany(docs);
        assertEquals(docs, via.find().sort(Sorts.ascending("_id")).into(new ArrayList<>()));
        assertEquals(sample(2), via.find(Filters.eq("_id", 2)).first());

        UUID keyId = UUID.fromString((String) suites.get(coll)[0]);
        int suite = (Integer) suites.get(coll)[1];
        for (RawBsonDocument stored : app(direct).getCollection(coll, RawBsonDocument.class).find()) {
            byte[] bytes = Arrays.copyOfRange(stored.getByteBuffer().array(), 0, stored.getByteBuffer().limit());
            assertFalse(new String(bytes, StandardCharsets.ISO_8859_1).contains(MARKER), "plaintext in the backend");
            for (String field : stored.keySet()) {
                if (field.equals("_id")) {
                    continue;
                }
                BsonBinary b = stored.getBinary(field);
                byte[] env = b.getData();
                assertEquals(0x82, env[0] & 0xFF, field);
                assertEquals(suite, env[1] & 0x3F, field);
                assertArrayEquals(uuidBytes(keyId), Arrays.copyOfRange(env, 2, 18), field);
            }
        }
    }

    private static byte[] uuidBytes(UUID u) {
        return java.nio.ByteBuffer.allocate(16).putLong(u.getMostSignificantBits())
                .putLong(u.getLeastSignificantBits()).array();
    }

    private static List<Object> ids(MongoCollection<Document> c, Bson filter) {
        List<Object> out = new ArrayList<>();
        c.find(filter).sort(Sorts.ascending("_id")).forEach(d -> out.add(d.get("_id")));
        return out;
    }

    @Test
    void deterministicEqualityMatchesAPlaintextTwin() {
        MongoCollection<Document> people = app(proxied).getCollection("people");
        MongoCollection<Document> twin = app(proxied).getCollection("people_plain");
        people.drop();
        twin.drop();
        for (int i = 0; i < 12; i++) {
            Document d = new Document("_id", i).append("ssn", "ssn-" + (i % 4))
                    .append("address", new Document("street", "Street " + i).append("city", "City " + (i % 3)));
            people.insertOne(d);
            twin.insertOne(d);
        }
        List<Bson> queries = List.of(Filters.eq("ssn", "ssn-1"), Filters.in("ssn", "ssn-0", "ssn-3", "none"),
                Filters.ne("ssn", "ssn-2"), Filters.nin("ssn", "ssn-0", "ssn-1"),
                Filters.or(Filters.eq("ssn", "ssn-1"), Filters.eq("address.city", "City 0")),
                Filters.and(Filters.eq("ssn", "ssn-2"), Filters.gte("_id", 5)));
        for (Bson q : queries) {
            List<Object> expected = ids(twin, q);
            assertFalse(expected.isEmpty(), q.toString());
            assertEquals(expected, ids(people, q), q.toString());
        }
        assertEquals(twin.countDocuments(Filters.eq("ssn", "ssn-3")), people.countDocuments(Filters.eq("ssn", "ssn-3")));
        assertEquals(twin.aggregate(List.of(Aggregates.match(Filters.eq("ssn", "ssn-0")))).into(new ArrayList<>()),
                people.aggregate(List.of(Aggregates.match(Filters.eq("ssn", "ssn-0")))).into(new ArrayList<>()));
    }

    @Test
    void writesOfEveryKindKeepEncryptingAndReadsDecrypt() {
        MongoCollection<Document> people = app(proxied).getCollection("people");
        people.drop();
        people.bulkWrite(List.of(
                new InsertOneModel<>(new Document("_id", 1).append("ssn", "A").append("address", new Document("street", "S1"))),
                new InsertOneModel<>(new Document("_id", 2).append("ssn", "B")),
                new UpdateOneModel<>(Filters.eq("ssn", "B"), Updates.set("address", new Document("street", "S2"))),
                new DeleteOneModel<>(Filters.eq("ssn", "A"))));
        Document after = people.findOneAndUpdate(Filters.eq("ssn", "B"), Updates.set("address.street", "S3"),
                new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER));
        assertEquals(new Document("_id", 2).append("ssn", "B").append("address", new Document("street", "S3")), after);
        Document stored = app(direct).getCollection("people").find().first();
        assertInstanceOf(Binary.class, stored.get("ssn"));
        assertInstanceOf(Binary.class, stored.get("address", Document.class).get("street"));
        assertEquals(List.of("B"), people.distinct("ssn", String.class).into(new ArrayList<>()));
    }

    @Test
    void whatCannotWorkOnCiphertextIsRefusedWithAMongoError() {
        MongoCollection<Document> people = app(proxied).getCollection("people");
        people.drop();
        people.insertOne(new Document("_id", 1).append("ssn", "A").append("address", new Document("street", "S1")));
        MongoException e = assertThrows(MongoException.class, () -> people.updateOne(Filters.eq("_id", 1),
                Updates.rename("ssn", "social")));
        assertEquals(9720010, e.getCode());
        assertTrue(e.getMessage().contains("app.people") && e.getMessage().contains("ssn"), e.getMessage());
        e = assertThrows(MongoException.class, () -> people.find(Filters.where("this.ssn > 'A'")).first());
        assertEquals(9720011, e.getCode());
        assertEquals(new Document("_id", 1).append("ssn", "A").append("address", new Document("street", "S1")),
                people.find().first(), "a refusal leaves the data untouched");
    }

    @Test
    void whatTheServerCannotEvaluateOnCiphertextTheProxyEvaluates() {
        MongoCollection<Document> people = app(proxied).getCollection("people");
        people.drop();
        people.insertOne(new Document("_id", 1).append("ssn", "A").append("address", new Document("street", "S1")));
        people.insertOne(new Document("_id", 2).append("ssn", "B").append("address", new Document("street", "S2")));
        assertEquals(2, people.find(Filters.gt("ssn", "A")).first().get("_id"));
        assertEquals(1, people.find(Filters.eq("address.street", "S1")).first().get("_id"));
        assertEquals(2, people.find().sort(Sorts.descending("ssn")).first().get("_id"));
    }
}
