package dev.fleproxy.rewrite.read;

import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.evaluate.DocumentFilter;
import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.query.FilterRewriter;
import dev.fleproxy.rewrite.search.TextQuery;
import dev.fleproxy.rewrite.search.RangeQuery;
import dev.fleproxy.rewrite.search.SearchTags;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * A query filter cut in two along its top-level conjunctions (the fields of the filter and the
 * members of a top-level $and, flattened): each conjunct the server can evaluate (plain fields,
 * equality on deterministic fields, rewritten as today) goes to the server; each it cannot (a
 * range, a regex, anything on a randomized field, a disjunction that mixes both) stays with the
 * proxy, which evaluates it on the decrypted candidates. A residual conjunct's constants never
 * reach the server. A conjunct neither can evaluate ($where, $text, …) refuses the query.
 *
 * @param server   what the server is asked to match ({} when nothing narrows the candidates)
 * @param residual what the proxy matches on plaintext; null when the server matches everything
 */
public record FilterSplit(BsonDocument server, DocumentFilter residual) {

    public static FilterSplit of(BsonDocument filter, CollectionContext ctx) {
        return of(filter, ctx, false);
    }

    /**
     * With {@code collated} (a collation other than simple), a conjunct the server path rewrites
     * (equality on a deterministic field becomes equality on its envelope) stays with the proxy:
     * the server compares envelopes by their bytes, whatever the collation.
     */
    public static FilterSplit of(BsonDocument filter, CollectionContext ctx, boolean collated) {
        List<BsonDocument> serverSide = new ArrayList<>();
        List<BsonValue> proxySide = new ArrayList<>();
        for (BsonDocument conjunct : conjuncts(filter, new ArrayList<>())) {
            try {
                BsonDocument rewritten = FilterRewriter.rewrite(conjunct, ctx);
                if (collated && !rewritten.equals(conjunct)) {
                    throw Refusal.command(ctx.ns(), "a comparison of an encrypted field under a collation");
                }
                serverSide.add(rewritten);
            } catch (Refusal serverCannot) {
                try {
                    DocumentFilter.compile(conjunct);
                    if (!ctx.paths.searchIndexed().isEmpty() && SearchTags.named(conjunct)) {
                        throw serverCannot; // the proxy's tags: not a field of the client's documents
                    }
                } catch (NotEvaluable proxyCannot) {
                    // the server path's refusal: it names the field and operator, never a constant
                    // of the query (the evaluator's own message may quote one)
                    throw serverCannot;
                }
                proxySide.add(conjunct);
                serverSide.addAll(searchTags(conjunct, ctx));
            }
        }
        BsonDocument server = serverSide.isEmpty() ? new BsonDocument()
                : serverSide.size() == 1 ? serverSide.get(0) : new BsonDocument("$and", new BsonArray(serverSide));
        DocumentFilter residual = proxySide.isEmpty() ? null
                : DocumentFilter.compile(new BsonDocument("$and", new BsonArray(proxySide)));
        return new FilterSplit(server, residual);
    }

    /**
     * For a conjunct on an indexed field, what the server matches of the field's tags: only
     * documents that may satisfy it come back as candidates (the conjunct itself stays with the
     * proxy). Empty if the field has no index or the conjunct gives its indexes nothing to read
     * (numeric bounds for a range index, a regex's literal start, end or runs for a text index).
     */
    private static List<BsonDocument> searchTags(BsonDocument conjunct, CollectionContext ctx) {
        List<BsonDocument> out = new ArrayList<>();
        String name = conjunct.getFirstKey();
        for (dev.fleproxy.policy.FieldRule r : ctx.paths.searchIndexed()) {
            if (!r.path().equals(name)) {
                continue;
            }
            BsonDocument range = r.range() == null ? null
                    : RangeQuery.condition(name, conjunct.get(name), r.range(), ctx.rangeTagsForQuery(r));
            if (range != null) {
                out.add(range);
            }
            for (dev.fleproxy.policy.TextIndex t : r.text()) {
                BsonDocument text = TextQuery.condition(name, conjunct.get(name), t, ctx.textTagsForQuery(r, t.kind()));
                if (text != null) {
                    out.add(text);
                }
            }
        }
        return out;
    }

    /** The filter's conjuncts, one single-field document each (a top-level $and opened up). */
    private static List<BsonDocument> conjuncts(BsonDocument filter, List<BsonDocument> out) {
        for (Map.Entry<String, BsonValue> e : filter.entrySet()) {
            if (e.getKey().equals("$and") && e.getValue().isArray() && !e.getValue().asArray().isEmpty()
                    && e.getValue().asArray().stream().allMatch(BsonValue::isDocument)) {
                e.getValue().asArray().forEach(member -> conjuncts(member.asDocument(), out));
            } else {
                out.add(new BsonDocument(e.getKey(), e.getValue()));
            }
        }
        return out;
    }
}
