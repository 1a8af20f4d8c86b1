package dev.fleproxy.rewrite.scan;

import dev.fleproxy.rewrite.evaluate.CollationSpec;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.query.Expressions;
import dev.fleproxy.wire.DocumentSequence;
import dev.fleproxy.wire.OpMsg;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Writes under a collation other than simple whose filter names an encrypted field: refused. The
 * server would match that field's envelopes by their bytes, whatever the collation (an update of
 * {ssn: "ABC"} at strength 2 missing "abc", with no error), and the proxy does not carry out a
 * write with a collation ({@link EvaluatedWrites}): failing closed beats a quietly wrong write.
 */
public final class CollatedWrites {
    private static final String WHY = "a write's filter under a collation other than simple (the server would "
            + "compare its envelopes byte by byte; the proxy does not carry out writes with a collation)";

    private CollatedWrites() {
    }

    /** update and delete statements (body array or document sequence), findAndModify's own query and sort. */
    public static void refuse(OpMsg msg, CollectionContext ctx) {
        List<BsonDocument> statements = new ArrayList<>();
        statements.add(msg.body());
        for (String name : List.of("updates", "deletes")) {
            BsonValue v = msg.body().get(name);
            if (v != null && v.isArray()) {
                v.asArray().forEach(s -> {
                    if (s.isDocument()) {
                        statements.add(s.asDocument());
                    }
                });
            }
        }
        for (DocumentSequence s : msg.sequences()) {
            statements.addAll(s.documents());
        }
        for (BsonDocument s : statements) {
            if (CollationSpec.isSimple(s.get("collation"))) {
                continue;
            }
            for (String name : List.of("q", "query", "sort")) {
                if (s.get(name) != null) {
                    Expressions.refuseMentions(s.get(name), ctx.asPaths(), WHY, false);
                }
            }
        }
    }
}
