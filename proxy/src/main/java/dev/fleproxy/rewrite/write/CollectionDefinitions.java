package dev.fleproxy.rewrite.write;

import dev.fleproxy.protocol.Arg;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.query.Arguments;
import dev.fleproxy.rewrite.query.FilterRewriter;
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
            BsonValue partial = index.asDocument().get("partialFilterExpression");
            if (partial != null) {
                if (!partial.isDocument()) {
                    throw Refusal.command(ctx.ns(), "a partialFilterExpression that is not a document");
                }
                FilterRewriter.checkStored(partial.asDocument(), ctx, "partialFilterExpression");
            }
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
