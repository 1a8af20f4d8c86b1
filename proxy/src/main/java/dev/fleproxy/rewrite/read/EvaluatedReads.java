package dev.fleproxy.rewrite.read;

import com.ibm.icu.text.Collator;
import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.evaluate.CollationSpec;
import dev.fleproxy.rewrite.evaluate.DistinctValues;
import dev.fleproxy.rewrite.evaluate.DocumentProjection;
import dev.fleproxy.rewrite.evaluate.DocumentSort;
import dev.fleproxy.rewrite.evaluate.NotEvaluable;
import dev.fleproxy.rewrite.evaluate.PipelineEvaluator;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.wire.OpMsg;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonInt64;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * find, count and distinct whose filter, sort or projection needs the plaintext of encrypted fields
 * (docs/query-model.md, "Evaluated by the proxy"). The server is sent a find with the part of the
 * filter it can evaluate and nothing else that depends on encrypted fields (no sort, skip, limit
 * or projection), limited to the collection's maxScanDocuments and one more, read in batches that
 * fit in a reply; the proxy decrypts
 * what it returns and applies the rest ({@link EvaluatedReplies}). What the server sees is what
 * it sees of any query today: no constant of the proxy's part reaches it.
 */
public final class EvaluatedReads {
    /** Arguments the proxy applies itself, by command; their values are read on plaintext. */
    private static final Map<CommandSpec.Rewriter, Set<String>> BY_PROXY = Map.of(
            CommandSpec.Rewriter.FIND, Set.of("filter", "sort", "projection", "skip", "limit", "batchSize", "singleBatch"),
            CommandSpec.Rewriter.COUNT, Set.of("query", "skip", "limit"),
            CommandSpec.Rewriter.DISTINCT, Set.of("key", "query"),
            CommandSpec.Rewriter.AGGREGATE, Set.of("pipeline", "cursor"));
    /**
     * What an aggregate's candidate read carries of it: settings find takes too. Any other
     * argument (explain, let, bypassDocumentValidation, …) refuses the evaluation. The collation
     * goes to the candidate read too: the server applies it to its part of the filter and its sort.
     */
    private static final Set<String> AGGREGATE_TO_FIND = Set.of("$db", "lsid", "$clusterTime", "readConcern", "maxTimeMS",
            "comment", "hint", "collation", "$readPreference", "txnNumber", "autocommit", "startTransaction", "apiVersion", "apiStrict",
            "apiDeprecationErrors", "allowDiskUse");
    /** find's options that ask for what an answer computed by the proxy cannot be. */
    private static final Set<String> NOT_EVALUATED = Set.of("min", "max", "returnKey", "showRecordId", "tailable",
            "awaitData", "oplogReplay");
    /** What an aggregate ending in $out or $merge carries to the writes of its output, not to its candidate read. */
    private static final Set<String> AGGREGATE_TO_WRITES = Set.of("writeConcern", "bypassDocumentValidation");
    /** The client's fields every command the proxy sends for an $out or $merge carries. */
    private static final Set<String> OUTPUT_SESSION = Set.of("lsid", "$clusterTime");
    /** The fields a getMore takes from the command that opened its cursor (a transaction's included). */
    private static final Set<String> SESSION_FIELDS = Set.of("$db", "lsid", "txnNumber", "autocommit");

    /**
     * Why a command the proxy started to evaluate is refused when the documents themselves hold a
     * case whose meaning the proxy does not guess (a null met by an undefined, a sort through two
     * arrays, a regex too deep for Java): said without the value.
     */
    public static final String DATA_NOT_EVALUABLE = "the proxy could not evaluate this command on the documents it "
            + "read (a null compared with an undefined value, a sort through two arrays, a pattern too deep to "
            + "match, or an expression MongoDB fails on or whose exact result the proxy does not reproduce): "
            + "refused rather than guessed";

    private EvaluatedReads() {
    }

    /**
     * The server's command and the state its replies are answered with.
     *
     * @param writes the policy of the collection an $out or $merge writes (its key is needed), or null
     */
    public record Plan(OpMsg command, Object replyState, dev.fleproxy.policy.CollectionPolicy writes) {
    }

    /** True for the commands the proxy can evaluate itself when the server cannot. */
    public static boolean evaluates(CommandSpec spec) {
        return spec.rewriter() != null && BY_PROXY.containsKey(spec.rewriter());
    }

    /** The arguments of this command the proxy reads on plaintext instead of examining them for the server. */
    public static Set<String> byProxy(CommandSpec spec) {
        return BY_PROXY.get(spec.rewriter());
    }

