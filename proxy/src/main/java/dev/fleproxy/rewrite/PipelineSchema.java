package dev.fleproxy.rewrite;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.bson.BsonValue;

/**
 * What an aggregation pipeline knows about encrypted values as its stages are checked in order:
 * the collection's encrypted paths, plus the names earlier stages copied encrypted values to
 * (which the reply decrypts wherever they end up, and which later stages must treat as encrypted).
 */
final class PipelineSchema {
    final CollectionContext ctx;
    final Set<String> derived = new HashSet<>();

    PipelineSchema(CollectionContext ctx) {
        this.ctx = ctx;
    }

    /** Like {@link EncryptedPaths#classify}, also knowing the copies. */
    EncryptedPaths.Kind kind(String path) {
        EncryptedPaths.Kind k = ctx.paths.classify(path).kind();
        if (k != EncryptedPaths.Kind.NONE) {
            return k;
        }
        String n = EncryptedPaths.normalize(path);
        for (String d : derived) {
            if (n.equals(d)) {
                return EncryptedPaths.Kind.EXACT;
            }
            if (n.startsWith(d + ".")) {
                return EncryptedPaths.Kind.INSIDE;
            }
            if (n.isEmpty() || d.startsWith(n + ".")) {
                return EncryptedPaths.Kind.PREFIX;
            }
        }
        return EncryptedPaths.Kind.NONE;
    }

    boolean deterministic(String path) {
        EncryptedPaths.Match m = ctx.paths.classify(path);
        return m.kind() == EncryptedPaths.Kind.EXACT && m.rule().deterministic();
    }

    Refusal refuse(String path, String what) {
        EncryptedPaths.Match m = ctx.paths.classify(path);
        return Refusal.onField(ctx.ns(), m.rule() != null ? m.rule().path() : path, what);
    }

    void refuseReferences(BsonValue expr, String where) {
        String ref = Expressions.reference(expr);
        if (ref != null) {
            if (kind(ref) != EncryptedPaths.Kind.NONE) {
                throw refuse(ref.isEmpty() ? "(the whole document)" : ref, where + " computing on '$" + ref + "'");
            }
            return;
        }
        if (expr.isDocument()) {
            expr.asDocument().values().forEach(v -> refuseReferences(v, where));
        } else if (expr.isArray()) {
            expr.asArray().forEach(v -> refuseReferences(v, where));
        }
    }

    /** Any string or key naming an encrypted field, for stages whose syntax we do not know. */
    void refuseMentions(BsonValue spec, String stage) {
        if (spec.isString()) {
            String s = spec.asString().getValue();
            String path = s.startsWith("$") ? Expressions.reference(spec) : s;
            if (path != null && !path.isEmpty() && kind(path) != EncryptedPaths.Kind.NONE) {
                throw refuse(path, "the stage " + stage);
            }
        } else if (spec.isDocument()) {
            for (Map.Entry<String, BsonValue> e : spec.asDocument().entrySet()) {
                if (!e.getKey().startsWith("$") && kind(e.getKey()) != EncryptedPaths.Kind.NONE) {
                    throw refuse(e.getKey(), "the stage " + stage);
                }
                refuseMentions(e.getValue(), stage);
            }
        } else if (spec.isArray()) {
            spec.asArray().forEach(v -> refuseMentions(v, stage));
        }
    }
}
