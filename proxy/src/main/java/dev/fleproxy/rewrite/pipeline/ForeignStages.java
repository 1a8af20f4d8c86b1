package dev.fleproxy.rewrite.pipeline;

import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.paths.PathKind;
import dev.fleproxy.rewrite.query.Expressions;
import java.util.Map;
import java.util.Set;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The stages that name another collection: $lookup, $graphLookup and $unionWith read one, $out and
 * $merge write one, by name or as {db, coll}. In any pipeline, however deeply nested, a stage
 * naming an encrypted collection is refused; in an aggregate on an encrypted collection these
 * stages are checked for what they would carry out of it.
 */
public final class ForeignStages {
    /** Stages whose argument names another namespace. */
    private static final Set<String> FOREIGN_STAGES = Set.of("$lookup", "$graphLookup", "$unionWith", "$out", "$merge");

    private ForeignStages() {
    }

    /**
     * Every stage naming an encrypted collection, at any depth ($facet, $lookup and $unionWith
     * sub-pipelines, stage documents with more than one key): the walk looks at every document.
     */
    public static void refuseEncrypted(BsonValue pipeline, Policy p, String db, String ns) {
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
                    refuseMisspelt(e.getKey(), target, p, ns);
                }
                refuseEncrypted(e.getValue(), p, db, ns);
            }
        } else if (pipeline.isArray()) {
            for (BsonValue v : pipeline.asArray()) {
                refuseEncrypted(v, p, db, ns);
            }
        }
    }

    /**
     * A namespace the server could take for an encrypted one the policy spells otherwise ("HR.people"
     * for "hr.people"), or could not hold at all: refused like the admission gate refuses such a $db.
     */
    private static void refuseMisspelt(String stage, String target, Policy p, String ns) {
        if (target == null) {
            return;
        }
        String problem = dev.fleproxy.policy.NamespaceNames.namespaceProblem(target);
        String policyDb = problem == null ? p.databaseDifferingInCase(target.substring(0, target.indexOf('.'))) : null;
        if (problem != null || policyDb != null) {
            throw Refusal.command(ns, stage + " naming a namespace " + (problem != null ? "MongoDB cannot hold (" + problem
                    + ")" : "whose database differs only in case from '" + policyDb + "', which holds encrypted "
                    + "collections"));
        }
    }

    /** The namespace a $lookup/$graphLookup/$unionWith reads or an $out/$merge writes, or null. */
    private static String foreignCollection(String stage, BsonValue spec, String db) {
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

    /**
     * A stage of an aggregate on an encrypted collection that reads or writes another collection:
     * $out and $merge are refused, and so are $unionWith and any stage with an encrypted
     * collection; a $lookup or $graphLookup of a plain one passes if it names no encrypted field
     * and carries none to the other collection, and its output field holds nothing to decrypt.
     */
    static void check(String name, BsonValue spec, PipelineSchema s, Policy policy, String db) {
        if (name.equals("$out") || name.equals("$merge")) {
            throw Refusal.command(s.ctx.ns(), name + " would copy encrypted data out of its collection's policy");
        }
        String from = foreignCollection(name, spec, db);
        if (from != null && policy.get(from) != null) {
            throw Refusal.command(s.ctx.ns(), name + " with the encrypted collection " + from + " is not supported");
        }
        if (name.equals("$unionWith")) {
            // its documents would come back among this collection's, where its fields would be decrypted
            throw Refusal.command(s.ctx.ns(), "$unionWith into an encrypted collection's documents is not "
                    + "supported");
        }
        s.refuseMentions(spec, name);
        if (spec.isDocument() && spec.asDocument().isDocument("let")) {
            refuseCarriedVariables(spec.asDocument().getDocument("let"), spec.asDocument().get("pipeline"), s,
                    name);
        }
        if (spec.isDocument() && spec.asDocument().isString("as")) {
            s.shape.assign(spec.asDocument().getString("as").getValue(), null); // another collection's documents
        }
    }

    /**
     * $lookup's let binds variables to this collection's documents for its sub-pipeline, which
     * runs on another collection, where the proxy rewrites nothing: a variable bound to the whole
     * document ($$ROOT, $$CURRENT) or to a path holding encrypted values carries them there, and a
     * use of it that reaches one ("$$r", "$$r.ssn") would compare ciphertext with whatever it is
     * given, a constant in plaintext included. Such uses are refused; uses of its plain fields pass.
     */
    private static void refuseCarriedVariables(BsonDocument let, BsonValue pipeline, PipelineSchema s, String stage) {
        Map<String, String> carried = new java.util.HashMap<>();
        for (Map.Entry<String, BsonValue> e : let.entrySet()) {
            String ref = Expressions.reference(e.getValue());
            if (ref == null) {
                s.refuseReferences(e.getValue(), stage + " let");
            } else if (ref.isEmpty() || s.kind(ref) != PathKind.NONE) {
                carried.put(e.getKey(), ref);
            }
        }
        if (!carried.isEmpty() && pipeline != null) {
            refuseUses(pipeline, carried, s, stage);
        }
    }

    private static void refuseUses(BsonValue v, Map<String, String> carried, PipelineSchema s, String stage) {
        if (v.isString() && v.asString().getValue().startsWith("$$")) {
            String use = v.asString().getValue().substring(2);
            int dot = use.indexOf('.');
            String base = carried.get(dot < 0 ? use : use.substring(0, dot));
            if (base != null) {
                String rest = dot < 0 ? "" : use.substring(dot + 1);
                String path = base.isEmpty() ? rest : rest.isEmpty() ? base : base + "." + rest;
                if (path.isEmpty() || s.kind(path) != PathKind.NONE) {
                    throw s.refuse(path.isEmpty() ? "(the whole document)" : path, stage + " sub-pipeline using '$$"
                            + use + "' (a let variable bound to the encrypted collection's documents)");
                }
            }
        } else if (v.isDocument()) {
            v.asDocument().values().forEach(x -> refuseUses(x, carried, s, stage));
        } else if (v.isArray()) {
            v.asArray().forEach(x -> refuseUses(x, carried, s, stage));
        }
    }
}
