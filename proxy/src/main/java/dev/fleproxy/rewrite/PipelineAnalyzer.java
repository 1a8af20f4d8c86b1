package dev.fleproxy.rewrite;

import dev.fleproxy.policy.Policy;
import java.util.HashSet;
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

    /** Names that hold encrypted values after earlier stages copied them there. */
    private static final class Schema {
        final CollectionContext ctx;
        final Set<String> derived = new HashSet<>();

        Schema(CollectionContext ctx) {
            this.ctx = ctx;
        }

        /** Like {@link EncryptedPaths#classify}, also knowing the copies. */
        EncryptedPaths.Kind kind(String path) {
            EncryptedPaths.Kind k = ctx.paths.classify(path).kind();
            if (k != EncryptedPaths.Kind.NONE) {
                return k;
            }
            String n = EncryptedPaths.normalize(path);
            for (String d : derived) {
                if (n.equals(d)) {
                    return EncryptedPaths.Kind.EXACT;
                }
                if (n.startsWith(d + ".")) {
                    return EncryptedPaths.Kind.INSIDE;
                }
                if (n.isEmpty() || d.startsWith(n + ".")) {
                    return EncryptedPaths.Kind.PREFIX;
                }
            }
            return EncryptedPaths.Kind.NONE;
        }

        boolean deterministic(String path) {
            EncryptedPaths.Match m = ctx.paths.classify(path);
            return m.kind() == EncryptedPaths.Kind.EXACT && m.rule().deterministic();
        }

        Refusal refuse(String path, String what) {
            EncryptedPaths.Match m = ctx.paths.classify(path);
            return Refusal.onField(ctx.ns(), m.rule() != null ? m.rule().path() : path, what);
        }

        void refuseReferences(BsonValue expr, String where) {
            String ref = Expressions.reference(expr);
            if (ref != null) {
                if (kind(ref) != EncryptedPaths.Kind.NONE) {
                    throw refuse(ref.isEmpty() ? "(the whole document)" : ref, where + " computing on '$" + ref + "'");
                }
                return;
            }
            if (expr.isDocument()) {
                expr.asDocument().values().forEach(v -> refuseReferences(v, where));
            } else if (expr.isArray()) {
                expr.asArray().forEach(v -> refuseReferences(v, where));
            }
        }

        /** Any string or key naming an encrypted field, for stages whose syntax we do not know. */
        void refuseMentions(BsonValue spec, String stage) {
            if (spec.isString()) {
                String s = spec.asString().getValue();
                String path = s.startsWith("$") ? Expressions.reference(spec) : s;
                if (path != null && !path.isEmpty() && kind(path) != EncryptedPaths.Kind.NONE) {
                    throw refuse(path, "the stage " + stage);
                }
            } else if (spec.isDocument()) {
                for (Map.Entry<String, BsonValue> e : spec.asDocument().entrySet()) {
                    if (!e.getKey().startsWith("$") && kind(e.getKey()) != EncryptedPaths.Kind.NONE) {
                        throw refuse(e.getKey(), "the stage " + stage);
                    }
                    refuseMentions(e.getValue(), stage);
                }
            } else if (spec.isArray()) {
                spec.asArray().forEach(v -> refuseMentions(v, stage));
            }
        }
    }

    /** An aggregate on an encrypted collection: the first $match rewritten, the rest checked. */
    static BsonArray rewriteAggregate(BsonArray pipeline, CollectionContext ctx, Policy policy, String db) {
        CrossReferences.pipeline(pipeline, policy, db, ctx.ns()); // also inside sub-pipelines
        Schema schema = new Schema(ctx);
        BsonArray out = new BsonArray(pipeline.size());
        boolean changed = false;
        for (int i = 0; i < pipeline.size(); i++) {
            BsonValue stage = stage(pipeline.get(i), ctx);
            BsonValue ns = stage;
            if (i == 0 && isStage(stage, "$match")) {
                BsonDocument filter = stage.asDocument().getDocument("$match");
                BsonDocument rewritten = FilterRewriter.rewrite(filter, ctx);
                if (rewritten != filter) {
                    ns = new BsonDocument("$match", rewritten);
                }
            } else {
                check(stage, schema, policy, db, true);
            }
            changed |= ns != stage;
            out.add(ns);
        }
        return changed ? out : pipeline;
    }

    /**
     * A stage as the server requires it, a document with exactly one key; anything else is refused
     * rather than forwarded unexamined (only its first key would have been looked at).
     */
    private static BsonDocument stage(BsonValue stage, CollectionContext ctx) {
        if (!stage.isDocument() || stage.asDocument().size() != 1) {
            throw Refusal.command(ctx.ns(), "a pipeline stage that is not a document with exactly one key");
        }
        return stage.asDocument();
    }

    /** The argument of a stage that takes a document. */
    private static BsonDocument spec(BsonValue spec, String stage, Schema s) {
        if (!spec.isDocument()) {
            throw Refusal.command(s.ctx.ns(), "the stage " + stage + " with an argument that is not a document");
        }
        return spec.asDocument();
    }

    private static boolean isStage(BsonValue stage, String name) {
        return stage.isDocument() && stage.asDocument().size() == 1 && stage.asDocument().containsKey(name)
                && stage.asDocument().get(name).isDocument();
    }

    private static void check(BsonValue stageValue, Schema s, Policy policy, String db, boolean aggregate) {
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
    private static void projection(BsonValue spec, String prefix, Schema s, String stage) {
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

    private static void group(BsonValue spec, Schema s) {
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

    private static void groupKey(BsonValue v, Schema s, String out) {
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

    /** Pipeline updates: copies of encrypted values are fine; computing on them or assigning to encrypted fields is not. */
    static void checkUpdatePipeline(BsonArray pipeline, CollectionContext ctx) {
        Schema s = new Schema(ctx);
        for (BsonValue stageValue : pipeline) {
            BsonDocument stage = stage(stageValue, ctx);
            String name = stage.getFirstKey();
            BsonValue spec = stage.get(name);
            switch (name) {
                case "$set", "$addFields", "$project" -> {
                    if (spec.isDocument()) {
                        for (Map.Entry<String, BsonValue> e : spec.asDocument().entrySet()) {
                            BsonValue v = e.getValue();
                            boolean inclusion = name.equals("$project") && (v.isNumber() || v.isBoolean());
                            if (!inclusion && s.kind(e.getKey()) != EncryptedPaths.Kind.NONE) {
                                throw s.refuse(e.getKey(), "a pipeline update assigning to it");
                            }
                            if (Expressions.reference(v) == null) {
                                s.refuseReferences(v, "a pipeline update");
                            } else if (s.kind(Expressions.reference(v)) == EncryptedPaths.Kind.INSIDE) {
                                throw s.refuse(Expressions.reference(v), "a pipeline update reading inside it");
                            }
                        }
                    }
                }
                case "$unset" -> {
                    // removal is fine
                }
                default -> s.refuseMentions(spec, "pipeline update stage " + name);
            }
        }
    }
}
