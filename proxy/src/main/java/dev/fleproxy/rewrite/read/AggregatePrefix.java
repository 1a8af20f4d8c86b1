package dev.fleproxy.rewrite.read;

import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.evaluate.DocumentFilter;
import dev.fleproxy.rewrite.paths.CollectionContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The longest leading part of an aggregate the proxy evaluates that the server can run, as an
 * aggregate of its own that reads the candidates: $match stages (each split as a filter; a part
 * only the proxy can evaluate ends the prefix, and the proxy matches it first), a $sort by plain
 * fields, $skip and $limit, in any order, and the plain stages {@link PlainStages} lets through.
 * Used when it reaches further than a find expresses ({@link PipelinePrefix}); every stage after
 * it runs in the proxy, on the candidates in the order the server returned them.
 *
 * <p>After such stages the documents still hold every encrypted value at its policy path or not
 * at all, so a $match is split by the collection's paths as on the stored documents; a plain path
 * a stage wrote holds a plain value, which the server may match.
 *
 * @param pipeline the server's stages, a $match as its server part (deterministic equality as envelopes)
 * @param residual what the proxy matches first, on plaintext; null if nothing
 * @param from     the index of the first stage the proxy runs
 */
record AggregatePrefix(List<BsonDocument> pipeline, DocumentFilter residual, int from) {

    /**
     * collated: a collation other than simple, under which the proxy keeps what touches encrypted
     * fields ({@link FilterSplit}). {@code foreign} gives another collection's context (null:
     * outside the policy), for a $lookup.
     */
    static AggregatePrefix of(List<BsonValue> stages, CollectionContext ctx, boolean collated,
                              Function<String, CollectionContext> foreign, String db) {
        List<BsonDocument> server = new ArrayList<>();
        for (int i = 0; i < stages.size(); i++) {
            if (!stages.get(i).isDocument() || stages.get(i).asDocument().size() != 1) {
                return new AggregatePrefix(server, null, i);
            }
            Map.Entry<String, BsonValue> stage = stages.get(i).asDocument().entrySet().iterator().next();
            String name = stage.getKey();
            BsonValue arg = stage.getValue();
            if (name.equals("$match") && arg.isDocument()) {
                FilterSplit split;
                try {
                    split = FilterSplit.of(arg.asDocument(), ctx, collated);
                } catch (Refusal neither) {
                    return new AggregatePrefix(server, null, i); // the proxy's stages refuse it
                }
                if (!split.server().isEmpty()) {
                    server.add(new BsonDocument("$match", split.server()));
                }
                if (split.residual() != null) {
                    return new AggregatePrefix(server, split.residual(), i + 1);
                }
            } else if (name.equals("$sort") && PipelinePrefix.plainSort(arg, ctx)
                    || name.equals("$skip") && PipelinePrefix.count(arg) >= 0
                    || name.equals("$limit") && PipelinePrefix.count(arg) > 0
                    || PlainStages.joins(name, arg, ctx, foreign, db)) {
                // $set is $addFields by its newer name (MongoDB 4.2); sent by the older, which the
                // embedded backend knows too
                server.add(name.equals("$set") ? new BsonDocument("$addFields", arg) : stages.get(i).asDocument());
            } else {
                return new AggregatePrefix(server, null, i);
            }
        }
        return new AggregatePrefix(server, null, stages.size());
    }
}
