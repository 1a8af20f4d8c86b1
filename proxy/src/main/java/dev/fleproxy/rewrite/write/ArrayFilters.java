package dev.fleproxy.rewrite.write;

import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.EncryptedPaths;
import dev.fleproxy.rewrite.paths.PathKind;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The arrayFilters of an update statement, findAndModify or bulkWrite update on an encrypted
 * collection. A filter {@code {"e.price": 5}} is a query on the elements that {@code $[e]} stands
 * for in the update's paths ({@code "items.$[e].price"} → {@code items.price}). Such conditions
 * are refused, not rewritten, when they are on, inside or above an encrypted path: an encrypted
 * value cannot be compared by the server except by deterministic equality, and rewriting filters
 * whose meaning depends on the update's paths is easy to get subtly wrong. An identifier that no
 * update path uses is refused too (the proxy could not tell which array it filters).
 */
final class ArrayFilters {
    private ArrayFilters() {
    }

    /** Throws a Refusal unless every filter only touches unencrypted paths; never changes anything. */
    static void check(BsonValue arrayFilters, BsonValue update, CollectionContext ctx) {
        if (arrayFilters == null) {
            return;
        }
        if (!arrayFilters.isArray()) {
            throw Refusal.command(ctx.ns(), "arrayFilters that is not an array (the proxy only forwards what it checked)");
        }
        if (arrayFilters.asArray().isEmpty()) {
            return;
        }
        Map<String, Set<String>> arrays = elementPaths(update);
        for (BsonValue f : arrayFilters.asArray()) {
            if (!f.isDocument()) {
                throw Refusal.command(ctx.ns(), "an arrayFilters entry that is not a document");
            }
            filter(f.asDocument(), arrays, ctx);
        }
    }

    /** identifier → the raw paths of the array elements it stands for ("items.$[e]"), from the operators' paths. */
    private static Map<String, Set<String>> elementPaths(BsonValue update) {
        Map<String, Set<String>> out = new HashMap<>();
        if (update == null || !update.isDocument()) {
            return out; // a pipeline or replacement has no $[id]: every identifier is then unknown
        }
        for (BsonValue args : update.asDocument().values()) {
            if (!args.isDocument()) {
                continue;
            }
            for (String path : args.asDocument().keySet()) {
                String[] segs = path.split("\\.", -1);
                StringBuilder prefix = new StringBuilder();
                for (String seg : segs) {
                    if (prefix.length() > 0) {
                        prefix.append('.');
                    }
                    prefix.append(seg);
                    if (seg.length() > 3 && seg.startsWith("$[") && seg.endsWith("]")) {
                        out.computeIfAbsent(seg.substring(2, seg.length() - 1), k -> new LinkedHashSet<>())
                                .add(prefix.toString());
                    }
                }
            }
        }
        return out;
    }

    private static void filter(BsonDocument filter, Map<String, Set<String>> arrays, CollectionContext ctx) {
        for (Map.Entry<String, BsonValue> e : filter.entrySet()) {
            String k = e.getKey();
            if (k.equals("$and") || k.equals("$or") || k.equals("$nor")) {
                if (!e.getValue().isArray()) {
                    throw Refusal.command(ctx.ns(), k + " without an array in arrayFilters");
                }
                for (BsonValue clause : e.getValue().asArray()) {
                    if (!clause.isDocument()) {
                        throw Refusal.command(ctx.ns(), k + " with a clause that is not a document in arrayFilters");
                    }
                    filter(clause.asDocument(), arrays, ctx);
                }
                continue;
            }
            if (k.startsWith("$")) {
                throw Refusal.command(ctx.ns(), "the operator " + k + " in arrayFilters is not supported on an encrypted "
                        + "collection");
            }
            int dot = k.indexOf('.');
            String id = dot < 0 ? k : k.substring(0, dot);
            Set<String> elements = arrays.get(id);
            if (elements == null) {
                throw Refusal.command(ctx.ns(), "the arrayFilters identifier '" + id + "' is used in no $[" + id
                        + "] of the update's paths, so the proxy cannot tell which field it filters");
            }
            for (String element : elements) {
                String path = dot < 0 ? element : element + k.substring(dot);
                EncryptedPaths.Match m = ctx.paths.classify(path);
                if (m.kind() == PathKind.PREFIX) {
                    throw Refusal.command(ctx.ns(), "the arrayFilters condition on '" + k + "' compares '" + path
                            + "', which holds encrypted fields");
                }
                if (m.kind() != PathKind.NONE) {
                    throw Refusal.onField(ctx.ns(), m.rule().path(), "the arrayFilters condition on '" + k
                            + "' (it filters '" + path + "'; conditions on encrypted values are not rewritten)");
                }
            }
        }
    }
}
