package dev.fleproxy.rewrite;

import dev.fleproxy.policy.Policy;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Aggregation pipelines on an encrypted collection. The first stage, if it is a $match, is
 * rewritten like a query filter. Later stages may pass encrypted values through — include or
 * exclude them, copy them to another name, group by a deterministic field, collect them with
 * $first/$last/$push ($addToSet for deterministic ones) — and the reply decrypts them wherever they
 * end up; names they were copied to are then treated as encrypted too. Any stage that would
 * compare, sort, compute on or look inside an encrypted value is refused, and so are $lookup,
 * $graphLookup and $unionWith from an encrypted collection and $out/$merge from or into one.
 * Stages this analyzer does not know are refused if they mention an encrypted field at all.
 */
final class PipelineAnalyzer {
    private static final Set<String> NO_FIELDS = Set.of("$limit", "$skip", "$sample", "$count", "$collStats",
            "$indexStats", "$planCacheStats", "$currentOp", "$listSessions", "$listLocalSessions", "$changeStream",
            "$documents");
    private static final Set<String> PASSING_ACCUMULATORS = Set.of("$first", "$last", "$push");

    private PipelineAnalyzer() {
    }

    /** An aggregate on an encrypted collection: the first $match rewritten, the rest checked. */
    static BsonArray rewriteAggregate(BsonArray pipeline, CollectionContext ctx, Policy policy, String db) {
        CrossReferences.pipeline(pipeline, policy, db, ctx.ns()); // also inside sub-pipelines
        PipelineSchema schema = new PipelineSchema(ctx);
        BsonValue first = null;
        for (int i = 0; i < pipeline.size(); i++) {
            BsonDocument stage = stage(pipeline.get(i), ctx);
            if (i == 0 && isStage(stage, "$match")) {
                BsonDocument filter = stage.getDocument("$match");
                BsonDocument rewritten = FilterRewriter.rewrite(filter, ctx);
                first = rewritten == filter ? null : new BsonDocument("$match", rewritten);
            } else {
                check(stage, schema, policy, db, true);
            }
        }
        if (first == null) {
            return pipeline;
        }
        BsonValue newFirst = first;
        int[] index = {0};
        return CopyOnChange.map(pipeline, stage -> index[0]++ == 0 ? newFirst : stage);
    }

    /**
     * A stage as the server requires it, a document with exactly one key; anything else is refused
     * rather than forwarded unexamined (only its first key would have been looked at).
     */
    static BsonDocument stage(BsonValue stage, CollectionContext ctx) {
        if (!stage.isDocument() || stage.asDocument().size() != 1) {
            throw Refusal.command(ctx.ns(), "a pipeline stage that is not a document with exactly one key");
        }
        return stage.asDocument();
    }

    /** The argument of a stage that takes a document. */
    private static BsonDocument spec(BsonValue spec, String stage, PipelineSchema s) {
        if (!spec.isDocument()) {
            throw Refusal.command(s.ctx.ns(), "the stage " + stage + " with an argument that is not a document");
        }
        return spec.asDocument();
    }

    private static boolean isStage(BsonValue stage, String name) {
        return stage.isDocument() && stage.asDocument().size() == 1 && stage.asDocument().containsKey(name)
                && stage.asDocument().get(name).isDocument();
    }

