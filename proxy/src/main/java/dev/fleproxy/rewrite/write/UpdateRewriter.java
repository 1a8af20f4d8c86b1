package dev.fleproxy.rewrite.write;

import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.bson.CopyOnChange;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.EncryptedPaths;
import dev.fleproxy.rewrite.paths.PathKind;
import dev.fleproxy.rewrite.query.Arguments;
import dev.fleproxy.rewrite.search.SearchTags;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The update part of update and findAndModify on an encrypted collection. A replacement document
 * is encrypted like an insert. Of the operators, $set and $setOnInsert encrypt what they write
 * (a whole sub-document or array holding encrypted paths included), $unset removes, $push and
 * $addToSet encrypt the encrypted paths inside the elements they add to an array of documents,
 * $pop removes whole elements; operators that compute on a value ($inc, $mul, $min, $max, $bit,
 * $currentDate), that reach into an encrypted value, that rename one, or that add to or pull from
 * an encrypted array are refused. Pipeline updates may copy encrypted values but not compute on
 * them or assign to encrypted fields.
 */
final class UpdateRewriter {
    private static final Set<String> COMPUTING = Set.of("$inc", "$mul", "$min", "$max", "$bit", "$currentDate");
    private static final Set<String> ARRAY_REMOVAL = Set.of("$pull", "$pullAll");
    /** Every update operator MongoDB 8.0 knows; any other is answered as the server would, never forwarded. */
    private static final Set<String> OPERATORS = Set.of("$set", "$setOnInsert", "$unset", "$rename", "$push",
            "$addToSet", "$pop", "$pull", "$pullAll", "$inc", "$mul", "$min", "$max", "$bit", "$currentDate");

    private UpdateRewriter() {
    }

    static BsonValue rewrite(BsonValue update, CollectionContext ctx) {
        if (update.isArray()) {
            UpdatePipeline.check(update.asArray(), ctx);
            return update;
        }
        // Malformed updates are refused, not left for the server to reject: what the proxy
        // forwards on an encrypted collection is only what it has examined.
        if (!update.isDocument()) {
            throw Refusal.command(ctx.ns(), "an update that is neither a document nor a pipeline");
        }
        BsonDocument u = update.asDocument();
        long operators = u.keySet().stream().filter(k -> k.startsWith("$")).count();
        if (operators == 0) {
            return DocumentEncryptor.encryptDocument(u, ctx);
        }
        if (operators != u.size()) {
            throw Refusal.command(ctx.ns(), "an update document that mixes update operators and fields");
        }
        BsonValue out = CopyOnChange.map(u, (op, args) -> {
            if (!OPERATORS.contains(op)) {
                // the server's own answer (code 9, its wording): an unknown operator is a client's mistake
                throw new Refusal(ProxyError.FAILED_TO_PARSE, "Unknown modifier: " + Arguments.quoted(op)
                        + ". Expected a valid update modifier or pipeline-style update specified as an array");
            }
            if (!args.isDocument()) {
                throw Refusal.command(ctx.ns(), "the update operator " + op + " with an argument that is not a document");
            }
            return operator(op, args.asDocument(), ctx);
        });
        return ctx.paths.searchIndexed().isEmpty() ? out : unsetTags(u, out.asDocument(), ctx);
    }

    /**
     * An $unset of an indexed field also sets its tags to its indexes' "none" (in the update's
     * $set): the document stays tagged, so a range or a prefix need not read it.
     */
    private static BsonDocument unsetTags(BsonDocument u, BsonDocument encrypted, CollectionContext ctx) {
        BsonValue unset = u.get("$unset");
        if (unset == null || !unset.isDocument()) {
            return encrypted;
        }
        BsonDocument out = null;
        for (String path : unset.asDocument().keySet()) {
            EncryptedPaths.Match m = ctx.paths.classify(path);
            if (m.kind() == PathKind.EXACT && m.rule().indexed()) {
                if (out == null) {
                    out = mutable(encrypted); // a message's documents are read-only views of its bytes
                    out.put("$set", out.containsKey("$set") ? mutable(out.getDocument("$set")) : new BsonDocument());
                }
                out.getDocument("$set").put(SearchTags.path(m.rule().path()),
                        SearchTags.absent(m.rule(), ctx.fieldTags(m.rule())));
            }
        }
        return out == null ? encrypted : out;
    }

    private static BsonDocument operator(String op, BsonDocument args, CollectionContext ctx) {
        BsonDocument out = operatorValues(op, args, ctx);
        return ctx.paths.searchIndexed().isEmpty() ? out : withTags(op, args, out, ctx);
    }

