package dev.fleproxy.rewrite.write;

import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.bson.CopyOnChange;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.EncryptedPaths;
import dev.fleproxy.rewrite.paths.PathKind;
import dev.fleproxy.rewrite.query.NumericForms;
import dev.fleproxy.rewrite.query.UpsertEqualities;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * An upsert the server carries out inserts a document started from its filter's equalities
 * ({@link UpsertEqualities}). An equality on a deterministic field whose value has several
 * envelopes (a number's forms, or the envelopes under every key while the key changes) reaches
 * the server as a {@code $in} of them, from which the server starts nothing: the new document
 * would lack the field. So the field is put back as the update's own: {@code $setOnInsert} of the
 * envelope the server would have copied from a single equality (the value's own form under the
 * collection's key), unless the update's {@code $set}, {@code $setOnInsert} or {@code $unset}
 * already decides that path (as it would decide it after the server's start); for a pipeline, a
 * first stage setting the field where it is missing (on a matched document it is there: it
 * matched). A replacement starts from nothing of the filter but {@code _id}: it is left as it is.
 */
final class UpsertSeedsKept {
    /** Operators whose writing of a path replaces what the server would have started it as. */
    private static final List<String> DECIDING = List.of("$set", "$setOnInsert", "$unset");

    private UpsertSeedsKept() {
    }

    /**
     * The statement (or findAndModify) as rewritten, its update given back the fields its filter
     * would have started an inserted document with.
     *
     * @param original  the statement as the client sent it (its filter's values in plaintext)
     * @param rewritten the statement with its filter and update rewritten
     */
    static BsonDocument keep(BsonDocument original, BsonDocument rewritten, String filter, String update,
                             CollectionContext ctx) {
        if (!upserts(original.get("upsert"))) {
            return rewritten;
        }
        BsonValue q = original.get(filter);
        BsonValue u = rewritten.get(update);
        if (q == null || !q.isDocument() || u == null) {
            return rewritten;
        }
        BsonDocument seeds = seeds(q.asDocument(), ctx);
        if (seeds.isEmpty()) {
            return rewritten;
        }
        BsonValue kept;
        if (u.isArray()) {
            kept = pipeline(u.asArray(), seeds);
        } else if (u.isDocument() && !u.asDocument().isEmpty() && u.asDocument().getFirstKey().startsWith("$")) {
            kept = operators(u.asDocument(), seeds);
        } else {
            return rewritten; // a replacement: MongoDB takes nothing from the filter but _id
        }
        return CopyOnChange.with(rewritten, update, kept, u);
    }

    /** The server's reading of upsert: true, or a non-zero number. */
    private static boolean upserts(BsonValue v) {
        return v != null && (v.isBoolean() ? v.asBoolean().getValue() : v.isNumber() && v.asNumber().doubleValue() != 0);
    }

    /** Path → envelope, for each equality of the filter that the server is sent as membership. */
    private static BsonDocument seeds(BsonDocument q, CollectionContext ctx) {
        BsonDocument equalities;
        try {
            equalities = UpsertEqualities.of(q, ctx.ns());
        } catch (Refusal serverRefusesToo) {
            return new BsonDocument(); // a path twice: the server answers as it does today
        }
        boolean keyChange = !ctx.policy.previousKeys().isEmpty();
        BsonDocument out = new BsonDocument();
        for (Map.Entry<String, BsonValue> e : equalities.entrySet()) {
            EncryptedPaths.Match m = ctx.paths.classify(e.getKey());
            if (m.kind() == PathKind.EXACT && m.rule().deterministic()
                    && (keyChange || NumericForms.several(e.getValue()))) {
                out.put(e.getKey(), ctx.encryptForQuery(m.rule(), e.getValue()));
            }
        }
        return out;
    }

    private static BsonDocument operators(BsonDocument u, BsonDocument seeds) {
        BsonDocument onInsert = new BsonDocument();
        if (u.isDocument("$setOnInsert")) {
            onInsert.putAll(u.getDocument("$setOnInsert")); // a raw document cannot take more
        }
        boolean added = false;
        for (Map.Entry<String, BsonValue> seed : seeds.entrySet()) {
            if (!decided(u, seed.getKey())) {
                onInsert.put(seed.getKey(), seed.getValue());
                added = true;
            }
        }
        if (!added) {
            return u;
        }
        BsonDocument out = new BsonDocument();
        for (Map.Entry<String, BsonValue> e : u.entrySet()) {
            out.append(e.getKey(), e.getKey().equals("$setOnInsert") ? onInsert : e.getValue());
        }
        out.putIfAbsent("$setOnInsert", onInsert);
        return out;
    }

    /**
     * True if the update's $set, $setOnInsert or $unset writes the path, one above it or one under
     * it. Any other operator on it is left to meet the added $setOnInsert: the server refuses the
     * conflict, as it refuses e.g. a $pop of the number it would have started the field as.
     */
    private static boolean decided(BsonDocument u, String path) {
        for (String op : DECIDING) {
            if (u.isDocument(op)) {
                for (String written : u.getDocument(op).keySet()) {
                    if (written.equals(path) || written.startsWith(path + ".") || path.startsWith(written + ".")) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** A first stage: each field set to its envelope where it is missing (only in a document being inserted). */
    private static BsonArray pipeline(BsonArray stages, BsonDocument seeds) {
        BsonDocument set = new BsonDocument();
        for (Map.Entry<String, BsonValue> seed : seeds.entrySet()) {
            set.put(seed.getKey(), new BsonDocument("$ifNull",
                    new BsonArray(List.of(new BsonString("$" + seed.getKey()), seed.getValue()))));
        }
        BsonArray out = new BsonArray();
        out.add(new BsonDocument("$set", set));
        out.addAll(stages);
        return out;
    }
}
