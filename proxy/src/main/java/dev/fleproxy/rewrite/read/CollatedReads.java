package dev.fleproxy.rewrite.read;

import dev.fleproxy.rewrite.evaluate.CollationSpec;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.query.Expressions;
import java.util.List;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Reads under a collation other than simple that name an encrypted field: the server would
 * compare that field's envelopes (deterministic equality, $in, a $group or distinct key) by their
 * bytes, whatever the collation, and answer wrongly without a word. Such a read is refused on the
 * server path, so that the proxy evaluates it on plaintext under the collation instead
 * ({@link EvaluatedReads}); a read naming plain fields only goes to the server as before.
 */
public final class CollatedReads {
    /** The arguments that compare values: find's filter, count's and distinct's query, distinct's key, the pipeline. */
    private static final List<String> COMPARING = List.of("filter", "query", "key", "pipeline", "sort");
    static final String WHY = "a comparison under a collation other than simple (the server would compare its "
            + "envelopes byte by byte)";

    private CollatedReads() {
    }

    private static final byte[] COLLATION = "collation".getBytes(java.nio.charset.StandardCharsets.UTF_8);

    /**
     * Throws the server path's refusal when the request has a non-simple collation and compares an
     * encrypted field. Most reads have none: that is seen in the body's bytes, nothing decoded.
     */
    public static void refuseOnServer(dev.fleproxy.wire.OpMsgView msg, CollectionContext ctx) {
        if (msg.bodyHas(COLLATION)) {
            refuseOnServer(msg.body(), ctx);
        }
    }

    /** Throws the server path's refusal when body has a non-simple collation and compares an encrypted field. */
    public static void refuseOnServer(BsonDocument body, CollectionContext ctx) {
        if (CollationSpec.isSimple(body.get("collation"))) {
            return;
        }
        for (String name : COMPARING) {
            BsonValue v = body.get(name);
            if (v != null) {
                // names as strings too ("$ssn", a distinct key "ssn"): a false alarm only costs an evaluation
                Expressions.refuseMentions(v, ctx.asPaths(), WHY, true);
            }
        }
    }
}
