package dev.fleproxy.access;

import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldAccess;
import dev.fleproxy.policy.FieldRule;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.write.MessageDocuments;
import dev.fleproxy.wire.OpMsg;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.BiPredicate;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The query and write rules of policy fields (docs/access.md): a command whose filters, sorts or
 * pipeline name a field the connection's identity may not query, or whose documents or update
 * name one it may not write, is refused (9720040) before anything is forwarded. Read
 * conservatively: every field path a filter, sort or pipeline names counts (a path above a field,
 * inside it, or a "$path" reference in an expression), so what is refused may be more than what
 * would reveal, never less.
 */
final class FieldUse {
    private FieldUse() {
    }

    /** Refuses the command if it uses a field of {@code cp} that {@code identity} may not query or write. */
    static void check(CommandSpec spec, OpMsg msg, CollectionPolicy cp, String identity) {
        if (spec.rewriter() == null) {
            return;
        }
        BsonDocument body = msg.body();
        switch (spec.rewriter()) {
            case FIND -> {
                query(cp, identity, body.get("filter"), body.get("sort"), body.get("min"), body.get("max"));
                hint(cp, identity, body.get("hint"));
            }
            case COUNT -> {
                query(cp, identity, body.get("query"));
                hint(cp, identity, body.get("hint"));
            }
            case DISTINCT -> {
                query(cp, identity, body.get("query"), keyPath(body.get("key")));
                hint(cp, identity, body.get("hint"));
            }
            case AGGREGATE -> {
                query(cp, identity, body.get("pipeline"));
                hint(cp, identity, body.get("hint"));
            }
            case FIND_AND_MODIFY -> {
                query(cp, identity, body.get("query"), body.get("sort"));
                hint(cp, identity, body.get("hint"));
                update(cp, identity, body.get("update"));
                deniedInReturnedDocument(cp, identity, body.get("fields"));
            }
            case UPDATE -> MessageDocuments.of(msg, "updates").forEach(st -> {
                query(cp, identity, st.get("q"));
                hint(cp, identity, st.get("hint"));
                update(cp, identity, st.get("u"));
            });
            case DELETE -> MessageDocuments.of(msg, "deletes").forEach(st -> {
                query(cp, identity, st.get("q"));
                hint(cp, identity, st.get("hint"));
            });
            case INSERT -> MessageDocuments.of(msg, "documents").forEach(d -> write(cp, identity, d));
            case CREATE_INDEXES -> indexes(cp, identity, body.get("indexes"));
            case COLLECTION_OPTIONS -> {
                BsonValue index = body.get("index");
                query(cp, identity, body.get("validator"), body.get("pipeline"),
                        index != null && index.isDocument() ? index.asDocument().get("keyPattern") : null);
                if (mentions(body.get("validator"), "$jsonSchema")) {
                    everyField(cp, identity, "a $jsonSchema validator (it may name any field)");
                }
                if (index != null && index.isDocument() && !index.asDocument().containsKey("keyPattern")) {
                    everyField(cp, identity, "an index named by its name (made unique, it could be any field's)");
                }
            }
            default -> {
            }
        }
    }

    /**
     * An aggregate on {@code cp} ending in $out or $merge writes what it reads (the proxy carries
     * it out, docs/query-model.md): the identity must see every field of the collection in
     * plaintext (a mask would be written as data, and a field it may not see stored where it may
     * read it), may write every field of an encrypted target, and may query the target's fields
     * its $merge matches on. Read from the last stage's names only; what the stage is otherwise
     * is the encryption filter's to check.
     */
    static void output(BsonDocument body, Policy p, CollectionPolicy cp, String identity) {
        BsonValue pipeline = body.get("pipeline");
        if (pipeline == null || !pipeline.isArray() || pipeline.asArray().isEmpty()) {
            return;
        }
        BsonValue last = pipeline.asArray().get(pipeline.asArray().size() - 1);
        if (!last.isDocument() || last.asDocument().size() != 1
                || !Set.of("$out", "$merge").contains(last.asDocument().getFirstKey())) {
            return;
        }
        String stage = last.asDocument().getFirstKey();
        for (FieldRule r : cp.fields().values()) {
            if (!r.access().reveals(identity)) {
                throw new Refusal(ProxyError.FIELD_ACCESS_DENIED, cp.namespace() + ": field '" + r.path() + "' is not "
                        + "revealed to identity '" + identity + "', and " + stage + " would write what it sees as data");
            }
        }
        BsonValue spec = last.asDocument().get(stage);
        BsonValue into = stage.equals("$merge") && spec.isDocument() ? spec.asDocument().get("into") : spec;
        String db = body.isString("$db") ? body.getString("$db").getValue() : "";
        String ns = into == null ? null : into.isString() ? db + "." + into.asString().getValue()
                : into.isDocument() && into.asDocument().isString("coll")
                ? (into.asDocument().isString("db") ? into.asDocument().getString("db").getValue() : db) + "."
                + into.asDocument().getString("coll").getValue() : null;
        CollectionPolicy target = ns == null ? null : p.get(ns);
        if (target == null) {
            return;
        }
        for (FieldRule r : target.fields().values()) {
            if (!r.access().mayWrite(identity)) {
                throw new Refusal(ProxyError.FIELD_ACCESS_DENIED, target.namespace() + ": field '" + r.path()
                        + "' may not be written by identity '" + identity + "', and " + stage + " may write any field");
            }
        }
        if (stage.equals("$merge") && spec.isDocument()) {
            BsonValue on = spec.asDocument().get("on");
            BsonDocument named = new BsonDocument();
            for (BsonValue f : on == null ? java.util.List.<BsonValue>of() : on.isArray() ? on.asArray().getValues()
                    : java.util.List.of(on)) {
                if (f.isString()) {
                    named.put(f.asString().getValue(), new org.bson.BsonInt32(1));
                }
            }
            query(target, identity, named);
        }
    }

