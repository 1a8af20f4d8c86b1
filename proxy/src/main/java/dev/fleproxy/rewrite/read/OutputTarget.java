package dev.fleproxy.rewrite.read;

import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.EncryptedPaths;
import dev.fleproxy.rewrite.paths.PathKind;
import java.util.Map;

/**
 * The rule an $out or $merge after evaluated stages must meet before anything is read (fail
 * closed): every path of its output that may hold an encrypted field's value ({@link
 * CarriedPaths}) must be encrypted by the target's policy — the path itself or a field above it
 * — and a value of a randomized field may not land in a deterministic one (its equalities, which
 * the source hid, would show). So plaintext of a policy field never reaches the server: a target
 * outside the policy takes only outputs that carry none (the encrypted fields projected or unset
 * away), and _id, never encrypted, may carry none. A $merge's {@code on} fields must be plain in
 * the target or deterministic there: they are compared by the server.
 */
final class OutputTarget {
    private OutputTarget() {
    }

    /** Refuses the stage unless the target keeps every carried path encrypted. @param target null if outside the policy */
    static void check(OutputStage out, CarriedPaths carried, CollectionContext target, String sourceNs) {
        String into = out.name() + " into " + out.namespace();
        for (Map.Entry<String, Boolean> c : carried.paths().entrySet()) {
            covered(c.getKey(), c.getValue(), target, into, sourceNs);
        }
        if (carried.everyTopLevel() != null && (target == null || !target.policy.allFields())) {
            throw refuse(sourceNs, into + " would write every field of " + sourceNs + " (fields: \"*\") where "
                    + (target == null ? "the policy does not encrypt them" : "the target does not encrypt every field "
                    + "(it lists " + target.policy.describeFields() + ")") + "; name the fields the output keeps "
                    + "with a $project, or encrypt the target with fields: \"*\"");
        }
        for (String on : out.on()) {
            if (target == null || on.equals("_id")) {
                continue;
            }
            EncryptedPaths.Match m = target.paths.classify(on);
            if (m.kind() == PathKind.PREFIX || m.kind() == PathKind.INSIDE
                    || m.kind() == PathKind.EXACT && !m.rule().deterministic()) {
                throw Refusal.onField(out.namespace(), m.rule() != null ? m.rule().path() : on, "$merge on it ("
                        + "the server matches on values it can compare only when the field is deterministic)");
            }
        }
    }

    private static void covered(String path, boolean randomized, CollectionContext target, String into, String sourceNs) {
        if (path.equals("_id") || path.startsWith("_id.")) {
            throw refuse(sourceNs, into + ": the output's _id would hold values of encrypted fields of " + sourceNs
                    + ", and _id is never encrypted; group or project by plain fields");
        }
        if (target == null) {
            throw refuse(sourceNs, into + ", a collection the policy does not encrypt, would store the encrypted "
                    + "field '" + path + "' (or values computed from it) in plaintext; list the target in the policy "
                    + "with that field encrypted, or leave it out of the output ($unset, $project)");
        }
        EncryptedPaths.Match m = target.paths.classify(path);
        if (m.kind() != PathKind.EXACT && m.kind() != PathKind.INSIDE) {
            throw refuse(sourceNs, into + " would store '" + path + "', an encrypted field of " + sourceNs + " (or a "
                    + "value computed from it), where the target's policy does not encrypt it (it encrypts "
                    + target.policy.describeFields() + ")");
        }
        if (randomized && m.rule().deterministic()) {
            throw refuse(sourceNs, into + " would store '" + path + "', which holds values of randomized fields of "
                    + sourceNs + ", in the deterministic field '" + m.rule().path() + "', whose envelopes show "
                    + "which values are equal");
        }
    }

    private static Refusal refuse(String sourceNs, String why) {
        return new Refusal(ProxyError.UNSUPPORTED_ON_ENCRYPTED_FIELD, sourceNs + ": " + why);
    }
}
