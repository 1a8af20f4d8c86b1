package dev.fleproxy.rewrite.read;

import dev.fleproxy.policy.NamespaceNames;
import dev.fleproxy.protocol.Refusal;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The $out or $merge that ends an aggregate the proxy evaluates: the namespace it writes and, for
 * $merge, how each output document meets the target's (docs/query-model.md, "$out and $merge").
 * Only what the proxy carries out exactly as the server does is accepted: $out by name or {db,
 * coll} (no time series); $merge into a name or {db, coll}, with {@code on} (default _id) and the
 * modes MongoDB supports except the pipeline form of whenMatched (which would run an update
 * pipeline on the target's stored envelopes) and {@code let}.
 *
 * @param merge true for $merge, false for $out
 * @param on    the $merge's match fields (["_id"] by default; empty for $out)
 */
record OutputStage(boolean merge, String db, String coll, List<String> on, WhenMatched whenMatched,
                   WhenNotMatched whenNotMatched) {

    enum WhenMatched { REPLACE, KEEP_EXISTING, MERGE, FAIL }

    enum WhenNotMatched { INSERT, DISCARD, FAIL }

    /** The databases MongoDB refuses as an $out or $merge target. */
    private static final Set<String> INTERNAL_DATABASES = Set.of("admin", "local", "config");
    private static final Set<String> MERGE_FIELDS = Set.of("into", "on", "whenMatched", "whenNotMatched");

    String namespace() {
        return db + "." + coll;
    }

    String name() {
        return merge ? "$merge" : "$out";
    }

    /** True if the stage is an $out or a $merge (whatever its argument): it ends the pipeline. */
    static boolean is(BsonValue stage) {
        return stage.isDocument() && stage.asDocument().size() == 1
                && (stage.asDocument().containsKey("$out") || stage.asDocument().containsKey("$merge"));
    }

    /** The stage read, in an aggregate on {@code sourceNs} sent to {@code db}; refused as {@code why} says otherwise. */
    static OutputStage of(BsonDocument stage, String db, String sourceNs) {
        String name = stage.getFirstKey();
        BsonValue spec = stage.get(name);
        OutputStage out = name.equals("$out") ? out(spec, db, sourceNs) : merge(spec, db, sourceNs);
        String problem = NamespaceNames.namespaceProblem(out.namespace());
        if (problem != null || INTERNAL_DATABASES.contains(out.db) || out.coll.startsWith("system.")) {
            throw Refusal.command(sourceNs, name + " into " + out.namespace() + ", a namespace it may not write ("
                    + (problem != null ? problem : "an internal database or a system collection") + ")");
        }
        return out;
    }

    private static OutputStage out(BsonValue spec, String db, String sourceNs) {
        String[] ns = namespace(spec, db, sourceNs, "$out", Set.of("db", "coll"));
        return new OutputStage(false, ns[0], ns[1], List.of(), null, null);
    }

    private static OutputStage merge(BsonValue spec, String db, String sourceNs) {
        if (spec.isString()) {
            String[] ns = namespace(spec, db, sourceNs, "$merge", Set.of());
            return new OutputStage(true, ns[0], ns[1], List.of("_id"), WhenMatched.MERGE, WhenNotMatched.INSERT);
        }
        if (!spec.isDocument()) {
            throw Refusal.command(sourceNs, "a $merge whose argument is neither a collection name nor a document");
        }
        BsonDocument d = spec.asDocument();
        for (String k : d.keySet()) {
            if (!MERGE_FIELDS.contains(k)) {
                throw Refusal.command(sourceNs, "$merge with '" + k + "' after stages the proxy evaluates (it carries "
                        + "out into, on, whenMatched and whenNotMatched)");
            }
        }
        if (!d.containsKey("into")) {
            throw Refusal.command(sourceNs, "a $merge without into");
        }
        String[] ns = namespace(d.get("into"), db, sourceNs, "$merge", Set.of("db", "coll"));
        WhenMatched matched = WhenMatched.MERGE;
        if (d.containsKey("whenMatched")) {
            if (!d.isString("whenMatched")) {
                throw Refusal.command(sourceNs, "$merge with a pipeline as whenMatched after stages the proxy evaluates "
                        + "(it would run on the target's stored envelopes)");
            }
            matched = switch (d.getString("whenMatched").getValue()) {
                case "replace" -> WhenMatched.REPLACE;
                case "keepExisting" -> WhenMatched.KEEP_EXISTING;
                case "merge" -> WhenMatched.MERGE;
                case "fail" -> WhenMatched.FAIL;
                default -> throw Refusal.command(sourceNs, "a $merge whenMatched that is not replace, keepExisting, "
                        + "merge, fail or a pipeline");
            };
        }
        WhenNotMatched notMatched = WhenNotMatched.INSERT;
        if (d.containsKey("whenNotMatched")) {
            notMatched = switch (d.isString("whenNotMatched") ? d.getString("whenNotMatched").getValue() : "") {
                case "insert" -> WhenNotMatched.INSERT;
                case "discard" -> WhenNotMatched.DISCARD;
                case "fail" -> WhenNotMatched.FAIL;
                default -> throw Refusal.command(sourceNs, "a $merge whenNotMatched that is not insert, discard or fail");
            };
        }
        // MongoDB has no other modes with these: keepExisting and fail only with insert
        if ((matched == WhenMatched.KEEP_EXISTING || matched == WhenMatched.FAIL) && notMatched != WhenNotMatched.INSERT) {
            throw Refusal.command(sourceNs, "a $merge with whenMatched '" + d.getString("whenMatched").getValue()
                    + "' and whenNotMatched '" + d.getString("whenNotMatched").getValue() + "', a combination MongoDB "
                    + "does not support");
        }
        return new OutputStage(true, ns[0], ns[1], on(d.get("on"), sourceNs), matched, notMatched);
    }

    /** on: a field name or an array of distinct ones; _id when absent. */
    private static List<String> on(BsonValue v, String sourceNs) {
        if (v == null) {
            return List.of("_id");
        }
        List<String> out = new ArrayList<>();
        for (BsonValue f : v.isArray() ? v.asArray().getValues() : List.of(v)) {
            if (!f.isString() || f.asString().getValue().isEmpty() || f.asString().getValue().startsWith("$")
                    || out.contains(f.asString().getValue())) {
                throw Refusal.command(sourceNs, "a $merge whose on is not a field name or an array of distinct ones");
            }
            out.add(f.asString().getValue());
        }
        if (out.isEmpty()) {
            throw Refusal.command(sourceNs, "a $merge whose on is an empty array");
        }
        return out;
    }

    /** "coll" in db, or {db, coll} with only {@code allowed} keys: [db, coll]. */
    private static String[] namespace(BsonValue v, String db, String sourceNs, String stage, Set<String> allowed) {
        if (v.isString()) {
            return new String[] {db, v.asString().getValue()};
        }
        if (v.isDocument() && v.asDocument().isString("coll") && allowed.containsAll(v.asDocument().keySet())
                && (!v.asDocument().containsKey("db") || v.asDocument().isString("db"))) {
            BsonDocument d = v.asDocument();
            return new String[] {d.isString("db") ? d.getString("db").getValue() : db, d.getString("coll").getValue()};
        }
        throw Refusal.command(sourceNs, stage + " naming its target otherwise than as a collection name or {db, coll} "
                + "(a time-series $out is not carried out by the proxy)");
    }
}