    /** A bulkWrite operation on this collection: its filter queried, its document or update written. */
    static void checkOperation(BsonDocument op, CollectionPolicy cp, String identity) {
        query(cp, identity, op.get("filter"));
        hint(cp, identity, op.get("hint"));
        write(cp, identity, op.get("document"));
        update(cp, identity, op.get("updateMods"));
    }

    /**
     * Update operators that set a field whatever it held: the outcome of any other (whether
     * {@code $max} or {@code $addToSet} changed the document, an arithmetic error) depends on the
     * stored value, so the fields they name count as queried too. A pipeline update may compute
     * from any field: all of it counts as queried.
     */
    private static final Set<String> BLIND_UPDATES = Set.of("$set", "$unset", "$setOnInsert", "$currentDate");

    private static void update(CollectionPolicy cp, String identity, BsonValue u) {
        if (u == null) {
            return;
        }
        write(cp, identity, u);
        if (u.isArray()) {
            query(cp, identity, u);
        } else if (u.isDocument()) {
            for (Map.Entry<String, BsonValue> op : u.asDocument().entrySet()) {
                if (op.getKey().startsWith("$") && !BLIND_UPDATES.contains(op.getKey())) {
                    query(cp, identity, op.getValue());
                }
            }
        }
    }

    /**
     * A hint chooses the index the server reads, and so the order of what it finds — an index on a
     * deterministic field puts the documents holding one value next to each other, and which
     * document an updateOne, deleteOne or findAndModify without sort takes is the first in that
     * order — and, for a sparse or partial index, which documents it finds. So the fields of a
     * hint's key pattern count as queried, as an index's key does; a hint naming an index by its
     * name could name any field's index, so it needs every field, but for {@code _id_} (always
     * the _id index). {@code $natural} names no field.
     */
    private static void hint(CollectionPolicy cp, String identity, BsonValue hint) {
        if (hint == null) {
            return;
        }
        if (hint.isDocument()) {
            query(cp, identity, hint);
        } else if (!(hint.isString() && hint.asString().getValue().equals("_id_"))) {
            everyField(cp, identity, "a hint naming an index by its name (it could be any field's index)");
        }
    }

    /**
     * An index on a field orders or constrains its stored values (a unique index turns every
     * later insert into an equality test): its key, filter and wildcard projection count as
     * queried, and a wildcard key ({@code $**}) names every field.
     */
    private static void indexes(CollectionPolicy cp, String identity, BsonValue indexes) {
        if (indexes == null || !indexes.isArray()) {
            return;
        }
        for (BsonValue index : indexes.asArray()) {
            if (!index.isDocument()) {
                continue;
            }
            BsonDocument d = index.asDocument();
            query(cp, identity, d.get("key"), d.get("partialFilterExpression"), d.get("wildcardProjection"));
            BsonValue key = d.get("key");
            if (key != null && key.isDocument()) {
                for (String k : key.asDocument().keySet()) {
                    if (k.equals("$**") || k.endsWith(".$**")) {
                        everyField(cp, identity, "a wildcard index (" + k + ")");
                    }
                }
            }
        }
    }

    /** Refuses unless the identity may query every field of the collection. */
    private static void everyField(CollectionPolicy cp, String identity, String what) {
        for (FieldRule r : cp.fields().values()) {
            if (!r.access().mayQuery(identity)) {
                throw new Refusal(ProxyError.FIELD_ACCESS_DENIED, cp.namespace() + ": field '" + r.path()
                        + "' may not be used in a filter, sort or pipeline by identity '" + identity + "', which "
                        + what + " would");
            }
        }
    }

    /** True if the name occurs as a key anywhere in the value. */
    private static boolean mentions(BsonValue v, String name) {
        return mentions(v, name, 0);
    }