    /**
     * The evaluation of a find or count whose other arguments were examined already; what the
     * proxy cannot evaluate either is refused as the server path refused it ({@code serverCannot}:
     * it names fields and operators, never a constant of the query). {@code targets} gives the
     * context of the collection an aggregate's $out or $merge writes (null: outside the policy).
     */
    public static Plan plan(CommandSpec spec, OpMsg msg, CollectionContext ctx, Refusal serverCannot,
                            java.util.function.Function<String, CollectionContext> targets) {
        boolean find = spec.rewriter() == CommandSpec.Rewriter.FIND;
        BsonDocument body = msg.body();
        for (String option : NOT_EVALUATED) {
            if (body.containsKey(option)) {
                throw new Refusal(serverCannot.error(), serverCannot.getMessage() + "; the proxy evaluates such a "
                        + "query itself, but not with the find option '" + option + "'");
            }
        }
        Collator collator = collator(body, ctx, serverCannot);
        if (spec.rewriter() == CommandSpec.Rewriter.AGGREGATE) {
            return aggregate(msg, ctx, serverCannot, targets, collator);
        }
        FilterSplit split = FilterSplit.of(document(body, find ? "filter" : "query", ctx), ctx, collator != null);
        EvaluatedQuery.Steps steps;
        try {
            steps = new EvaluatedQuery.Steps(split.residual(),
                    find && body.containsKey("sort") ? DocumentSort.compile(document(body, "sort", ctx)) : null,
                    new EvaluatedQuery.Window(whole(body, "skip", ctx), whole(body, "limit", ctx)),
                    find && body.containsKey("projection") ? DocumentProjection.compile(document(body, "projection", ctx))
                            : null,
                    answer(spec, body, ctx), collator);
        } catch (NotEvaluable e) {
            throw serverCannot;
        }
        int budget = ctx.policy.maxScanDocuments();
        String collection = ctx.policy.collection();
        dev.fleproxy.rewrite.search.RangeWalk walk = find ? walk(body, steps, ctx) : null;
        BsonDocument server = new BsonDocument("find", new BsonString(collection)).append("filter", walk == null
                ? split.server() : new BsonDocument("$and", new BsonArray(List.of(split.server(), walk.first()))));
        BsonDocument getMore = new BsonDocument("collection", new BsonString(collection));
        Set<String> byProxy = byProxy(spec);
        boolean first = true;
        for (Map.Entry<String, BsonValue> e : body.entrySet()) {
            if (!first && !byProxy.contains(e.getKey())) {
                server.put(e.getKey(), e.getValue()); // examined already: hint, comment, settings
            }
            if (SESSION_FIELDS.contains(e.getKey())) {
                getMore.put(e.getKey(), e.getValue());
            }
            first = false;
        }
        server.put("limit", new BsonInt32(budget + 1));
        server.put("batchSize", new BsonInt32(EvaluatedQuery.firstBatch(budget))); // the rest by getMore, sized by bytes
        EvaluatedQuery.FirstBatch batching = find ? firstBatch(body, ctx) : EvaluatedQuery.FirstBatch.ALL;
        EvaluatedQuery state = new EvaluatedQuery(spec.name(), ctx.paths.readShape(), steps, batching, budget, getMore);
        if (walk != null) {
            state.walk(walk, server, split.server());
        }
        return new Plan(msg.withBody(server), state, null);
    }

    /**
     * A find sorted first by a range-indexed field, with a limit: its candidates read by walking
     * the field's grid from the end the sort starts at (docs/query-model.md#range-indexes). Null
     * for any other.
     */
    private static dev.fleproxy.rewrite.search.RangeWalk walk(BsonDocument body, EvaluatedQuery.Steps steps,
                                                             CollectionContext ctx) {
        if (steps.sort() == null || steps.window().limit() == 0 || ctx.paths.searchIndexed().isEmpty()) {
            return null;
        }
        BsonDocument sort = document(body, "sort", ctx);
        String first = sort.getFirstKey();
        for (dev.fleproxy.policy.FieldRule r : ctx.paths.searchIndexed()) {
            if (r.path().equals(first) && r.range() != null) {
                boolean descending = sort.get(first).asNumber().doubleValue() < 0; // 1 or -1, the sort compiled
                return new dev.fleproxy.rewrite.search.RangeWalk(first, r.range(), ctx.rangeTagsForQuery(r), descending);
            }
        }
        return null;
    }

