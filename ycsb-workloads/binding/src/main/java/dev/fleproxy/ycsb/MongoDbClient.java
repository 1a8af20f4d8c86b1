package dev.fleproxy.ycsb;

import com.mongodb.ConnectionString;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.ReadPreference;
import com.mongodb.WriteConcern;
import com.mongodb.client.FindIterable;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.ReplaceOptions;
import com.mongodb.client.model.WriteModel;
import com.mongodb.client.result.DeleteResult;
import com.mongodb.client.result.UpdateResult;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;

/**
 * YCSB binding for MongoDB through any endpoint that speaks the wire protocol: mongod, mongos,
 * the embedded backend, or mongo-fle-proxy in front of any of them. One client (connection pool)
 * is shared by all YCSB threads of the JVM, as YCSB's own MongoDB binding does.
 *
 * <p>Field values are stored as BSON binary (subtype 0), the bytes YCSB generates, as YCSB's own
 * MongoDB binding stores them. Every operation returns a
 * {@link Status}; driver exceptions become {@link Status#ERROR} with one line on stderr.
 *
 * <p>Properties: {@code mongodb.url} (database from its path, default {@code ycsb}),
 * {@code mongodb.writeConcern} (acknowledged = w1 as in YCSB, w2, majority, journaled, default: see
 * {@link #writeConcern}),
 * {@code mongodb.readPreference} (primary, primaryPreferred, secondary, secondaryPreferred,
 * nearest), {@code mongodb.batchsize} (inserts sent together, default 1), {@code mongodb.upsert}
 * (insert as upsert, so a run phase may insert keys that a previous run already inserted).
 */
public final class MongoDbClient extends DB {
    private static final Object LOCK = new Object();
    /**
     * One driver client per connection string and settings, shared by the instances (YCSB makes
     * one per thread) that name it: a session that alternates algorithms talks to the backend
     * directly and to the proxy at once.
     */
    private static final Map<String, Shared> CLIENTS = new HashMap<>();

    private static final class Shared {
        final MongoClient client;
        final MongoDatabase database;
        int users;

        Shared(MongoClient client, MongoDatabase database) {
            this.client = client;
            this.database = database;
        }
    }

    private String clientKey;
    private MongoDatabase database;

    private int batchSize;
    private boolean upsert;
    private String batchTable;
    private final List<WriteModel<BsonDocument>> batch = new ArrayList<>();

    @Override
    public void init() throws DBException {
        Properties p = getProperties();
        batchSize = positiveInt(p, "mongodb.batchsize", 1);
        upsert = Boolean.parseBoolean(p.getProperty("mongodb.upsert", "false"));
        clientKey = p.getProperty("mongodb.url", "mongodb://localhost:27017/ycsb") + "|"
                + p.getProperty("mongodb.writeConcern", "acknowledged") + "|"
                + p.getProperty("mongodb.readPreference", "primary");
        synchronized (LOCK) {
            Shared shared = CLIENTS.get(clientKey);
            if (shared == null) {
                shared = open(p);
                CLIENTS.put(clientKey, shared);
            }
            shared.users++;
            database = shared.database;
        }
    }

    private static Shared open(Properties p) throws DBException {
        String url = p.getProperty("mongodb.url", "mongodb://localhost:27017/ycsb");
        ConnectionString cs;
        try {
            cs = new ConnectionString(url);
        } catch (IllegalArgumentException e) {
            throw new DBException("mongodb.url is not a MongoDB connection string: " + e.getMessage());
        }
        WriteConcern wc = writeConcern(p);
        ReadPreference rp;
        try {
            rp = ReadPreference.valueOf(p.getProperty("mongodb.readPreference", "primary"));
        } catch (IllegalArgumentException e) {
            throw new DBException("mongodb.readPreference: " + e.getMessage());
        }
        MongoClient client = MongoClients.create(MongoClientSettings.builder().applyConnectionString(cs)
                .writeConcern(wc).readPreference(rp).build());
        MongoDatabase database = client.getDatabase(cs.getDatabase() != null ? cs.getDatabase() : "ycsb");
        try {
            database.runCommand(new BsonDocument("ping", new BsonString("1")));
            return new Shared(client, database);
        } catch (MongoException e) {
            client.close();
            throw new DBException("cannot reach " + url.replaceAll("//[^@/]*@", "//") + ": " + e.getMessage());
        }
    }

    /**
     * The write concern every write carries, always explicit: the server's default changed from
     * w:1 (MongoDB 3.6, which the source paper ran) to majority (5.0 on), so "acknowledged", the
     * default as in YCSB's own binding, is w:1 here, as YCSB maps it; "default" leaves the choice
     * to the server.
     */
    static WriteConcern writeConcern(Properties p) throws DBException {
        String name = p.getProperty("mongodb.writeConcern", "acknowledged").trim();
        switch (name.toLowerCase(java.util.Locale.ROOT)) {
            case "acknowledged":
            case "w1":
                return WriteConcern.W1;
            case "default":
                return WriteConcern.ACKNOWLEDGED;
            default:
                WriteConcern wc = WriteConcern.valueOf(name);
                if (wc == null) {
                    throw new DBException("mongodb.writeConcern: unknown name '" + name
                            + "' (acknowledged = w1, w2, w3, majority, journaled, unacknowledged, default)");
                }
                return wc;
        }
    }

    /** How the write concern of {@link #writeConcern} is recorded beside each figure: "w:1", "w:majority", … */
    static String writeConcernName(Properties p) {
        try {
            WriteConcern wc = writeConcern(p);
            if (wc.getWObject() == null) {
                return "server default";
            }
            return "w:" + wc.getWObject() + (Boolean.TRUE.equals(wc.getJournal()) ? ", j:true" : "");
        } catch (DBException e) {
            return "invalid";
        }
    }

