package dev.fleproxy.rewrite.scan;

import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What an upsert that matched nothing starts its new document from, by MongoDB's rules: the
 * equality conditions of its filter ({@link dev.fleproxy.rewrite.query.UpsertEqualities}), dotted
 * paths made nested. The proxy sends the server an upsert whose filter holds these equalities,
 * their values encrypted as a {@code $set} of them would be, and a condition no document meets
 * ({@code _id} missing): the server builds the document as it always does, and cannot update one
 * the proxy found not to match.
 */
final class UpsertSeed {
    private UpsertSeed() {
    }

    /** The equalities as the document they describe (dotted paths nested), to compute on plaintext. */
    static BsonDocument document(BsonDocument equalities) {
        BsonDocument doc = new BsonDocument();
        for (Map.Entry<String, BsonValue> e : equalities.entrySet()) {
            String[] segments = e.getKey().split("\\.");
            BsonDocument at = doc;
            for (int i = 0; i < segments.length - 1; i++) {
                BsonValue next = at.get(segments[i]);
                if (next == null || !next.isDocument()) {
                    next = new BsonDocument();
                    at.put(segments[i], next);
                }
                at = next.asDocument();
            }
            at.put(segments[segments.length - 1], e.getValue());
        }
        return doc;
    }

    /**
     * The filter the server's upsert is sent with: no document has no _id, so it matches none and
     * inserts; its equalities (values as stored) are what the server builds the document from.
     */
    static BsonDocument serverFilter(BsonDocument storedEqualities) {
        BsonArray and = new BsonArray();
        and.add(new BsonDocument("_id", new BsonDocument("$exists", BsonBoolean.FALSE)));
        storedEqualities.forEach((path, v) -> and.add(new BsonDocument(path, new BsonDocument("$eq", v))));
        return new BsonDocument("$and", and);
    }
}
