package dev.fleproxy.rewrap;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonValue;

/**
 * A collection's documents in _id order, a batch at a time, from one cursor: the server sorts
 * (or walks its _id index) once, not once per batch. A backend that sorts by scanning, as the
 * embedded one does, would otherwise scan the collection for every batch. If the cursor fails it
 * is dropped, and the next call opens a new one after the last _id handed out, so a retried call
 * neither skips nor repeats a document.
 */
final class BatchReader implements AutoCloseable {
    private final MongoCollection<BsonDocument> collection;
    private final int batch;
    private BsonValue lastRead;
    private MongoCursor<BsonDocument> cursor;

    /** @param after the _id to start after (a checkpoint's), or null for the start */
    BatchReader(MongoCollection<BsonDocument> collection, int batch, BsonValue after) {
        this.collection = collection;
        this.batch = batch;
        this.lastRead = after;
    }

    /** The next documents, at most a batch of them; empty at the end. */
    List<BsonDocument> next() {
        try {
            if (cursor == null) {
                BsonDocument filter = lastRead == null ? new BsonDocument()
                        : new BsonDocument("_id", new BsonDocument("$gt", lastRead));
                cursor = collection.find(filter).sort(new BsonDocument("_id", new BsonInt32(1))).batchSize(batch)
                        .cursor();
            }
            List<BsonDocument> docs = new ArrayList<>(batch);
            while (docs.size() < batch && cursor.hasNext()) {
                docs.add(cursor.next());
            }
            if (!docs.isEmpty()) {
                lastRead = docs.get(docs.size() - 1).get("_id");
            }
            return docs;
        } catch (MongoException e) {
            close();
            throw e;
        }
    }

    @Override
    public void close() {
        if (cursor != null) {
            try {
                cursor.close();
            } catch (MongoException ignored) {
                // the cursor is gone with its connection: nothing to close
            }
            cursor = null;
        }
    }
}
