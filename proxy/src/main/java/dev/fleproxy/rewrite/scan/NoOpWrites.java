package dev.fleproxy.rewrite.scan;

import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import dev.fleproxy.rewrite.evaluate.UpdateArithmetic;
import java.util.Arrays;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;
import org.bson.BsonValue;
import org.bson.codecs.BsonDocumentCodec;

/**
 * What the server would find unchanged, decided on plaintext: MongoDB counts a document modified
 * only when its bytes change, but a value sealed again is a new envelope, so the server would
 * count every $set of an encrypted field modified. The proxy, which reads the plaintext, leaves
 * out what would not change it, with the server's test: the same bytes (a number equal by value
 * but of another type is a change, as it is for MongoDB).
 */
final class NoOpWrites {
    private static final BsonDocumentCodec CODEC = new BsonDocumentCodec();

    private NoOpWrites() {
    }

    /**
     * True if the document's value at the path is there and has the same type and bytes as {@code
     * value}; false through an array (the proxy does not follow $set's array rules here: written).
     */
    static boolean unchanged(BsonDocument plain, String path, BsonValue value) {
        try {
            return unchanged(UpdateArithmetic.get(plain, path), value);
        } catch (NotEvaluable throughArray) {
            return false;
        }
    }

    static boolean unchanged(BsonValue now, BsonValue value) {
        return now != null && now.getBsonType() == value.getBsonType() && Arrays.equals(bytes(now), bytes(value));
    }

    /**
     * True if the replacement would leave the document as it is: the document the server would
     * store (its _id first, then the replacement's fields) has the same bytes as the one read.
     */
    static boolean sameReplacement(BsonDocument plain, BsonDocument replacement) {
        if (plain.get("_id") == null) {
            return false; // a new document (an upsert's seed without _id): never the same
        }
        BsonDocument after = new BsonDocument("_id", plain.get("_id"));
        for (Map.Entry<String, BsonValue> e : replacement.entrySet()) {
            if (!e.getKey().equals("_id")) {
                after.put(e.getKey(), e.getValue());
            }
        }
        if (replacement.containsKey("_id") && !unchanged(plain.get("_id"), replacement.get("_id"))) {
            return false;
        }
        return Arrays.equals(bytes(plain), bytes(after));
    }

    private static byte[] bytes(BsonValue v) {
        RawBsonDocument raw = new RawBsonDocument(new BsonDocument("v", v), CODEC);
        return Arrays.copyOf(raw.getByteBuffer().array(), raw.getByteBuffer().remaining());
    }
}