    private static void check(BsonValue stageValue, PipelineSchema s, Policy policy, String db, boolean aggregate) {
        BsonDocument stage = stage(stageValue, s.ctx);
        String name = stage.getFirstKey();
        BsonValue spec = stage.get(name);
        if (NO_FIELDS.contains(name)) {
            return;
        }
        switch (name) {
            case "$match" -> {
                for (Map.Entry<String, BsonValue> e : spec(spec, name, s).entrySet()) {
                    if (e.getKey().equals("$expr")) {
                        s.refuseReferences(e.getValue(), "$match $expr");
                    } else if (!e.getKey().startsWith("$") && s.kind(e.getKey()) != EncryptedPaths.Kind.NONE) {
                        throw s.refuse(e.getKey(), "a $match after the first stage (only a leading $match is rewritten)");
                    } else if (e.getKey().startsWith("$")) {
                        s.refuseMentions(e.getValue(), "$match");
                    }
                }
            }
            case "$sort" -> {
                for (String k : spec(spec, name, s).keySet()) {
                    if (s.kind(k) != EncryptedPaths.Kind.NONE) {
                        throw s.refuse(k, "$sort (it would order ciphertexts)");
                    }
                }
            }
            case "$project", "$addFields", "$set" -> projection(spec(spec, name, s), "", s, name);
            case "$unset" -> {
                // removing fields is always fine
            }
            case "$group" -> group(spec(spec, name, s), s);
            case "$unwind" -> {
                BsonValue path = spec.isDocument() ? spec.asDocument().get("path") : spec;
                if (path != null) {
                    s.refuseReferences(path, "$unwind");
                }
            }
            case "$replaceRoot", "$replaceWith" -> {
                BsonValue root = name.equals("$replaceRoot") && spec.isDocument() ? spec.asDocument().get("newRoot") : spec;
                String ref = root == null ? null : Expressions.reference(root);
                if (ref == null || !ref.isEmpty()) {
                    s.refuseReferences(root == null ? spec : root, name);
                }
            }
            case "$facet" -> {
                for (BsonValue sub : spec(spec, name, s).values()) {
                    if (!sub.isArray()) {
                        throw Refusal.command(s.ctx.ns(), "a $facet whose pipeline is not an array");
                    }
                    for (BsonValue st : sub.asArray()) {
                        check(st, s, policy, db, aggregate);
                    }
                }
            }
            case "$lookup", "$graphLookup", "$unionWith", "$out", "$merge" -> {
                if (name.equals("$out") || name.equals("$merge")) {
                    throw Refusal.command(s.ctx.ns(), name + " would copy encrypted data out of its collection's policy");
                }
                String from = CrossReferences.foreignCollection(name, spec, db);
                if (from != null && policy.get(from) != null) {
                    throw Refusal.command(s.ctx.ns(), name + " with the encrypted collection " + from + " is not supported");
                }
                s.refuseMentions(spec, name);
            }
            default -> s.refuseMentions(spec, name);
        }
    }

    /** $project/$addFields/$set: inclusion, exclusion and plain copies of encrypted values pass. */
    private static void projection(BsonValue spec, String prefix, PipelineSchema s, String stage) {
        if (!spec.isDocument()) {
            return;
        }
        for (Map.Entry<String, BsonValue> e : spec.asDocument().entrySet()) {
            String out = prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey();
            BsonValue v = e.getValue();
            if (v.isNumber() || v.isBoolean()) {
                continue;
            }
            String ref = Expressions.reference(v);
            if (ref != null) {
                EncryptedPaths.Kind k = s.kind(ref);
                if (k == EncryptedPaths.Kind.INSIDE) {
                    throw s.refuse(ref, stage + " of '$" + ref + "' (inside the encrypted value)");
                }
                if (k != EncryptedPaths.Kind.NONE) {
                    s.derived.add(out);
                }
                continue;
            }
            if (v.isDocument() && !v.asDocument().isEmpty() && !v.asDocument().getFirstKey().startsWith("$")) {
                projection(v, out, s, stage);
                continue;
            }
            s.refuseReferences(v, stage);
        }
    }

    private static void group(BsonValue spec, PipelineSchema s) {
        if (!spec.isDocument()) {
            return;
        }
        for (Map.Entry<String, BsonValue> e : spec.asDocument().entrySet()) {
            String out = e.getKey();
            BsonValue v = e.getValue();
            if (out.equals("_id")) {
                groupKey(v, s, "_id");
                continue;
            }
            if (!v.isDocument() || v.asDocument().size() != 1) {
                s.refuseReferences(v, "$group");
                continue;
            }
            String acc = v.asDocument().getFirstKey();
            BsonValue arg = v.asDocument().get(acc);
            String ref = Expressions.reference(arg);
            if (ref != null && s.kind(ref) != EncryptedPaths.Kind.NONE) {
                boolean passes = PASSING_ACCUMULATORS.contains(acc)
                        || (acc.equals("$addToSet") && s.deterministic(ref));
                if (!passes || s.kind(ref) == EncryptedPaths.Kind.INSIDE) {
                    throw s.refuse(ref, "$group " + acc + " of '$" + ref + "'");
                }
                s.derived.add(out);
            } else {
                s.refuseReferences(arg, "$group " + acc);
            }
        }
    }

    private static void groupKey(BsonValue v, PipelineSchema s, String out) {
        String ref = Expressions.reference(v);
        if (ref != null) {
            if (s.kind(ref) == EncryptedPaths.Kind.NONE) {
                return;
            }
            if (!s.deterministic(ref)) {
                throw s.refuse(ref, "$group by '$" + ref + "' (only deterministic fields group correctly)");
            }
            s.derived.add(out);
            return;
        }
        if (v.isDocument() && !v.asDocument().isEmpty() && !v.asDocument().getFirstKey().startsWith("$")) {
            for (Map.Entry<String, BsonValue> e : v.asDocument().entrySet()) {
                groupKey(e.getValue(), s, out + "." + e.getKey());
            }
            return;
        }
        s.refuseReferences(v, "$group _id");
    }
}
