package dev.fleproxy.policy;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * What a reload changes, for its log line: collections added and removed, keys rotated, other
 * settings changed, identities changed. Each list names at most {@link #NAMED} collections (the
 * line used to list the whole policy: 89 KB at 10,000 collections, issue 30).
 */
public final class PolicyChanges {
    static final int NAMED = 10;

    private PolicyChanges() {
    }

    /** "2 added [a.b, a.c]; 1 key rotated [a.d]; …", or "no change". */
    public static String between(Policy before, Policy after) {
        List<String> added = new ArrayList<>();
        List<String> rotated = new ArrayList<>();
        List<String> changed = new ArrayList<>();
        List<String> removed = new ArrayList<>();
        after.collections().forEach((ns, next) -> {
            CollectionPolicy prev = before.get(ns);
            if (prev == null) {
                added.add(ns);
            } else if (!prev.keyId().equals(next.keyId())) {
                rotated.add(ns);
            } else if (!prev.equals(next)) {
                changed.add(ns);
            }
        });
        before.collections().keySet().stream().filter(ns -> after.get(ns) == null).forEach(removed::add);
        List<String> parts = new ArrayList<>();
        part(parts, added, "added");
        part(parts, rotated, "with a new key");
        part(parts, changed, "with other settings changed");
        part(parts, removed, "removed");
        if (!Objects.equals(before.identities().byName(), after.identities().byName())) {
            parts.add("identities changed (" + after.identities().byName().size() + " now)");
        }
        return parts.isEmpty() ? "no change" : String.join("; ", parts);
    }

    private static void part(List<String> parts, List<String> namespaces, String what) {
        if (!namespaces.isEmpty()) {
            parts.add(namespaces.size() + " collection(s) " + what + " " + names(namespaces));
        }
    }

    /** The first {@link #NAMED} namespaces in order, then how many more. */
    public static String names(Collection<String> namespaces) {
        List<String> sorted = namespaces.stream().sorted().limit(NAMED).toList();
        int more = namespaces.size() - sorted.size();
        return sorted + (more > 0 ? " and " + more + " more" : "");
    }
}
