package dev.fleproxy.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Aggregates;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.DeleteOneModel;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.FindOneAndUpdateOptions;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReturnDocument;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.UpdateOptions;
import com.mongodb.client.model.Updates;
import com.mongodb.client.model.Accumulators;
import dev.fleproxy.testing.ProxyFixture;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.bson.Document;
import org.bson.types.Binary;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The MongoDB Java sync driver against the real embedded backend, directly and through the proxy. */
class JavaDriverThroughProxyTest {
    private static ProxyFixture fixture;
    private static MongoClient direct;
    private static MongoClient proxied;

    @BeforeAll
    static void start() throws InterruptedException {
        fixture = ProxyFixture.start();
        direct = fixture.directClient();
        proxied = fixture.proxyClient();
    }

    @AfterAll
    static void stop() {
        proxied.close();
        direct.close();
        fixture.close();
    }

    /** One script of everyday operations; returns everything it observed, in order. */
    private static List<Object> scenario(MongoDatabase db) {
        List<Object> seen = new ArrayList<>();
        MongoCollection<Document> people = db.getCollection("people");
        people.drop();
        people.insertOne(new Document("_id", 1).append("name", "Ada").append("age", 36)
                .append("tags", List.of("math", "engines")).append("address", new Document("city", "London")));
        seen.add(people.insertMany(List.of(
                new Document("_id", 2).append("name", "Grace").append("age", 85),
                new Document("_id", 3).append("name", "Barbara").append("age", 30),
                new Document("_id", 4).append("name", "Edsger").append("age", 72)
                        .append("blob", new Binary(new byte[] {0, 1, 2, (byte) 255})))).getInsertedIds().size());
        seen.add(people.find(Filters.gte("age", 36)).sort(Sorts.ascending("_id")).into(new ArrayList<>()));
        seen.add(people.find(Filters.eq("_id", 1)).projection(new Document("name", 1)).first());
        seen.add(people.updateOne(Filters.eq("_id", 2), Updates.set("age", 86)).getModifiedCount());
        seen.add(people.updateMany(Filters.lt("age", 50), Updates.inc("age", 1)).getModifiedCount());
        seen.add(people.updateOne(Filters.eq("_id", 9), Updates.set("name", "Upserted"),
                new UpdateOptions().upsert(true)).getUpsertedId());
        seen.add(people.replaceOne(Filters.eq("_id", 3), new Document("name", "Liskov").append("age", 84))
                .getModifiedCount());
        seen.add(people.findOneAndUpdate(Filters.eq("_id", 4), Updates.set("age", 73),
                new FindOneAndUpdateOptions().returnDocument(ReturnDocument.AFTER)));
        seen.add(people.deleteOne(Filters.eq("_id", 9)).getDeletedCount());
        seen.add(people.countDocuments());
        seen.add(people.distinct("name", String.class).into(new ArrayList<>()));
        seen.add(people.aggregate(List.of(Aggregates.match(Filters.gt("age", 0)),
                Aggregates.group(null, Accumulators.sum("total", "$age")))).first());
        seen.add(people.find().sort(Sorts.ascending("_id")).into(new ArrayList<>()));
        return seen;
    }

    @Test
    void theSameScriptGivesIdenticalResultsDirectAndThroughTheProxy() {
        List<Object> viaDirect = scenario(direct.getDatabase("same_direct"));
        List<Object> viaProxy = scenario(proxied.getDatabase("same_proxy"));
        assertEquals(viaDirect, viaProxy);
        assertEquals(3, viaProxy.get(0));
    }

    @Test
    void getMoreWithBatchSizeTwoOverAThousandDocuments() {
        MongoCollection<Document> c = proxied.getDatabase("cursors").getCollection("thousand");
        c.drop();
        List<Document> docs = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            docs.add(new Document("_id", i).append("v", "value " + i));
        }
        c.insertMany(docs);
        List<Integer> ids = new ArrayList<>();
        try (MongoCursor<Document> cursor = c.find().sort(Sorts.ascending("_id")).batchSize(2).iterator()) {
            cursor.forEachRemaining(d -> ids.add(d.getInteger("_id")));
        }
        assertEquals(1000, ids.size());
        for (int i = 0; i < 1000; i++) {
            assertEquals(i, ids.get(i));
        }
    }

    @Test
    void orderedAndUnorderedBulkWrites() {
        MongoCollection<Document> c = proxied.getDatabase("bulk").getCollection("items");
        c.drop();
        var result = c.bulkWrite(List.of(
                new InsertOneModel<>(new Document("_id", 1).append("n", 1)),
                new InsertOneModel<>(new Document("_id", 2).append("n", 2)),
                new UpdateOneModel<>(Filters.eq("_id", 1), Updates.set("n", 10)),
                new ReplaceOneModel<>(Filters.eq("_id", 2), new Document("n", 20)),
                new DeleteOneModel<>(Filters.eq("_id", 1))));
        assertEquals(2, result.getInsertedCount());
        assertEquals(2, result.getModifiedCount());
        assertEquals(1, result.getDeletedCount());
        var unordered = c.bulkWrite(List.of(
                new InsertOneModel<>(new Document("_id", 3)),
                new InsertOneModel<>(new Document("_id", 4))), new BulkWriteOptions().ordered(false));
        assertEquals(2, unordered.getInsertedCount());
        assertEquals(List.of(new Document("_id", 2).append("n", 20), new Document("_id", 3), new Document("_id", 4)),
                c.find().sort(Sorts.ascending("_id")).into(new ArrayList<>()));
    }

    @Test
    void aSixteenMegabyteDocumentRoundTrips() {
        MongoCollection<Document> c = proxied.getDatabase("big").getCollection("docs");
        c.drop();
        String big = "x".repeat(16 * 1024 * 1024 - 1024);
        c.insertOne(new Document("_id", 1).append("s", big));
        assertEquals(big, c.find(Filters.eq("_id", 1)).first().getString("s"));
    }

    @Test
    void aHundredConcurrentConnections() throws Exception {
        int n = 100;
        try (MongoClient many = ProxyFixture.client(fixture.proxyUri(),
                b -> b.applyToConnectionPoolSettings(p -> p.maxSize(n).minSize(n)
                        .maintenanceFrequency(20, TimeUnit.MILLISECONDS)))) {
            MongoCollection<Document> c = many.getDatabase("concurrency").getCollection("c");
            c.drop();
            // The pool opens its minimum of n connections in the background; wait until the proxy holds them all.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (fixture.proxy().activeSessions() < n && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            CyclicBarrier together = new CyclicBarrier(n);
            ExecutorService pool = Executors.newFixedThreadPool(n);
            try {
                List<Future<Document>> results = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    int id = i;
                    results.add(pool.submit(() -> {
                        together.await(30, TimeUnit.SECONDS);
                        c.insertOne(new Document("_id", id).append("thread", "t" + id));
                        return c.find(Filters.eq("_id", id)).first();
                    }));
                }
                for (int i = 0; i < n; i++) {
                    assertEquals("t" + i, results.get(i).get(60, TimeUnit.SECONDS).getString("thread"));
                }
            } finally {
                pool.shutdownNow();
            }
            assertTrue(fixture.proxy().activeSessions() >= n,
                    "the pool's connections each hold a proxy session: " + fixture.proxy().activeSessions());
            assertEquals(n, c.countDocuments());
        }
    }
}
