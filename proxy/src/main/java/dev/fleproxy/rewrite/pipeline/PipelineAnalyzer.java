package dev.fleproxy.rewrite.pipeline;

import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.bson.CopyOnChange;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.PathKind;
import dev.fleproxy.rewrite.paths.ReadShape;
import dev.fleproxy.rewrite.query.Expressions;
import dev.fleproxy.rewrite.query.FilterRewriter;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Aggregation pipelines on an encrypted collection. The first stage, if it is a $match, is
 * rewritten like a query filter. Later stages may pass encrypted values through — include or
 * exclude them, copy them to another name, collect them with $first/$last/$push (grouping by an
 * encrypted field is left to the proxy's evaluation) — and the reply decrypts them where they
 * end up, because each stage's effect on where envelopes are is followed ({@link ReadShape}):
 * names they were copied to are then treated as encrypted too, names given computed values or
 * filled by another collection hold nothing to decrypt. Any stage that would compare, sort,
 * compute on or look inside an encrypted value is refused, and so are $lookup, $graphLookup and
 * $unionWith with an encrypted collection, $unionWith of any collection into an encrypted one's
 * documents, and $out/$merge. Stages this analyzer does not know are refused.
 */
public final class PipelineAnalyzer {
    /** Stages that keep the documents' fields as they are (they filter, order or cut the stream). */
    private static final Set<String> KEEP_FIELDS = Set.of("$limit", "$skip", "$sample");
    /** Stages whose output documents are not the collection's: nothing in them is decrypted. */
    private static final Set<String> NEW_DOCUMENTS = Set.of("$count", "$collStats", "$indexStats",
            "$planCacheStats", "$currentOp", "$listSessions", "$listLocalSessions", "$documents");
    /** Stages that add fields they name (refused if a name is a policy field) and keep the rest. */
    private static final Set<String> ADD_NAMED_FIELDS = Set.of("$redact", "$geoNear", "$setWindowFields", "$densify",
            "$fill");
    /** Stages that replace the documents by groups of them, computed from fields they name. */
    private static final Set<String> GROUPING = Set.of("$sortByCount", "$bucket", "$bucketAuto");
    private static final Set<String> PASSING_ACCUMULATORS = Set.of("$first", "$last", "$push");

    private PipelineAnalyzer() {
    }

    /**
     * An aggregate on an encrypted collection: the first $match rewritten, the rest checked; the
     * schema ends with the shape of the documents the aggregate returns.
     */
    public static BsonArray rewriteAggregate(BsonArray pipeline, PipelineSchema schema, Policy policy, String db) {
        CollectionContext ctx = schema.ctx;
        ForeignStages.refuseEncrypted(pipeline, policy, db, ctx.ns()); // also inside sub-pipelines
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
    public static BsonDocument stage(BsonValue stage, CollectionContext ctx) {
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
        if (KEEP_FIELDS.contains(name)) {
            return;
        }
        if (NEW_DOCUMENTS.contains(name)) {
            s.refuseMentions(spec, name); // their arguments ($documents' literals, $currentOp's options) name none
            s.shape = ReadShape.none(s.ctx.policy);
            return;
        }
        if (ADD_NAMED_FIELDS.contains(name)) {
            s.refuseMentions(spec, name);
            return;
        }
        if (GROUPING.contains(name)) {
            s.refuseMentions(spec, name);
            s.shape = ReadShape.none(s.ctx.policy);
            return;
        }
        switch (name) {
            case "$changeStream" -> {
                if (!s.ctx.paths.searchIndexed().isEmpty()) {
                    // an update's event lists the fields it set by name, the search tags among them
                    throw Refusal.command(s.ctx.ns(), "$changeStream on a collection with a search index (its "
                            + "events would carry the proxy's tags)");
                }
                s.shape = changeEvents(s.shape);
            }
            case "$match" -> match(spec(spec, name, s), s);
            case "$sort" -> {
                for (String k : spec(spec, name, s).keySet()) {
                    if (s.kind(k) != PathKind.NONE) {
                        throw s.refuse(k, "$sort (it would order ciphertexts)");
                    }
                }
            }
            case "$project", "$addFields", "$set" -> projection(spec(spec, name, s), "", s, name, name.equals("$project"));
            case "$unset" -> {
                // removing fields is always fine
            }
            case "$group" -> group(spec(spec, name, s), s);
            case "$unwind" -> unwind(spec, s);
            case "$replaceRoot", "$replaceWith" -> replaceRoot(name, spec, s);
            case "$facet" -> facet(spec(spec, name, s), s, policy, db, aggregate);
            case "$lookup", "$graphLookup", "$unionWith", "$out", "$merge" -> ForeignStages.check(name, spec, s, policy, db);
            default -> throw Refusal.command(s.ctx.ns(), "the stage " + name + " is not supported on an encrypted "
                    + "collection (the proxy cannot tell what it does with encrypted values)");
        }
    }

    /** A $match after the first stage: not rewritten, so it may not name an encrypted field. */
    private static void match(BsonDocument spec, PipelineSchema s) {
        for (Map.Entry<String, BsonValue> e : spec.entrySet()) {
            if (e.getKey().equals("$expr")) {
                s.refuseReferences(e.getValue(), "$match $expr");
            } else if (!e.getKey().startsWith("$") && s.kind(e.getKey()) != PathKind.NONE) {
                throw s.refuse(e.getKey(), "a $match after the first stage (only a leading $match is rewritten)");
            } else if (e.getKey().startsWith("$")) {
                s.refuseMentions(e.getValue(), "$match");
            }
        }
    }

    /** $unwind: of a plain array only; its index field holds nothing to decrypt. */
    private static void unwind(BsonValue spec, PipelineSchema s) {
        BsonValue path = spec.isDocument() ? spec.asDocument().get("path") : spec;
        if (path != null) {
            s.refuseReferences(path, "$unwind");
        }
        if (spec.isDocument() && spec.asDocument().isString("includeArrayIndex")) {
            String index = spec.asDocument().getString("includeArrayIndex").getValue();
            s.refuseMentions(spec.asDocument().get("includeArrayIndex"), "$unwind");
            s.shape.assign(index, null);
        }
    }

    /** $replaceRoot/$replaceWith: "$$ROOT" keeps the documents; anything else holds nothing to decrypt. */
    private static void replaceRoot(String name, BsonValue spec, PipelineSchema s) {
        BsonValue root = name.equals("$replaceRoot") && spec.isDocument() ? spec.asDocument().get("newRoot") : spec;
        String ref = root == null ? null : Expressions.reference(root);
        if (ref == null || !ref.isEmpty()) {
            // a sub-document or a computed one: refused if it holds encrypted values, else nothing to decrypt
            s.refuseReferences(root == null ? spec : root, name);
            // and no literal under a policy field's name, which would reach the server in clear
            Expressions.refuseMentions(root == null ? spec : root, s, "the stage " + name + " naming it", false);
            s.shape = ReadShape.none(s.ctx.policy);
        }
    }

    /** $facet: each sub-pipeline checked on the documents the stage receives; each facet one array of its output. */
    private static void facet(BsonDocument spec, PipelineSchema s, Policy policy, String db, boolean aggregate) {
        ReadShape in = s.shape;
        ReadShape out = ReadShape.none(s.ctx.policy);
        for (Map.Entry<String, BsonValue> facet : spec.entrySet()) {
            if (!facet.getValue().isArray()) {
                throw Refusal.command(s.ctx.ns(), "a $facet whose pipeline is not an array");
            }
            s.shape = in.copy();
            for (BsonValue st : facet.getValue().asArray()) {
                check(st, s, policy, db, aggregate);
            }
            out.root.replaceChild(s.shape.root.copyAs(facet.getKey())); // {facet: [documents]}
        }
        s.shape = out;
    }

    /** A change stream's events: the document as it is (or was) holds the collection's fields; the rest none. */
    private static ReadShape changeEvents(ReadShape documents) {
        ReadShape events = ReadShape.none(documents.policy);
        events.assign("fullDocument", documents.root);
        events.assign("fullDocumentBeforeChange", documents.root);
        return events;
    }

    /**
     * $project/$addFields/$set: inclusion, exclusion and plain copies of encrypted values pass (a
     * copy carries its source field along); a name given any other value holds nothing to decrypt.
     */
    private static void projection(BsonValue spec, String prefix, PipelineSchema s, String stage, boolean project) {
        if (!spec.isDocument()) {
            return;
        }
        for (Map.Entry<String, BsonValue> e : spec.asDocument().entrySet()) {
            String out = prefix.isEmpty() ? e.getKey() : prefix + "." + e.getKey();
            BsonValue v = e.getValue();
            if (v.isNumber() || v.isBoolean()) {
                if (!project) {
                    refuseWritten(out, s, stage);
                    s.shape.assign(out, null); // $addFields/$set: a literal value, not an inclusion
                }
                continue;
            }
            String ref = Expressions.reference(v);
            if (ref != null) {
                PathKind k = s.kind(ref);
                if (k == PathKind.INSIDE) {
                    throw s.refuse(ref, stage + " of '$" + ref + "' (inside the encrypted value)");
                }
                s.shape.assign(out, s.shape.at(ref));
                continue;
            }
            if (v.isDocument() && !v.asDocument().isEmpty() && !v.asDocument().getFirstKey().startsWith("$")) {
                projection(v, out, s, stage, project);
                continue;
            }
            s.refuseReferences(v, stage);
            refuseWritten(out, s, stage);
            s.shape.assign(out, null);
        }
    }

    /**
     * A literal or computed value given a policy field's name: the constant would reach the server
     * in clear, under the very name a write seals. A pipeline only reads, so nothing here seals it;
     * it is refused (a copy of a field, "$path", is no constant and passes).
     */
    private static void refuseWritten(String out, PipelineSchema s, String stage) {
        if (s.kind(out) != PathKind.NONE) {
            throw s.refuse(out, stage + " giving '" + out + "' a literal or computed value (the proxy seals a "
                    + "policy field's values only where documents are written)");
        }
    }

    /** $group: its output documents hold the group key and the accumulators, nothing else. */
    private static void group(BsonValue spec, PipelineSchema s) {
        if (!spec.isDocument()) {
            return;
        }
        ReadShape groups = ReadShape.none(s.ctx.policy);
        for (Map.Entry<String, BsonValue> e : spec.asDocument().entrySet()) {
            String out = e.getKey();
            BsonValue v = e.getValue();
            if (out.equals("_id")) {
                groupKey(v, s, "_id", groups);
                continue;
            }
            if (!v.isDocument() || v.asDocument().size() != 1) {
                s.refuseReferences(v, "$group");
                refuseWritten(out, s, "$group");
                continue;
            }
            String acc = v.asDocument().getFirstKey();
            BsonValue arg = v.asDocument().get(acc);
            String ref = Expressions.reference(arg);
            if (ref != null && s.kind(ref) != PathKind.NONE) {
                // ($addToSet of envelopes would keep 1 and 1.0 apart: evaluated by the proxy instead)
                boolean passes = PASSING_ACCUMULATORS.contains(acc);
                if (!passes || s.kind(ref) == PathKind.INSIDE) {
                    throw s.refuse(ref, "$group " + acc + " of '$" + ref + "'");
                }
                groups.assignCopy(out, s.shape.at(ref));
            } else {
                s.refuseReferences(arg, "$group " + acc);
                if (ref == null) {
                    refuseWritten(out, s, "$group " + acc);
                }
            }
        }
        s.shape = groups;
    }

    private static void groupKey(BsonValue v, PipelineSchema s, String out, ReadShape groups) {
        String ref = Expressions.reference(v);
        if (ref != null) {
            if (s.kind(ref) == PathKind.NONE) {
                return;
            }
            // Not even a deterministic one: its envelopes group a stored null apart from a missing field,
            // and 1 apart from 1.0, where the server groups plaintext together. The proxy evaluates it
            // (EvaluatedReads), or the refusal stands.
            throw s.refuse(ref, "$group by '$" + ref + "' (envelopes do not group as their values do)");
        }
        if (v.isDocument() && !v.asDocument().isEmpty() && !v.asDocument().getFirstKey().startsWith("$")) {
            for (Map.Entry<String, BsonValue> e : v.asDocument().entrySet()) {
                groupKey(e.getValue(), s, out + "." + e.getKey(), groups);
            }
            return;
        }
        s.refuseReferences(v, "$group _id");
    }
}