    private static boolean mentions(BsonValue v, String name, int depth) {
        if (v == null) {
            return false;
        }
        if (depth > 200) {
            throw new Refusal(ProxyError.UNSUPPORTED_COMMAND, "a command nested too deeply to examine");
        }
        if (v.isDocument()) {
            for (Map.Entry<String, BsonValue> e : v.asDocument().entrySet()) {
                if (e.getKey().equals(name) || mentions(e.getValue(), name, depth + 1)) {
                    return true;
                }
            }
        } else if (v.isArray()) {
            for (BsonValue e : v.asArray()) {
                if (mentions(e, name, depth + 1)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * findAndModify writes before it returns: a field whose mask for this identity is deny must be
     * left out by its {@code fields} up front, or the write would be done and its answer refused.
     */
    private static void deniedInReturnedDocument(CollectionPolicy cp, String identity, BsonValue fields) {
        for (FieldRule r : cp.fields().values()) {
            if (r.access().maskFor(identity) != FieldAccess.Mask.DENY) {
                continue;
            }
            if (!leftOut(r.path(), fields)) {
                throw new Refusal(ProxyError.FIELD_ACCESS_DENIED, cp.namespace() + ": field '" + r.path()
                        + "' may not be returned to identity '" + identity + "' (mask: deny), and a findAndModify "
                        + "writes before it returns; leave it out with fields: {" + r.path() + ": 0}");
            }
        }
    }

    /** True if this projection certainly leaves the path out of the document it returns. */
    private static boolean leftOut(String path, BsonValue fields) {
        if (fields == null || !fields.isDocument() || fields.asDocument().isEmpty()) {
            return false;
        }
        boolean inclusion = false;
        for (Map.Entry<String, BsonValue> e : fields.asDocument().entrySet()) {
            BsonValue v = e.getValue();
            boolean excludes = v.isBoolean() ? !v.asBoolean().getValue() : v.isNumber() && v.asNumber().doubleValue() == 0;
            if (excludes && (path.equals(e.getKey()) || path.startsWith(e.getKey() + "."))) {
                return true;
            }
            if (!excludes && !e.getKey().equals("_id")) {
                inclusion = true;
                if (path.equals(e.getKey()) || path.startsWith(e.getKey() + ".") || e.getKey().startsWith(path + ".")) {
                    return false;
                }
            }
        }
        return inclusion;
    }

    private static BsonValue keyPath(BsonValue key) {
        return key != null && key.isString() ? new BsonDocument(key.asString().getValue(), new org.bson.BsonInt32(1)) : null;
    }

    private static void query(CollectionPolicy cp, String identity, BsonValue... parts) {
        refuseUses(cp, identity, parts, true, FieldAccess::mayQuery, "used in a filter, sort or pipeline by");
    }

    /** Written values are data: only the names of documents and updates count, no "$path" in a string. */
    private static void write(CollectionPolicy cp, String identity, BsonValue... parts) {
        refuseUses(cp, identity, parts, false, FieldAccess::mayWrite, "written by");
    }

    private static void refuseUses(CollectionPolicy cp, String identity, BsonValue[] parts, boolean references,
                                   BiPredicate<FieldAccess, String> allowed, String what) {
        Set<String> paths = new LinkedHashSet<>();
        for (BsonValue part : parts) {
            if (part != null) {
                collect(part, "", paths, references, 0);
            }
        }
        for (FieldRule r : cp.fields().values()) {
            if (allowed.test(r.access(), identity)) {
                continue;
            }
            for (String p : paths) {
                if (p.equals(r.path()) || p.startsWith(r.path() + ".") || r.path().startsWith(p + ".")) {
                    throw new Refusal(ProxyError.FIELD_ACCESS_DENIED, cp.namespace() + ": field '" + r.path()
                            + "' may not be " + what + " identity '" + identity + "'");
                }
            }
        }
    }

    /**
     * Every field path a value names: the names of its documents (joined through names that are
     * not operators; array indexes left out) and "$path" references in strings.
     */
    private static void collect(BsonValue v, String prefix, Set<String> out, boolean references, int depth) {
        if (depth > 200) {
            throw new Refusal(ProxyError.UNSUPPORTED_COMMAND, "a command nested too deeply to examine");
        }
        if (references && v.isString() && v.asString().getValue().startsWith("$")
                && !v.asString().getValue().startsWith("$$")) {
            out.add(withoutIndexes(v.asString().getValue().substring(1)));
        } else if (v.isArray()) {
            for (BsonValue e : v.asArray()) {
                collect(e, prefix, out, references, depth + 1);
            }
        } else if (v.isDocument()) {
            for (Map.Entry<String, BsonValue> e : v.asDocument().entrySet()) {
                String name = e.getKey();
                String path = name.startsWith("$") ? prefix : prefix.isEmpty() ? name : prefix + "." + name;
                if (!name.startsWith("$")) {
                    out.add(withoutIndexes(path));
                }
                collect(e.getValue(), path, out, references, depth + 1);
            }
        }
    }

    private static String withoutIndexes(String path) {
        StringBuilder b = new StringBuilder();
        for (String segment : path.split("\\.")) {
            if (!segment.isEmpty() && !segment.chars().allMatch(Character::isDigit)) {
                b.append(b.length() == 0 ? "" : ".").append(segment);
            }
        }
        return b.toString();
    }
}