    private static int positiveInt(Properties p, String name, int dflt) throws DBException {
        String v = p.getProperty(name);
        if (v == null) {
            return dflt;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new DBException(name + " must be a positive integer, not '" + v + "'");
    }

    @Override
    public void cleanup() throws DBException {
        try {
            if (!batch.isEmpty() && flush() != Status.OK) {
                throw new DBException("the last " + batch.size() + " batched inserts failed");
            }
        } finally {
            synchronized (LOCK) {
                Shared shared = CLIENTS.get(clientKey);
                if (shared != null && --shared.users == 0) {
                    shared.client.close();
                    CLIENTS.remove(clientKey);
                }
            }
        }
    }

    private MongoCollection<BsonDocument> collection(String table) {
        return database.getCollection(table, BsonDocument.class);
    }

    @Override
    public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
        try {
            FindIterable<BsonDocument> find = collection(table).find(Filters.eq("_id", key)).limit(1);
            if (fields != null) {
                find.projection(projection(fields));
            }
            BsonDocument doc = find.first();
            if (doc == null) {
                return Status.NOT_FOUND;
            }
            copyFields(doc, result);
            return Status.OK;
        } catch (MongoException e) {
            return error("read", e);
        }
    }

    @Override
    public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                       Vector<HashMap<String, ByteIterator>> result) {
        try {
            FindIterable<BsonDocument> find = collection(table).find(Filters.gte("_id", startkey))
                    .sort(new BsonDocument("_id", new org.bson.BsonInt32(1))).limit(recordcount)
                    .batchSize(recordcount);
            if (fields != null) {
                find.projection(projection(fields));
            }
            try (MongoCursor<BsonDocument> cursor = find.iterator()) {
                while (cursor.hasNext()) {
                    HashMap<String, ByteIterator> row = new HashMap<>();
                    copyFields(cursor.next(), row);
                    result.add(row);
                }
            }
            // As YCSB's own binding: a scan starts at a key that exists, so finding nothing is a failure.
            return result.isEmpty() ? Status.ERROR : Status.OK;
        } catch (MongoException e) {
            return error("scan", e);
        }
    }

    @Override
    public Status update(String table, String key, Map<String, ByteIterator> values) {
        try {
            UpdateResult r = collection(table).updateOne(Filters.eq("_id", key),
                    new BsonDocument("$set", toDocument(values)));
            return r.getMatchedCount() == 0 ? Status.NOT_FOUND : Status.OK;
        } catch (MongoException e) {
            return error("update", e);
        }
    }

    @Override
    public Status insert(String table, String key, Map<String, ByteIterator> values) {
        BsonDocument doc = toDocument(values);
        doc.put("_id", new BsonString(key));
        try {
            if (batchSize == 1) {
                if (upsert) {
                    collection(table).replaceOne(Filters.eq("_id", key), doc, new ReplaceOptions().upsert(true));
                } else {
                    collection(table).insertOne(doc);
                }
                return Status.OK;
            }
        } catch (MongoException e) {
            return error("insert", e);
        }
        if (batchTable != null && !batchTable.equals(table) && flush() != Status.OK) {
            return Status.ERROR;
        }
        batchTable = table;
        batch.add(upsert ? new ReplaceOneModel<>(Filters.eq("_id", key), doc, new ReplaceOptions().upsert(true))
                : new InsertOneModel<>(doc));
        return batch.size() < batchSize ? Status.BATCHED_OK : flush();
    }

    /** Sends the buffered inserts as one unordered bulk write; a failure fails the whole batch. */
    private Status flush() {
        try {
            collection(batchTable).bulkWrite(new ArrayList<>(batch), new BulkWriteOptions().ordered(false));
            return Status.OK;
        } catch (MongoException e) {
            return error("insert batch of " + batch.size(), e);
        } finally {
            batch.clear();
        }
    }

    @Override
    public Status delete(String table, String key) {
        try {
            DeleteResult r = collection(table).deleteOne(Filters.eq("_id", key));
            return r.getDeletedCount() == 0 ? Status.NOT_FOUND : Status.OK;
        } catch (MongoException e) {
            return error("delete", e);
        }
    }

    private static BsonDocument projection(Set<String> fields) {
        BsonDocument p = new BsonDocument();
        for (String f : fields) {
            p.put(f, new org.bson.BsonInt32(1));
        }
        return p;
    }

    private static BsonDocument toDocument(Map<String, ByteIterator> values) {
        BsonDocument doc = new BsonDocument();
        for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
            doc.put(e.getKey(), new BsonBinary(e.getValue().toArray()));
        }
        return doc;
    }

    /** Binary values as this binding and YCSB's own MongoDB binding write them; strings as earlier versions wrote them. */
    private static void copyFields(BsonDocument doc, Map<String, ByteIterator> out) {
        for (Map.Entry<String, BsonValue> e : doc.entrySet()) {
            if (e.getKey().equals("_id")) {
                continue;
            }
            BsonValue v = e.getValue();
            if (v.isString()) {
                out.put(e.getKey(), new StringByteIterator(v.asString().getValue()));
            } else if (v.isBinary()) {
                out.put(e.getKey(), new ByteArrayByteIterator(((BsonBinary) v).getData()));
            } else {
                out.put(e.getKey(), new StringByteIterator(v.toString()));
            }
        }
    }

    /** The driver's message (never document content, which it does not include) and ERROR. */
    private static Status error(String op, MongoException e) {
        System.err.println("mongodb binding: " + op + " failed: " + e.getMessage().lines().findFirst().orElse("")
                + " (code " + e.getCode() + ")");
        return Status.ERROR;
    }
}
