package dev.fleproxy.rewrite.pipeline;

import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.Arg;
import dev.fleproxy.protocol.CommandTable;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.query.Arguments;
import dev.fleproxy.rewrite.query.Expressions;
import dev.fleproxy.rewrite.query.MetadataFilters;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Database-level aggregates ({@code aggregate: 1}) on a database with encrypted collections, and
 * on admin: their documents are no collection's, so nothing in them is decrypted, and nothing in
 * them may carry a policy field's value to the server. The first stage decides:
 *
 * <ul>
 *   <li>a change stream is refused: its events carry the encrypted collections' documents (the
 *       collection-level form is refused too);
 *   <li>{@code $documents}: its literals, and every later stage, may name no policy field
 *       ({@link dev.fleproxy.rewrite.paths.DatabasePaths}), and no stage may read or write an
 *       encrypted collection;
 *   <li>a source of the server's own records ($currentOp, $listLocalSessions, …: {@link
 *       CommandTable#databaseStage}): later stages may only filter, sort, project and count
 *       by the fields those records have ($match as a metadata filter), never compute;
 *   <li>anything else is refused.
 * </ul>
 */
public final class DatabasePipelines {
    /** What may follow a source of the server's records: stages that only select by its fields. */
    private static final Set<String> AFTER_RECORDS = Set.of("$match", "$sort", "$project", "$limit", "$skip", "$count");

    private DatabasePipelines() {
    }

    public static void check(BsonValue pipeline, Policy p, String db, Arguments.On on) {
        if (pipeline == null || !pipeline.isArray() || pipeline.asArray().isEmpty()) {
            throw Refusal.command(on.ns(), "a database-level aggregate without a pipeline");
        }
        ForeignStages.refuseEncrypted(pipeline, p, db, on.ns());
        BsonDocument first = stage(pipeline.asArray().get(0), on);
        String source = first.getFirstKey();
        if (source.equals("$changeStream")) {
            throw Refusal.command(on.ns(), "a change stream on a whole database " + (db.equals("admin")
                    ? "or cluster " : "") + "while collections are encrypted: its events would carry their "
                    + "documents, which the proxy decrypts only on their own collection");
        }
        if (source.equals("$documents")) {
            for (BsonValue stage : pipeline.asArray()) {
                Expressions.refuseMentions(stage, on.paths(), "a database-level pipeline naming it", true);
            }
            return;
        }
        Arg records = CommandTable.databaseStage(source);
        if (records == null) {
            throw Refusal.command(on.ns(), "the stage " + Arguments.quoted(source) + " at the start of a "
                    + "database-level pipeline is not one the proxy knows on a database with encrypted collections");
        }
        Expressions.refuseMentions(first.get(source), on.paths(), source + " naming it", false);
        for (BsonValue v : pipeline.asArray().subList(1, pipeline.asArray().size())) {
            BsonDocument stage = stage(v, on);
            String name = stage.getFirstKey();
            if (!AFTER_RECORDS.contains(name)) {
                throw Refusal.command(on.ns(), "the stage " + Arguments.quoted(name) + " after " + source + " (only "
                        + String.join(", ", new java.util.TreeSet<>(AFTER_RECORDS)) + " are examined there)");
            }
            afterRecords(name, stage.get(name), records, on);
        }
    }

    private static void afterRecords(String name, BsonValue spec, Arg records, Arguments.On on) {
        switch (name) {
            case "$match" -> MetadataFilters.check(spec, records, on, name);
            case "$sort", "$project" -> {
                if (!spec.isDocument()) {
                    throw Refusal.command(on.ns(), name + " whose argument is not a document");
                }
                // names of the records' fields with directions or inclusions, nothing computed
                BsonDocument names = new BsonDocument();
                for (Map.Entry<String, BsonValue> e : spec.asDocument().entrySet()) {
                    if (!(e.getValue().isNumber() || e.getValue().isBoolean())) {
                        throw Refusal.command(on.ns(), name + " of '" + Arguments.quoted(e.getKey()) + "' with a "
                                + "computed value (only inclusions, exclusions and directions are examined there)");
                    }
                    names.append(e.getKey(), new org.bson.BsonBoolean(true));
                }
                MetadataFilters.check(names, records, on, name);
            }
            case "$count" -> Expressions.refuseMentions(spec, on.paths(), "$count naming it", true);
            default -> {
                if (!spec.isNumber()) {
                    throw Refusal.command(on.ns(), name + " whose argument is not a number");
                }
            }
        }
    }

    private static BsonDocument stage(BsonValue stage, Arguments.On on) {
        if (!stage.isDocument() || stage.asDocument().size() != 1) {
            throw Refusal.command(on.ns(), "a pipeline stage that is not a document with exactly one key");
        }
        return stage.asDocument();
    }
}
