package dev.fleproxy.rewrite.scan;

import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.evaluate.DocumentProjection;
import dev.fleproxy.rewrite.evaluate.DocumentSort;
import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.read.FieldMasks;
import java.util.Set;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A findAndModify made into a statement the proxy carries out ({@link EvaluatedFindAndModify}):
 * its query, sort and fields read on plaintext; what it cannot carry out exactly as the server
 * would (arrayFilters, a collation, let, a pipeline update) refused as the server
 * path refused it. Its hint goes with the candidates' read.
 */
final class FindAndModifyPlan {
    /** The arguments whose values the proxy reads on plaintext (not examined for the server). */
    static final Set<String> READ_BY_PROXY = Set.of("query", "sort", "update", "fields");
    private static final Set<String> REFUSED = Set.of("arrayFilters", "collation", "let");

    private FindAndModifyPlan() {
    }

    static WriteInSteps of(BsonDocument body, CollectionContext ctx, CommandSpec spec, Refusal serverCannot,
                           BsonDocument readCommon, BsonDocument writeCommon, EvaluatedWrite.WriteEncryption encryption,
                           FieldMasks masks) {
        for (String refused : REFUSED) {
            if (body.containsKey(refused)) {
                throw cannot(serverCannot, "'" + refused + "'");
            }
        }
        boolean remove = isTrue(body.get("remove"));
        boolean upsert = isTrue(body.get("upsert"));
        if (remove && upsert) {
            throw Refusal.command(ctx.ns(), "a findAndModify with both remove and upsert");
        }
        BsonDocument statement = new BsonDocument("q", body.get("query", new BsonDocument()));
        if (body.containsKey("hint")) {
            statement.put("hint", body.get("hint"));
        }
        if (!remove) {
            statement.put("u", body.get("update", new BsonDocument()));
            statement.put("upsert", BsonBoolean.valueOf(upsert));
        }
        WriteStatement st = EvaluatedWrites.statement(statement, !remove, ctx, serverCannot);
        DocumentSort sort;
        DocumentProjection fields;
        try {
            sort = body.isDocument("sort") && !body.getDocument("sort").isEmpty()
                    ? DocumentSort.compile(body.getDocument("sort")) : null;
            fields = body.isDocument("fields") && !body.getDocument("fields").isEmpty()
                    ? DocumentProjection.compile(body.getDocument("fields")) : null;
        } catch (NotEvaluable e) {
            throw serverCannot;
        }
        if (st.residual() == null && st.computed().isEmpty() && sort == null && fields == null) {
            throw serverCannot; // the server path refused it for another reason: that refusal stands
        }
        if (!remove) {
            try {
                // the update's other operators, as the server path checks them; an upsert's equalities as stored
                encryption.update(st.updateFor(st.upsert() == null ? new BsonDocument() : UpsertSeed.document(st.upsert())));
                if (st.upsert() != null) {
                    encryption.update(new BsonDocument("$set", st.upsert()));
                }
            } catch (dev.fleproxy.rewrite.evaluate.UpdateArithmetic.Failure perDocument) {
                // a type the server refuses per document: answered as it would
            }
        }
        return new EvaluatedFindAndModify(ctx, st, sort, fields, remove, isTrue(body.get("new")), readCommon,
                writeCommon, encryption, masks, RetryableWrite.of(body), TransactionOpening.of(body));
    }

    private static boolean isTrue(BsonValue v) {
        return v != null && (v.isBoolean() ? v.asBoolean().getValue() : v.isNumber() && v.asNumber().doubleValue() != 0);
    }

    private static Refusal cannot(Refusal serverCannot, String what) {
        return new Refusal(serverCannot.error(), serverCannot.getMessage() + "; the proxy carries out such a "
                + "findAndModify itself, but not with " + what);
    }
}