    /**
     * An aggregate: its longest leading part that needs no plaintext run by the server as the
     * candidate read (a find where a find expresses it, {@link PipelinePrefix}; else an aggregate
     * of plain stages, {@link AggregatePrefix}), every later stage run by the proxy on the
     * decrypted candidates ({@link PipelineEvaluator}); a stage it does not run, or an argument
     * find does not take, keeps the server path's refusal.
     */
    private static Plan aggregate(OpMsg msg, CollectionContext ctx, Refusal serverCannot,
                                  java.util.function.Function<String, CollectionContext> targets, Collator collator) {
        BsonDocument body = msg.body();
        if (!body.isArray("pipeline")) {
            throw serverCannot;
        }
        java.util.List<BsonValue> stages = body.getArray("pipeline").getValues();
        OutputStage output = null;
        if (!stages.isEmpty() && OutputStage.is(stages.get(stages.size() - 1))) {
            output = OutputStage.of(stages.get(stages.size() - 1).asDocument(), body.getString("$db").getValue(), ctx.ns());
            stages = stages.subList(0, stages.size() - 1);
        }
        for (String name : body.keySet()) {
            if (!name.equals(body.getFirstKey()) && !name.equals("pipeline") && !name.equals("cursor")
                    && !AGGREGATE_TO_FIND.contains(name) && !(output != null && AGGREGATE_TO_WRITES.contains(name))) {
                throw serverCannot;
            }
        }
        if (output != null && (body.containsKey("txnNumber") || body.containsKey("autocommit")
                || body.containsKey("startTransaction"))) {
            throw Refusal.command(ctx.ns(), output.name() + " inside a transaction (MongoDB does not run it there)");
        }
        PipelinePrefix prefix = PipelinePrefix.of(stages, ctx, collator != null);
        // the server runs what it can: an aggregate of its own when that reaches past what a find expresses
        AggregatePrefix wider = AggregatePrefix.of(stages, ctx, collator != null, targets, body.getString("$db").getValue());
        boolean byAggregate = wider.from() > prefix.from();
        int from = byAggregate ? wider.from() : prefix.from();
        PipelineEvaluator pipeline;
        CarriedPaths carried;
        try {
            pipeline = PipelineEvaluator.compile(stages.subList(from, stages.size()));
            // followed from the first stage: the server's keep every encrypted value in place or drop it
            carried = output == null ? null : CarriedPaths.of(ctx.policy).through(stages);
        } catch (NotEvaluable e) {
            throw serverCannot;
        }
        CollectionContext target = output == null ? null : targets.apply(output.namespace());
        if (output != null) {
            OutputTarget.check(output, carried, target, ctx.ns()); // before anything is read
        }
        EvaluatedQuery.Steps steps = new EvaluatedQuery.Steps(byAggregate ? wider.residual() : prefix.residual(), null,
                new EvaluatedQuery.Window(0, 0), null, new EvaluatedQuery.Answer(false, null, pipeline), collator);
        int budget = ctx.policy.maxScanDocuments();
        BsonDocument server = byAggregate ? aggregateRead(wider, ctx, budget) : findRead(prefix, ctx);
        BsonDocument getMore = new BsonDocument("collection", new BsonString(ctx.policy.collection()));
        for (Map.Entry<String, BsonValue> e : body.entrySet()) {
            if (AGGREGATE_TO_FIND.contains(e.getKey())) {
                server.put(e.getKey(), e.getValue());
            }
            if (SESSION_FIELDS.contains(e.getKey())) {
                getMore.put(e.getKey(), e.getValue());
            }
        }
        if (!byAggregate) {
            // a limit of the client's own within the budget bounds the candidates; else budget + 1 does
            server.put("limit", prefix.limit() > 0 && prefix.limit() <= budget ? new BsonInt64(prefix.limit())
                    : new BsonInt32(budget + 1));
            server.put("batchSize", new BsonInt32(EvaluatedQuery.firstBatch(budget)));
        }
        BsonValue cursor = body.get("cursor");
        int size = cursor != null && cursor.isDocument() && cursor.asDocument().isNumber("batchSize")
                ? cursor.asDocument().getNumber("batchSize").intValue() : -1;
        EvaluatedQuery state = new EvaluatedQuery("aggregate", ctx.paths.readShape(), steps,
                new EvaluatedQuery.FirstBatch(size, false), budget, getMore);
        if (output != null) {
            BsonDocument session = new BsonDocument();
            BsonDocument writeOptions = new BsonDocument();
            body.forEach((name, v) -> {
                if (OUTPUT_SESSION.contains(name)) {
                    session.put(name, v);
                } else if (AGGREGATE_TO_WRITES.contains(name)) {
                    writeOptions.put(name, v);
                }
            });
            state.output = new OutputWrites(output, target == null ? null : target.policy, ctx.ns(), session, writeOptions);
        }
        return new Plan(msg.withBody(server), state, target == null ? null : target.policy);
    }

