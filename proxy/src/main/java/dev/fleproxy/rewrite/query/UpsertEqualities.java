package dev.fleproxy.rewrite.query;

import dev.fleproxy.protocol.Refusal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The equality conditions of an upsert's filter, which MongoDB starts the document it inserts
 * from: a field's plain value, {@code $eq} (beside other operators too), a one-element
 * {@code $in} (MongoDB parses it as {@code $eq}), through {@code $and} and an {@code $or} of one
 * clause (which MongoDB optimizes away); every other condition ignored; a path given twice, or
 * one under another, refused as the server refuses it.
 */
public final class UpsertEqualities {
    private UpsertEqualities() {
    }

    /** The filter's equalities, path → value, in its order. */
    public static BsonDocument of(BsonDocument filter, String ns) {
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
}
