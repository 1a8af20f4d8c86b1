package dev.fleproxy.rewrite.write;

import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldRule;
import dev.fleproxy.wire.BsonCursor;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * Duplicate-key errors (code 11000) in the answers to writes on encrypted collections: the
 * server's message and its {@code keyValue} quote the key that collided, which for an index on a
 * policy field is its envelope — a deterministic one names the stored value to whoever can encrypt
 * a guess. For everyone, the message is cut before its key ("dup key: …") and {@code keyValue}
 * keeps only the fields outside the policy (docs/access.md, "What each rule still reveals").
 */
public final class DuplicateKeys {
    private static final int DUPLICATE_KEY = 11000;
    private static final String DUP_KEY = " dup key:";
    private static final byte[] CODE = "code".getBytes(StandardCharsets.UTF_8);
    private static final byte[] WRITE_ERRORS = "writeErrors".getBytes(StandardCharsets.UTF_8);
    private static final byte[] N_ERRORS = "nErrors".getBytes(StandardCharsets.UTF_8);

    private DuplicateKeys() {
    }

    /**
     * True if a reply's body may hold a duplicate-key error: a top-level code 11000, write errors,
     * or bulkWrite's error count above 0. Read in place, so the answers without errors (nearly
     * all) cost a walk of their top level.
     */
    public static boolean mayHold(byte[] body) {
        BsonCursor c = new BsonCursor(body, 0, body.length);
        while (c.next()) {
            if (c.nameIs(CODE) && c.numberValue() == DUPLICATE_KEY || c.nameIs(WRITE_ERRORS)
                    || c.nameIs(N_ERRORS) && c.numberValue() > 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * The reply's body with every duplicate-key error in it cut as above: the body's own (a
     * findAndModify's, an index build's), each of its {@code writeErrors}, each result of a
     * bulkWrite's first batch. Nothing else is looked into: below them are the documents
     * returned, data. The same instance if it holds none.
     *
     * @param cp the collection written, or null when the answer may be any collection's (bulkWrite):
     *     then {@code keyValue} keeps only {@code _id}
     */
    public static BsonDocument scrub(BsonDocument body, CollectionPolicy cp) {
        BsonDocument out = error(body, cp);
        BsonArray writeErrors = errors(body.get("writeErrors"), cp);
        if (writeErrors != null) {
            out = out == body ? copy(body) : out;
            out.put("writeErrors", writeErrors);
        }
        if (body.isDocument("cursor")) {
            BsonArray results = errors(body.getDocument("cursor").get("firstBatch"), cp);
            if (results != null) {
                out = out == body ? copy(body) : out;
                BsonDocument cursor = copy(body.getDocument("cursor"));
                cursor.put("firstBatch", results);
                out.put("cursor", cursor);
            }
        }
        return out;
    }

    /** The array with each error document in it cut; null if none changed. */
    private static BsonArray errors(BsonValue v, CollectionPolicy cp) {
        if (v == null || !v.isArray()) {
            return null;
        }
        BsonArray a = v.asArray();
        BsonArray out = null;
        for (int i = 0; i < a.size(); i++) {
            if (a.get(i).isDocument()) {
                BsonDocument e = error(a.get(i).asDocument(), cp);
                if (e != a.get(i)) {
                    out = out == null ? new BsonArray(new java.util.ArrayList<>(a)) : out;
                    out.set(i, e);
                }
            }
        }
        return out;
    }

    /** One error document cut if it is a duplicate key's; else the same instance. */
    private static BsonDocument error(BsonDocument d, CollectionPolicy cp) {
        if (!d.isNumber("code") || d.getNumber("code").intValue() != DUPLICATE_KEY) {
            return d;
        }
        BsonDocument out = copy(d);
        if (out.isString("errmsg")) {
            String m = out.getString("errmsg").getValue();
            int at = m.indexOf(DUP_KEY);
            out.put("errmsg", new BsonString((at < 0 ? "E11000 duplicate key error" : m.substring(0, at))
                    + " (the key is withheld: it may hold an encrypted field)"));
        }
        if (out.isDocument("keyValue")) {
            BsonDocument kept = new BsonDocument();
            for (Map.Entry<String, BsonValue> k : out.getDocument("keyValue").entrySet()) {
                if (outsidePolicy(k.getKey(), cp)) {
                    kept.put(k.getKey(), k.getValue());
                }
            }
            out.put("keyValue", kept);
        }
        return out;
    }

    /** A document that can be changed (a reply's documents are read-only views of its bytes). */
    private static BsonDocument copy(BsonDocument d) {
        BsonDocument c = new BsonDocument();
        for (Map.Entry<String, BsonValue> e : d.entrySet()) {
            c.put(e.getKey(), e.getValue());
        }
        return c;
    }

    private static boolean outsidePolicy(String path, CollectionPolicy cp) {
        if (cp == null || cp.allFields()) {
            return path.equals("_id");
        }
        for (FieldRule r : cp.fields().values()) {
            if (path.equals(r.path()) || path.startsWith(r.path() + ".") || r.path().startsWith(path + ".")) {
                return false;
            }
        }
        return true;
    }
}
