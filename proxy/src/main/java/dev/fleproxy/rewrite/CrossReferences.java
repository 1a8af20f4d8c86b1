package dev.fleproxy.rewrite;

import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.Refusal;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Commands on a collection without a policy — in any database, the proxy's policy or not — that
 * would read from or write into an encrypted collection: aggregation stages naming another
 * collection ($lookup, $graphLookup, $unionWith, $out, $merge, also in {db, coll} form and
 * however deeply nested), views, renames, mapReduce output, applyOps. Only these commands are parsed
 * further; the rest pass. Nothing here rewrites: a command either passes untouched or is refused.
 */
final class CrossReferences {
    /** Stages whose argument names another namespace. */
    private static final Set<String> FOREIGN_STAGES = Set.of("$lookup", "$graphLookup", "$unionWith", "$out", "$merge");

    private CrossReferences() {
    }

    /** Throws a Refusal if this command, sent to {@code db}, would touch an encrypted collection. */
    static void check(String cmd, BsonDocument body, Policy p, String db, String coll) {
        String ns = db + "." + (coll == null ? "$cmd" : coll);
        switch (cmd) {
            case "applyOps" -> applyOps(body, p, db);
            case "renameCollection", "internalRenameIfOptionsAndIndexesMatch" -> {
                // both name full namespaces: renameCollection: "db.from", to: "db.to"; from: …, to: …
                String from = body.isString(cmd) ? body.getString(cmd).getValue()
                        : body.isString("from") ? body.getString("from").getValue() : "";
                String to = body.isString("to") ? body.getString("to").getValue() : "";
                if (p.get(from) != null || p.get(to) != null) {
                    throw Refusal.command(p.get(from) != null ? from : to, "renameCollection into or out of an "
                            + "encrypted collection is not supported (the policy names collections)");
                }
            }
            case "aggregate" -> pipeline(body.get("pipeline"), p, db, ns);
            case "explain" -> {
                if (body.isDocument("explain") && !body.getDocument("explain").isEmpty()) {
                    BsonDocument inner = body.getDocument("explain");
                    String innerCmd = inner.getFirstKey();
                    String innerColl = inner.isString(innerCmd) ? inner.getString(innerCmd).getValue() : null;
                    if (innerColl != null && p.get(db, innerColl) != null) {
                        throw Refusal.command(db + "." + innerColl, "explain is not supported on an encrypted collection");
                    }
                    check(innerCmd, inner, p, db, innerColl);
                }
            }
            case "create", "collMod" -> {
                if (body.isString("viewOn") && p.get(db, body.getString("viewOn").getValue()) != null) {
                    throw Refusal.command(db + "." + body.getString("viewOn").getValue(), "a view on an encrypted "
                            + "collection would run its pipeline on ciphertext; query the collection through the proxy "
                            + "instead");
                }
                pipeline(body.get("pipeline"), p, db, ns);
            }
            case "mapReduce", "mapreduce" -> {
                String target = mapReduceOutput(body.get("out"), db);
                if (target != null && p.get(target) != null) {
                    throw Refusal.command(target, "mapReduce into an encrypted collection is not supported");
                }
            }
            case "cloneCollectionAsCapped" -> {
                if (body.isString("toCollection") && p.get(db, body.getString("toCollection").getValue()) != null) {
                    throw Refusal.command(db + "." + body.getString("toCollection").getValue(), cmd + " into an "
                            + "encrypted collection is not supported");
                }
            }
            case "setQuerySettings", "removeQuerySettings" -> {
                // {find: coll, filter: …, $db: …}: a query shape, constants and all, kept by the server
                BsonValue shape = body.get(cmd);
                if (shape != null && shape.isDocument() && !shape.asDocument().isEmpty()) {
                    BsonDocument q = shape.asDocument();
                    BsonValue target = q.get(q.getFirstKey());
                    String qdb = q.isString("$db") ? q.getString("$db").getValue() : db;
                    if (target.isString() && p.get(qdb, target.asString().getValue()) != null) {
                        throw Refusal.command(qdb + "." + target.asString().getValue(), cmd + " with a query on an "
                                + "encrypted collection (its shape would reach the server with its constants)");
                    }
                }
            }
            default -> {
                // other commands name only their own collection
            }
        }
    }

    /**
     * applyOps writes oplog entries (inserts, updates, commands, nested applyOps) that bypass
     * every check here, on any namespace: refused whenever any collection is encrypted.
     */
    private static void applyOps(BsonDocument body, Policy p, String db) {
        String named = db;
        if (body.isArray("applyOps")) {
            for (BsonValue op : body.getArray("applyOps")) {
                if (op.isDocument() && op.asDocument().isString("ns") && p.get(op.asDocument().getString("ns").getValue()) != null) {
                    named = op.asDocument().getString("ns").getValue();
                    break;
                }
            }
        }
        throw Refusal.command(named, "applyOps is not supported while collections are encrypted (its operations "
                + "would reach the database unchecked)");
    }

    /**
     * Every stage naming an encrypted collection, at any depth ($facet, $lookup and $unionWith
     * sub-pipelines, stage documents with more than one key): the walk looks at every document.
     */
    static void pipeline(BsonValue pipeline, Policy p, String db, String ns) {
        if (pipeline == null) {
            return;
        }
        if (pipeline.isDocument()) {
            for (Map.Entry<String, BsonValue> e : pipeline.asDocument().entrySet()) {
                if (FOREIGN_STAGES.contains(e.getKey())) {
                    String target = foreignCollection(e.getKey(), e.getValue(), db);
                    if (target != null && p.get(target) != null) {
                        throw Refusal.command(ns, e.getKey() + " with the encrypted collection " + target
                                + " is not supported");
                    }
                }
                pipeline(e.getValue(), p, db, ns);
            }
        } else if (pipeline.isArray()) {
            for (BsonValue v : pipeline.asArray()) {
                pipeline(v, p, db, ns);
            }
        }
    }

    /** The namespace a $lookup/$graphLookup/$unionWith reads or an $out/$merge writes, or null. */
    static String foreignCollection(String stage, BsonValue spec, String db) {
        return switch (stage) {
            case "$lookup", "$graphLookup" -> spec.isDocument() ? namespace(spec.asDocument().get("from"), db) : null;
            case "$unionWith", "$out" -> namespace(spec, db);
            case "$merge" -> namespace(spec.isDocument() ? spec.asDocument().get("into") : spec, db);
            default -> null;
        };
    }

    /** "coll" (in db) or {db: …, coll: …}. */
    private static String namespace(BsonValue v, String db) {
        if (v == null) {
            return null;
        }
        if (v.isString()) {
            return db + "." + v.asString().getValue();
        }
        if (v.isDocument() && v.asDocument().isString("coll")) {
            BsonDocument d = v.asDocument();
            return (d.isString("db") ? d.getString("db").getValue() : db) + "." + d.getString("coll").getValue();
        }
        return null;
    }

    /** mapReduce's out: "coll", or {replace|merge|reduce: coll, db: …}; inline writes nothing. */
    private static String mapReduceOutput(BsonValue out, String db) {
        if (out == null) {
            return null;
        }
        if (out.isString()) {
            return db + "." + out.asString().getValue();
        }
        if (out.isDocument()) {
            BsonDocument d = out.asDocument();
            String target = d.isString("db") ? d.getString("db").getValue() : db;
            for (String mode : new String[] {"replace", "merge", "reduce"}) {
                if (d.isString(mode)) {
                    return target + "." + d.getString(mode).getValue();
                }
            }
        }
        return null;
    }
}
