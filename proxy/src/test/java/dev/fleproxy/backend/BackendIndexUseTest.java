package dev.fleproxy.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Indexes;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.model.Updates;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Java driver against the real embedded backend: a collection with a multikey secondary index
 * and a compound one built over its documents answers every query (equality, $in, $all, an $or of
 * what indexes answer), update and delete exactly as its twin without them, while documents are
 * changed and removed under it.
 */
class BackendIndexUseTest {
    private static EmbeddedBackend backend;
    private static MongoClient client;

    @BeforeAll
    static void start() {
        backend = EmbeddedBackend.start("127.0.0.1", 0, null);
        client = MongoClients.create("mongodb://127.0.0.1:" + backend.address().getPort());
    }

    @AfterAll
    static void stop() {
        client.close();
        backend.close();
    }

    @Test
    void indexedAndUnindexedTwinsAnswerAlike() {
        MongoCollection<Document> indexed = client.getDatabase("idx").getCollection("with");
        MongoCollection<Document> twin = client.getDatabase("idx").getCollection("without");
        indexed.createIndex(Indexes.ascending("tags"));
        indexed.createIndex(Indexes.ascending("sub.tags")); // a path, as the proxy's __fle.<field>
        Random r = new Random(42);
        for (int i = 0; i < 400; i++) {
            Document d = new Document("_id", i).append("n", r.nextInt(5)).append("s", "s" + r.nextInt(3))
                    .append("tags", List.of("t" + r.nextInt(8), r.nextInt(4)))
                    .append("sub", new Document("tags", List.of("u" + r.nextInt(6), "u" + r.nextInt(6))));
            if (r.nextInt(10) == 0) {
                d.remove("tags");
            }
            indexed.insertOne(d);
            twin.insertOne(d);
        }
        indexed.createIndex(Indexes.ascending("n", "s")); // built over the documents already there
        for (int round = 0; round < 3; round++) {
            for (Bson f : List.of(Filters.eq("tags", "t3"), Filters.in("tags", "t1", 2L, 3.0),
                    Filters.and(Filters.eq("n", 2), Filters.eq("s", "s1")),
                    Filters.and(Filters.in("n", 1, 4), Filters.eq("s", "s0"), Filters.eq("tags", "t5")),
                    Filters.and(Filters.eq("_id", 17), Filters.eq("n", 2)),
                    Filters.and(Filters.in("_id", 3, 5, 7, 9), Filters.gt("n", 1)),
                    // $all by intersection; an $or whose every branch an index answers, by union
                    Filters.all("tags", "t2", 1), Filters.all("tags", "t2", "t6"), Filters.all("tags", "nowhere", 1),
                    Filters.and(Filters.all("tags", "t4", 0), Filters.eq("n", 3)),
                    Filters.or(Filters.all("tags", "t1", 3), Filters.in("tags", "t7", null)),
                    Filters.and(Filters.gt("n", 1), Filters.or(Filters.eq("tags", "t0"), Filters.eq("_id", 5))),
                    Filters.or(Filters.eq("tags", "t0"), Filters.gt("n", 3)),
                    Filters.all("sub.tags", "u1", "u2"), Filters.or(Filters.all("sub.tags", "u3", "u4"),
                            Filters.in("sub.tags", "u5", null)))) {
                assertEquals(ids(twin, f), ids(indexed, f), f + " in round " + round);
                assertEquals(twin.countDocuments(f), indexed.countDocuments(f));
            }
            Bson change = Filters.eq("tags", "t" + round);
            assertEquals(twin.updateMany(change, Updates.set("tags", List.of("moved" + round))).getModifiedCount(),
                    indexed.updateMany(change, Updates.set("tags", List.of("moved" + round))).getModifiedCount());
            Bson gone = Filters.and(Filters.eq("tags", 1), Filters.eq("n", round));
            assertEquals(twin.deleteMany(gone).getDeletedCount(), indexed.deleteMany(gone).getDeletedCount());
            assertEquals(ids(twin, Filters.eq("tags", "moved" + round)), ids(indexed, Filters.eq("tags", "moved" + round)));
        }
    }

    @Test
    void aReadSortedByIdWithALimitStartsAtItsBoundAndAnswersAsTheWholeSortWould() {
        MongoCollection<Document> c = client.getDatabase("idx").getCollection("ordered");
        Random r = new Random(7);
        List<Object> ids = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            ids.add(i);
            ids.add(i + 0.5);
        }
        for (int i = 0; i < 40; i++) {
            ids.add("s" + i);
            ids.add(Long.valueOf(1000 + i));
        }
        java.util.Collections.shuffle(ids, r);
        for (Object id : ids) {
            c.insertOne(new Document("_id", id).append("n", r.nextInt(3)));
        }
        c.deleteMany(Filters.eq("n", 2)); // holes where documents were
        for (Bson f : List.of(Filters.gt("_id", 100), Filters.gte("_id", 100.5), Filters.lt("_id", 50),
                Filters.and(Filters.gt("_id", 10), Filters.eq("n", 1)), Filters.gt("_id", "s1"), Filters.empty(),
                Filters.and(Filters.gte("_id", 20), Filters.lte("_id", 30)), Filters.lte("_id", 1005L))) {
            for (int dir : new int[] {1, -1}) {
                List<Object> whole = new ArrayList<>();
                c.find(f).sort(new Document("_id", dir)).forEach(d -> whole.add(d.get("_id")));
                for (int[] w : new int[][] {{0, 1}, {0, 25}, {7, 10}, {0, 5000}}) {
                    List<Object> got = new ArrayList<>();
                    c.find(f).sort(new Document("_id", dir)).skip(w[0]).limit(w[1]).forEach(d -> got.add(d.get("_id")));
                    List<Object> want = whole.subList(Math.min(w[0], whole.size()), Math.min(w[0] + w[1], whole.size()));
                    assertEquals(want, got, f + " sorted " + dir + " window " + w[0] + "," + w[1]);
                }
            }
        }
    }

    private static List<Object> ids(MongoCollection<Document> c, Bson filter) {
        List<Object> out = new ArrayList<>();
        c.find(filter).sort(Sorts.ascending("_id")).forEach(d -> out.add(d.get("_id")));
        return out;
    }
}
