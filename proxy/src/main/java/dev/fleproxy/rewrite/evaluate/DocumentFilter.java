package dev.fleproxy.rewrite.evaluate;

import java.util.HashSet;
import java.util.Set;
import org.bson.BsonDocument;

/**
 * A query filter evaluated on plaintext documents with MongoDB's semantics (mongod 7/8, simple
 * collation), for the part of a query the server cannot evaluate on encrypted fields.
 *
 * <p>Supports: implicit equality and regular expressions; $eq $ne $gt $gte $lt $lte $in $nin
 * $exists $type (codes, aliases, "number") $size $all (values, regexes, or $elemMatch items)
 * $elemMatch (on documents and on values) $mod $regex with $options i m s x (and u, ignored) $not;
 * $and $or $nor at any level; $comment (ignored); $alwaysTrue, $alwaysFalse; $expr of the
 * expressions the expr package compiles (ExprFilter). Dotted paths walk
 * arrays as the server does (PathValues); comparisons bracket by type (Comparison); $ne, $nin,
 * $not and {$exists: false} negate the whole predicate on the path.
 *
 * <p>Refuses with NotEvaluable, when compiling: $where $text $jsonSchema $sampleRate, $expr with an
 * operator outside the expr package, the
 * geospatial and bit-test operators, DBRef fields ($ref, $id, $db) as operators, any unknown
 * operator, any shape the server itself rejects, and regular expressions outside PcreTranslator's
 * allowlist (constructs whose PCRE2 and Java meanings may differ).
 */
public final class DocumentFilter {
    private final FilterNode root;

    private DocumentFilter(FilterNode root) {
        this.root = root;
    }

    /** The filter compiled, or NotEvaluable naming what cannot be evaluated and why. */
    public static DocumentFilter compile(BsonDocument filter) {
        return new DocumentFilter(FilterParser.parseDocument(filter));
    }

    /**
     * Whether the (decrypted) document matches, as the server would decide. Throws NotEvaluable
     * when the answer depends on the server's version (a null comparison meeting the deprecated
     * undefined type) or when Java's regex engine runs out of stack on a value.
     */
    public boolean matches(BsonDocument doc) {
        return root.matches(doc);
    }

    /**
     * The top-level fields whose values decide a match, or null if any part of the document may
     * ($expr): a document holding only those fields matches as the whole one does.
     */
    public Set<String> fieldsRead() {
        Set<String> fields = new HashSet<>();
        return root.fieldsRead(fields) ? fields : null;
    }
}
