package dev.fleproxy.rewrite.scan;

import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.evaluate.DocumentFilter;
import dev.fleproxy.rewrite.evaluate.UpdateArithmetic;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.PathKind;
import dev.fleproxy.rewrite.read.FilterSplit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * One update or delete statement the proxy carries out itself: the server's part of its filter,
 * what the proxy matches on plaintext, and for an update the operators it computes on plaintext
 * ($inc, $mul, $min, $max of encrypted fields) apart from those the server applies as usual.
 *
 * @param multi    every matching document (update's multi, delete's limit 0), or the first only
 * @param update   the update as the client wrote it (null for a delete)
 * @param computed the arithmetic on encrypted paths: operator → (path → argument)
 * @param upsert   the equalities of its filter when it upserts ({@link UpsertSeed}), else null
 * @param sealedSets the paths of its $set that hold encrypted values (left out when unchanged: {@link NoOpWrites})
 * @param hint     the statement's hint (an index name or key pattern), or null: its candidates' read carries it,
 *                 so the server reads (and refuses) with the index it would use for the write
 */
record WriteStatement(FilterSplit split, boolean multi, BsonDocument update, Map<String, BsonDocument> computed,
                      BsonDocument upsert, List<String> sealedSets, BsonValue hint) {

    WriteStatement(FilterSplit split, boolean multi, BsonDocument update, Map<String, BsonDocument> computed,
                   BsonValue hint) {
        this(split, multi, update, computed, null, List.of(), hint);
    }

    /**
     * The update to send for one document: the computed operators become a $set of their results,
     * and a $set of an encrypted field to the value it holds is left out, as is a replacement by
     * the document as it is ({@link NoOpWrites}); empty when nothing in the document changes.
     */
    BsonDocument updateFor(BsonDocument plain) {
        if (!update.isEmpty() && !update.getFirstKey().startsWith("$")) {
            return NoOpWrites.sameReplacement(plain, update) ? new BsonDocument() : update;
        }
        if (computed.isEmpty() && sealedSets.isEmpty()) {
            return update;
        }
        BsonDocument out = new BsonDocument();
        BsonDocument set = new BsonDocument();
        for (Map.Entry<String, BsonValue> op : update.entrySet()) {
            BsonDocument args = op.getValue().asDocument();
            BsonDocument kept = new BsonDocument();
            for (Map.Entry<String, BsonValue> a : args.entrySet()) {
                if (op.getKey().equals("$set") && sealedSets.contains(a.getKey())
                        && NoOpWrites.unchanged(plain, a.getKey(), a.getValue())) {
                    continue; // the server would find it unchanged, were it not sealed again
                }
                if (computed.containsKey(op.getKey()) && computed.get(op.getKey()).containsKey(a.getKey())) {
                    BsonValue now = UpdateArithmetic.get(plain, a.getKey());
                    BsonValue then = UpdateArithmetic.apply(op.getKey(), a.getKey(), now, a.getValue());
                    if (!then.equals(now)) { // unchanged (same type and value): not written, not counted modified
                        set.put(a.getKey(), then);
                    }
                } else {
                    kept.put(a.getKey(), a.getValue());
                }
            }
            if (!kept.isEmpty()) {
                out.put(op.getKey(), kept);
            }
        }
        if (!set.isEmpty()) {
            BsonDocument existing = out.containsKey("$set") ? out.getDocument("$set") : new BsonDocument();
            existing.putAll(set);
            out.put("$set", existing);
        }
        return out; // empty: nothing changes in this document
    }

    /** The top-level fields the computed operators write (guarded when absent: see EvaluatedWrite). */
    List<String> computedTopLevel() {
        List<String> out = new ArrayList<>();
        computed.values().forEach(args -> args.keySet().forEach(p -> out.add(p.split("\\.", 2)[0])));
        return out;
    }

    /**
     * The arithmetic operators of an update on encrypted paths, by operator; empty when the update
     * is a replacement or pipeline or computes nothing encrypted. A computed path under an
     * encrypted sub-document's prefix is refused (its envelope holds more than the value).
     */
    static Map<String, BsonDocument> computed(BsonValue u, CollectionContext ctx) {
        Map<String, BsonDocument> out = new java.util.LinkedHashMap<>();
        if (u == null || !u.isDocument() || u.asDocument().isEmpty() || !u.asDocument().getFirstKey().startsWith("$")) {
            return out;
        }
        for (Map.Entry<String, BsonValue> op : u.asDocument().entrySet()) {
            if (!UpdateArithmetic.computes(op.getKey()) || !op.getValue().isDocument()) {
                continue;
            }
            for (Map.Entry<String, BsonValue> a : op.getValue().asDocument().entrySet()) {
                PathKind kind = ctx.paths.classify(a.getKey()).kind();
                if (kind == PathKind.PREFIX) {
                    throw Refusal.command(ctx.ns(), op.getKey() + " of '" + a.getKey() + "', which holds encrypted fields");
                }
                if (kind != PathKind.NONE) {
                    out.computeIfAbsent(op.getKey(), k -> new BsonDocument()).put(a.getKey(), a.getValue());
                }
            }
        }
        return out;
    }

    /**
     * The paths of an update's $set that are encrypted fields or hold some, in its order; not a
     * positional path or one with an array index (the proxy does not follow those on plaintext
     * here; a path that meets an array in the document is written all the same: {@link NoOpWrites}).
     */
    static List<String> sealedSets(BsonValue u, CollectionContext ctx) {
        List<String> out = new ArrayList<>();
        if (u == null || !u.isDocument() || !u.asDocument().isDocument("$set")) {
            return out;
        }
        for (String path : u.asDocument().getDocument("$set").keySet()) {
            boolean positional = path.contains("$") || java.util.Arrays.stream(path.split("\\.", -1))
                    .anyMatch(seg -> !seg.isEmpty() && seg.chars().allMatch(Character::isDigit));
            PathKind kind = positional ? PathKind.NONE : ctx.paths.classify(path).kind();
            if (kind == PathKind.EXACT || kind == PathKind.PREFIX) {
                out.add(path);
            }
        }
        return out;
    }

    /** The filter the proxy evaluates, or null when the server's part decides alone. */
    DocumentFilter residual() {
        return split.residual();
    }
}