    /**
     * A $set or $setOnInsert of an indexed field also sets its tags (made from the plaintext
     * it writes); an $unset sets them to "none" ({@link #unsetTags}). No other operator reaches an
     * indexed field: the index is on a top-level field, and those that would change it without
     * giving its value are refused above or carried out by the proxy as a $set.
     */
    private static BsonDocument withTags(String op, BsonDocument args, BsonDocument encrypted, CollectionContext ctx) {
        if (!op.equals("$set") && !op.equals("$setOnInsert")) {
            return encrypted;
        }
        BsonDocument out = null;
        for (java.util.Map.Entry<String, BsonValue> e : args.entrySet()) {
            EncryptedPaths.Match m = ctx.paths.classify(e.getKey());
            if (m.kind() != PathKind.EXACT || !m.rule().indexed()) {
                continue;
            }
            if (out == null) {
                out = mutable(encrypted);
            }
            dev.fleproxy.rewrite.bson.BsonValueBytes b = dev.fleproxy.rewrite.bson.BsonValueBytes.of(e.getValue());
            out.put(SearchTags.path(m.rule().path()), SearchTags.stored(m.rule(), ctx.fieldTags(m.rule()), b.type(),
                    b.bytes(), 0, b.bytes().length));
        }
        return out == null ? encrypted : out;
    }

    /** A copy that takes new fields (the top level's: values are shared). */
    private static BsonDocument mutable(BsonDocument d) {
        BsonDocument out = new BsonDocument();
        out.putAll(d);
        return out;
    }

    private static BsonDocument operatorValues(String op, BsonDocument args, CollectionContext ctx) {
        return CopyOnChange.map(args, (path, v) -> {
            BsonValue nv = v;
            EncryptedPaths.Match m = ctx.paths.classify(path);
            String field = m.rule() != null ? m.rule().path() : path;
            switch (op) {
                case "$set", "$setOnInsert" -> {
                    if (m.kind() == PathKind.EXACT) {
                        nv = ctx.encrypt(m.rule(), v);
                    } else if (m.kind() == PathKind.PREFIX) {
                        nv = DocumentEncryptor.encryptSubtree(v, path, ctx);
                    } else if (m.kind() == PathKind.INSIDE) {
                        throw Refusal.onField(ctx.ns(), field, op + " of '" + path + "' (inside the encrypted value)");
                    }
                }
                case "$unset" -> {
                    if (m.kind() == PathKind.INSIDE) {
                        throw Refusal.onField(ctx.ns(), field, "$unset of '" + path + "' (inside the encrypted value)");
                    }
                }
                case "$rename" -> {
                    EncryptedPaths.Match to = v.isString() ? ctx.paths.classify(v.asString().getValue())
                            : EncryptedPaths.Match.NONE;
                    if (m.kind() != PathKind.NONE || to.kind() != PathKind.NONE) {
                        String f = m.kind() != PathKind.NONE ? field
                                : (to.rule() != null ? to.rule().path() : v.asString().getValue());
                        throw Refusal.onField(ctx.ns(), f, "$rename (an envelope is bound to its field's key and policy)");
                    }
                }
                case "$push", "$addToSet" -> nv = addToArray(op, path, v, m, ctx);
                case "$pop" -> {
                    if (m.kind() == PathKind.EXACT || m.kind() == PathKind.INSIDE) {
                        throw Refusal.onField(ctx.ns(), field, "$pop (the array is one encrypted value)");
                    }
                }
                default -> {
                    if (m.kind() != PathKind.NONE) {
                        if (COMPUTING.contains(op) || ARRAY_REMOVAL.contains(op)) {
                            throw Refusal.onField(ctx.ns(), field, "the update operator " + op);
                        }
                        throw Refusal.onField(ctx.ns(), field, "the update operator " + op + " (not supported on "
                                + "encrypted collections)");
                    }
                }
            }
            return nv;
        });
    }

    /** $push/$addToSet: whole elements; encrypted paths inside added documents are encrypted. */
    private static BsonValue addToArray(String op, String path, BsonValue v, EncryptedPaths.Match m,
                                        CollectionContext ctx) {
        switch (m.kind()) {
            case NONE:
                return v;
            case EXACT:
            case INSIDE:
                throw Refusal.onField(ctx.ns(), m.rule().path(), op + " (the array is one encrypted value)");
            default:
                break;
        }
        if (op.equals("$addToSet") && ctx.paths.anyRandomizedUnder(path)) {
            throw Refusal.command(ctx.ns(), "$addToSet into '" + path + "': its elements hold randomized encrypted "
                    + "fields, so equal elements would not be recognised as equal");
        }
        if (v.isDocument() && v.asDocument().containsKey("$each")) {
            BsonDocument mods = v.asDocument();
            if (mods.containsKey("$sort")) {
                throw Refusal.command(ctx.ns(), op + " with $sort into '" + path + "', whose elements hold encrypted fields");
            }
            return CopyOnChange.map(mods, (k, each) -> k.equals("$each") && each.isArray()
                    ? DocumentEncryptor.encryptSubtree(each, path, ctx) : each);
        }
        BsonValue enc = DocumentEncryptor.encryptSubtree(new BsonArray(java.util.List.of(v)), path, ctx);
        return enc.asArray().get(0);
    }
}
