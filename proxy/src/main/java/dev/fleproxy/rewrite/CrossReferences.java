package dev.fleproxy.rewrite;

import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.pipeline.ForeignStages;
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
    private CrossReferences() {
    }

    /** Throws a Refusal if this command, sent to {@code db}, would touch an encrypted collection. */
    static void check(String cmd, BsonDocument body, Policy p, String db, String coll) {
        String ns = db + "." + (coll == null ? "$cmd" : coll);
        switch (cmd) {
            case "applyOps" -> applyOps(body, p, db);
            case "renameCollection", "internalRenameIfOptionsAndIndexesMatch" -> rename(cmd, body, p);
            case "aggregate" -> ForeignStages.refuseEncrypted(body.get("pipeline"), p, db, ns);
            case "explain" -> explain(body, p, db);
            case "create", "collMod" -> {
                view(body, p, db);
                ForeignStages.refuseEncrypted(body.get("pipeline"), p, db, ns);
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
            case "setQuerySettings", "removeQuerySettings" -> querySettings(cmd, body, p, db);
            default -> {
                // other commands name only their own collection
            }
        }
    }

    /** Both name full namespaces: renameCollection: "db.from", to: "db.to"; from: …, to: …. */
    private static void rename(String cmd, BsonDocument body, Policy p) {
        String from = body.isString(cmd) ? body.getString(cmd).getValue()
                : body.isString("from") ? body.getString("from").getValue() : "";
        String to = body.isString("to") ? body.getString("to").getValue() : "";
        if (p.get(from) != null || p.get(to) != null) {
            throw Refusal.command(p.get(from) != null ? from : to, "renameCollection into or out of an "
                    + "encrypted collection is not supported (the policy names collections)");
        }
    }

    /** explain of a command: refused on an encrypted collection, else the command it explains is checked. */
    private static void explain(BsonDocument body, Policy p, String db) {
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

    /** create and collMod: no view on an encrypted collection. */
    private static void view(BsonDocument body, Policy p, String db) {
        if (body.isString("viewOn") && p.get(db, body.getString("viewOn").getValue()) != null) {
            throw Refusal.command(db + "." + body.getString("viewOn").getValue(), "a view on an encrypted "
                    + "collection would run its pipeline on ciphertext; query the collection through the proxy "
                    + "instead");
        }
    }

    /** {find: coll, filter: …, $db: …}: a query shape, constants and all, kept by the server. */
    private static void querySettings(String cmd, BsonDocument body, Policy p, String db) {
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
