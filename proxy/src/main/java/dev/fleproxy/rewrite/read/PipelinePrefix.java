package dev.fleproxy.rewrite.read;

import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.evaluate.DocumentFilter;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.PathKind;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The leading stages of an aggregate the proxy evaluates that the server runs, as the find that
 * reads the candidates: $match stages (each split as a filter; a residual part ends the prefix),
 * then a $sort by plain fields, a $skip and a $limit, in the order a find applies them. These keep
 * the stored documents' shape, so the candidates decrypt as stored; they need no plaintext, so the
 * server learns what it learns of any query. Every stage after them runs in the proxy, on the
 * candidates in the order the server returned them.
 *
 * @param filter   the server's filter ({} when nothing narrows the candidates)
 * @param residual what the proxy matches first, on plaintext; null if nothing
 * @param sort     the server's sort, or null
 * @param skip     the server's skip (0: none)
 * @param limit    the server's limit (0: none)
 * @param from     the index of the first stage the proxy runs
 */
record PipelinePrefix(BsonDocument filter, DocumentFilter residual, BsonDocument sort, long skip, long limit, int from) {
    /** Where a stage stands in find's order: filter, then sort, then skip, then limit. */
    private static final int FILTER = 0;
    private static final int SORTED = 1;
    private static final int SKIPPED = 2;

    /** collated: a collation other than simple, under which the proxy keeps what touches encrypted fields ({@link FilterSplit}). */
    static PipelinePrefix of(List<BsonValue> stages, CollectionContext ctx, boolean collated) {
        List<BsonDocument> server = new ArrayList<>();
        BsonDocument sort = null;
        long skip = 0;
        int phase = FILTER;
        for (int i = 0; i < stages.size(); i++) {
            if (!stages.get(i).isDocument() || stages.get(i).asDocument().size() != 1) {
                return new PipelinePrefix(and(server), null, sort, skip, 0, i);
            }
            Map.Entry<String, BsonValue> stage = stages.get(i).asDocument().entrySet().iterator().next();
            BsonValue arg = stage.getValue();
            if (stage.getKey().equals("$match") && arg.isDocument() && phase <= SORTED) {
                FilterSplit split;
                try {
                    split = FilterSplit.of(arg.asDocument(), ctx, collated);
                } catch (Refusal neither) {
                    return new PipelinePrefix(and(server), null, sort, skip, 0, i); // the proxy's stages refuse it
                }
                if (!split.server().isEmpty()) {
                    server.add(split.server());
                }
                if (split.residual() != null) {
                    return new PipelinePrefix(and(server), split.residual(), sort, skip, 0, i + 1);
                }
            } else if (stage.getKey().equals("$sort") && phase == FILTER && plainSort(arg, ctx)) {
                sort = arg.asDocument();
                phase = SORTED;
            } else if (stage.getKey().equals("$skip") && phase <= SORTED && count(arg) >= 0) {
                skip = count(arg);
                phase = SKIPPED;
            } else if (stage.getKey().equals("$limit") && count(arg) > 0) {
                return new PipelinePrefix(and(server), null, sort, skip, count(arg), i + 1);
            } else {
                return new PipelinePrefix(and(server), null, sort, skip, 0, i);
            }
        }
        return new PipelinePrefix(and(server), null, sort, skip, 0, stages.size());
    }

    /** A sort the server can run: by fields with nothing encrypted at or under them, 1 or -1 each. */
    static boolean plainSort(BsonValue sort, CollectionContext ctx) {
        if (!sort.isDocument() || sort.asDocument().isEmpty()) {
            return false;
        }
        for (Map.Entry<String, BsonValue> key : sort.asDocument().entrySet()) {
            BsonValue d = key.getValue();
            boolean direction = d.isNumber() && Math.abs(d.asNumber().doubleValue()) == 1.0;
            if (!direction || key.getKey().isEmpty() || key.getKey().startsWith("$")
                    || ctx.paths.classify(key.getKey()).kind() != PathKind.NONE) {
                return false;
            }
        }
        return true;
    }

    /** A $skip's or $limit's whole number; -1 if it is not one. */
    static long count(BsonValue v) {
        if (!v.isNumber() || v.asNumber().doubleValue() != Math.rint(v.asNumber().doubleValue())) {
            return -1;
        }
        return v.asNumber().longValue();
    }

    private static BsonDocument and(List<BsonDocument> conjuncts) {
        return conjuncts.isEmpty() ? new BsonDocument()
                : conjuncts.size() == 1 ? conjuncts.get(0) : new BsonDocument("$and", new BsonArray(conjuncts));
    }
}
