package dev.fleproxy.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Predicate;

/**
 * What a new policy would remove or lower compared with the one in force: a reload must never
 * lower protection silently, so {@link PolicyHolder} applies a new file only if this finds nothing
 * (a restart still applies it: the operator then chose it deliberately).
 *
 * <p>Lowering: a collection dropped; a field no longer encrypted (neither listed nor inside a
 * listed path); {@code fields: "*"} narrowed to a list; a key dropped from key ∪ previousKeys (its
 * envelopes could no longer be opened); plaintextReads going from deny to allow. A field changing
 * between deterministic and randomized counts too: its stored envelopes are of the old variant, so
 * equality queries, rewritten for the new one, would stop matching them. So does access granted
 * more widely ({@link AccessDowngrade}).
 *
 * <p>Not lowering, applied: new collections, fields, previous keys; a field list widened to
 * {@code "*"} (unless a deterministic field thereby becomes randomized); a new key with the old
 * one kept in previousKeys; allow → deny; and a suite change. Readers open every envelope by the
 * suite and key its header names, so values sealed under the old suite stay readable; the
 * validator checks the new suite against the key and warns about 3DES as at startup. (Equality
 * queries on a deterministic field match values under the key and every previous key, each with
 * its algorithm's default suite, until {@code rewrap} has moved them.) The envelope subtype is not
 * compared either:
 * readers take both subtypes.
 */
public final class PolicyDowngrade {
    private PolicyDowngrade() {
    }

    /** What {@code next} would remove or lower, one human-readable item each; empty if nothing. */
    public static List<String> of(Policy current, Policy next) {
        return of(current, next, id -> false);
    }

    /**
     * As {@link #of(Policy, Policy)}, where dropping a key {@code unopenable} accepts (the KMS does
     * not have it: no envelope under it can be opened) lowers nothing. A reload applies before its
     * keys are checked, so a mistyped UUID is in force until a corrected file replaces it, and that
     * file must not need a restart. Removing the collection still does: its writes would go
     * unencrypted, where now they are refused.
     */
    public static List<String> of(Policy current, Policy next, Predicate<UUID> unopenable) {
        List<String> lowered = new ArrayList<>();
        // sorted, so the same two files always give the same message
        for (CollectionPolicy cur : new TreeMap<>(current.collections()).values()) {
            String ns = cur.namespace();
            CollectionPolicy nxt = next.get(ns);
            if (nxt == null) {
                lowered.add("collection " + ns);
                continue;
            }
            fields(cur, nxt, current.identities(), next.identities(), lowered);
            Set<UUID> opening = nxt.openingKeys();
            for (UUID id : cur.openingKeys()) {
                if (!opening.contains(id) && !unopenable.test(id)) {
                    lowered.add("key " + id + " of " + ns);
                }
            }
            if (!cur.plaintextReads() && nxt.plaintextReads()) {
                lowered.add("plaintextReads: allow on " + ns);
            }
        }
        return lowered;
    }

    private static void fields(CollectionPolicy cur, CollectionPolicy nxt, Identities before, Identities after,
                               List<String> lowered) {
        String ns = cur.namespace();
        if (cur.allFields()) {
            if (!nxt.allFields()) {
                lowered.add("fields: \"*\" of " + ns + " (the new file lists only "
                        + String.join(", ", new TreeSet<>(nxt.fields().keySet())) + ")");
            }
            return;
        }
        for (String path : new TreeSet<>(cur.fields().keySet())) {
            FieldRule was = cur.fields().get(path);
            FieldRule now = covering(nxt, path);
            if (now == null) {
                lowered.add("field " + ns + "." + path);
            } else if (now.deterministic() != was.deterministic()) {
                lowered.add((was.deterministic() ? "deterministic" : "randomized") + " field " + ns + "." + path
                        + " becomes " + (now.deterministic() ? "deterministic" : "randomized"));
            }
            if (now != null) {
                AccessDowngrade.of(ns + "." + path, was.access(), now.access(), before, after, lowered);
            }
        }
    }

    /**
     * The rule under which the policy encrypts this path: its own, or that of a listed path it lies
     * inside (sealed whole), or for {@code "*"} its top-level field's (randomized); null if none.
     */
    private static FieldRule covering(CollectionPolicy p, String path) {
        if (p.allFields()) {
            return new FieldRule(path.split("\\.", 2)[0], false);
        }
        for (String prefix = path; ; prefix = prefix.substring(0, prefix.lastIndexOf('.'))) {
            FieldRule r = p.fields().get(prefix);
            if (r != null) {
                return r;
            }
            if (prefix.indexOf('.') < 0) {
                return null;
            }
        }
    }
}