    /** The candidate read as a find: the prefix's filter, sort and skip (its limit and batchSize come after the client's arguments). */
    private static BsonDocument findRead(PipelinePrefix prefix, CollectionContext ctx) {
        BsonDocument server = new BsonDocument("find", new BsonString(ctx.policy.collection()))
                .append("filter", prefix.filter());
        if (prefix.sort() != null) {
            server.put("sort", prefix.sort());
        }
        if (prefix.skip() > 0) {
            server.put("skip", new BsonInt64(prefix.skip()));
        }
        return server;
    }

    /**
     * The candidate read as an aggregate: the prefix's stages, then the budget and one more (the
     * budget counts what the proxy reads, after the server's stages), its first batch as a find's.
     */
    private static BsonDocument aggregateRead(AggregatePrefix prefix, CollectionContext ctx, int budget) {
        BsonArray stages = new BsonArray(new java.util.ArrayList<>(prefix.pipeline()));
        stages.add(new BsonDocument("$limit", new BsonInt32(budget + 1)));
        return new BsonDocument("aggregate", new BsonString(ctx.policy.collection())).append("pipeline", stages)
                .append("cursor", new BsonDocument("batchSize", new BsonInt32(EvaluatedQuery.firstBatch(budget))));
    }

    /** find's batchSize (all that fit when absent) and singleBatch, for the answer's first batch. */
    private static EvaluatedQuery.FirstBatch firstBatch(BsonDocument body, CollectionContext ctx) {
        long size = body.containsKey("batchSize") ? whole(body, "batchSize", ctx) : -1;
        if (body.containsKey("batchSize") && size < 0) {
            throw Refusal.command(ctx.ns(), "a negative batchSize");
        }
        BsonValue single = body.get("singleBatch");
        return new EvaluatedQuery.FirstBatch((int) Math.min(Integer.MAX_VALUE, size),
                single != null && single.isBoolean() && single.asBoolean().getValue());
    }

    private static EvaluatedQuery.Answer answer(CommandSpec spec, BsonDocument body, CollectionContext ctx) {
        return switch (spec.rewriter()) {
            case COUNT -> EvaluatedQuery.Answer.COUNT;
            case DISTINCT -> {
                if (!body.isString("key")) {
                    throw Refusal.command(ctx.ns(), "a distinct whose key is not a string");
                }
                yield new EvaluatedQuery.Answer(false, DistinctValues.compile(body.getString("key").getValue()), null);
            }
            default -> EvaluatedQuery.Answer.DOCUMENTS;
        };
    }

    /**
     * The query's collation as a frozen ICU collator (null: simple). The server's part of the query
     * is sent with the collation; the proxy's part compares strings with this. A collation document
     * the server would reject is answered with the server's BadValue; one the proxy cannot take (a
     * version) keeps the server path's refusal.
     */
    private static Collator collator(BsonDocument body, CollectionContext ctx, Refusal serverCannot) {
        try {
            return CollationSpec.collator(body.get("collation"));
        } catch (CollationSpec.Invalid e) {
            throw new Refusal(ProxyError.BAD_VALUE, ctx.ns() + ": " + e.getMessage());
        } catch (NotEvaluable e) {
            throw new Refusal(serverCannot.error(), serverCannot.getMessage() + "; the proxy evaluates such a query "
                    + "itself, but not with " + e.getMessage());
        }
    }

    private static BsonDocument document(BsonDocument body, String name, CollectionContext ctx) {
        BsonValue v = body.get(name);
        if (v == null) {
            return new BsonDocument();
        }
        if (!v.isDocument()) {
            throw Refusal.command(ctx.ns(), "a " + name + " that is not a document");
        }
        return v.asDocument();
    }

    /** skip or limit: a whole number (0 when absent), as the server reads it. */
    private static long whole(BsonDocument body, String name, CollectionContext ctx) {
        BsonValue v = body.get(name);
        if (v == null) {
            return 0;
        }
        if (!v.isNumber() || v.asNumber().doubleValue() != Math.rint(v.asNumber().doubleValue())) {
            throw Refusal.command(ctx.ns(), "a " + name + " that is not a whole number");
        }
        long n = v.asNumber().longValue();
        if (name.equals("skip") && n < 0) {
            throw Refusal.command(ctx.ns(), "a negative skip");
        }
        return n;
    }
}
