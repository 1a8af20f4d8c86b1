package dev.fleproxy.rewrite.scan;

import dev.fleproxy.protocol.Refusal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * What an upsert that matched nothing starts its new document from, by MongoDB's rules: the
 * equality conditions of its filter — a field's plain value, {@code $eq} (beside other operators
 * too), a one-element {@code $in} (MongoDB parses it as {@code $eq}), through {@code $and} and an
 * {@code $or} of one clause (which MongoDB optimizes away); dotted paths made nested — every
 * other condition ignored; a path given twice, or one under another, refused as the server
 * refuses it. The proxy sends the server an upsert whose
 * filter holds these equalities, their values encrypted as a {@code $set} of them would be, and a
 * condition no document meets ({@code _id} missing): the server builds the document as it always
 * does, and cannot update one the proxy found not to match.
 */
final class UpsertSeed {
    private UpsertSeed() {
    }

    /** The filter's equalities, path → value, in its order. */
    static BsonDocument equalities(BsonDocument filter, String ns) {
        BsonDocument out = new BsonDocument();
        collect(filter, out, ns);
        List<String> paths = new ArrayList<>(out.keySet());
        for (String a : paths) {
            for (String b : paths) {
                if (b.startsWith(a + ".")) {
                    throw Refusal.command(ns, "an upsert whose filter matches both '" + a + "' and '" + b
                            + "' (the server cannot infer the fields to set either)");
                }
            }
        }
        return out;
    }

    private static void collect(BsonDocument filter, BsonDocument out, String ns) {
        for (Map.Entry<String, BsonValue> e : filter.entrySet()) {
            String path = e.getKey();
            BsonValue v = e.getValue();
            boolean oneClauseOr = path.equals("$or") && v.isArray() && v.asArray().size() == 1;
            if ((path.equals("$and") || oneClauseOr) && v.isArray()) {
                for (BsonValue member : v.asArray()) {
                    if (member.isDocument()) {
                        collect(member.asDocument(), out, ns);
                    }
                }
                continue;
            }
            if (path.startsWith("$")) {
                continue; // $or, $nor, $expr, …: no equality the server would take either
            }
            BsonValue value = equality(v);
            if (value == null) {
                continue;
            }
            if (out.containsKey(path)) {
                throw Refusal.command(ns, "an upsert whose filter matches '" + path + "' twice (the server cannot "
                        + "infer the fields to set either)");
            }
            out.put(path, value);
        }
    }

    /** The value a condition sets it to, or null if it holds no equality (other operators, a regex). */
    private static BsonValue equality(BsonValue v) {
        if (v.isRegularExpression()) {
            return null;
        }
        if (v.isDocument() && !v.asDocument().isEmpty() && v.asDocument().getFirstKey().startsWith("$")) {
            BsonDocument ops = v.asDocument();
            if (ops.containsKey("$eq")) {
                return ops.get("$eq");
            }
            BsonValue in = ops.get("$in");
            return in != null && in.isArray() && in.asArray().size() == 1 && !in.asArray().get(0).isRegularExpression()
                    ? in.asArray().get(0) : null;
        }
        return v;
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
