package dev.fleproxy.rewrite.write;

import dev.fleproxy.protocol.Arg;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.query.Arguments;
import dev.fleproxy.rewrite.query.FilterRewriter;
import dev.fleproxy.rewrite.search.SearchTags;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * createIndexes, create and collMod on an encrypted collection. They carry no documents, but a
 * partial index's filter and a validator are query filters the server keeps, and a view
 * definition holds a pipeline: any of them could carry plaintext values of encrypted fields.
 * An index whose key is an encrypted field is fine: it indexes envelopes, never plaintext
 * (on a deterministic field it also serves the rewritten equality queries).
 */
public final class CollectionDefinitions {
    private CollectionDefinitions() {
    }

    /** @param spec the table's entry for its index specifications (their key patterns, collations, options) */
    public static void createIndexes(BsonDocument body, CollectionContext ctx, Arg spec) {
        BsonValue indexes = body.get("indexes");
        if (indexes == null || !indexes.isArray()) {
            throw Refusal.command(ctx.ns(), "createIndexes without an array of indexes (the proxy only forwards what it "
                    + "checked)");
        }
        for (BsonValue index : indexes.asArray()) {
            if (!index.isDocument()) {
                throw Refusal.command(ctx.ns(), "createIndexes with indexes that are not documents");
            }
            Arguments.examineFields(index.asDocument(), spec, ctx);
            refuseUniqueTags(index.asDocument(), ctx);
            BsonValue partial = index.asDocument().get("partialFilterExpression");
            if (partial != null) {
                if (!partial.isDocument()) {
                    throw Refusal.command(ctx.ns(), "a partialFilterExpression that is not a document");
                }
                FilterRewriter.checkStored(partial.asDocument(), ctx, "partialFilterExpression");
            }
        }
    }

    /**
     * The proxy's search tags (__fle) may be indexed, as their queries need, but not uniquely: a
     * duplicate-key error would tell a client which documents share a tag, what the field's
     * rules may hide from it (and equal tags are the point of a tree's upper levels).
     */
    private static void refuseUniqueTags(BsonDocument index, CollectionContext ctx) {
        BsonValue key = index.get("key");
        BsonValue unique = index.get("unique");
        boolean isUnique = unique != null && (unique.isBoolean() ? unique.asBoolean().getValue()
                : unique.isNumber() && unique.asNumber().doubleValue() != 0);
        if (isUnique && key != null && key.isDocument() && !ctx.paths.searchIndexed().isEmpty()
                && key.asDocument().keySet().stream().anyMatch(SearchTags::reserved)) {
            throw Refusal.command(ctx.ns(), "a unique index on the proxy's search tags ('" + SearchTags.FIELD
                    + "'): its duplicate-key errors would tell which documents share a tag");
        }
    }

    /** create and collMod: the validator is checked; the collection cannot become a view. */
    public static void collectionOptions(String cmd, BsonDocument body, CollectionContext ctx) {
        if (body.containsKey("viewOn") || body.containsKey("pipeline")) {
            throw Refusal.command(ctx.ns(), cmd + " would make an encrypted collection a view (its pipeline is not "
                    + "checked against the policy)");
        }
        BsonValue validator = body.get("validator");
        if (validator != null) {
            if (!validator.isDocument()) {
                throw Refusal.command(ctx.ns(), "a validator that is not a document");
            }
            FilterRewriter.checkStored(validator.asDocument(), ctx, "validator");
        }
    }
}
