package dev.fleproxy.policy;

import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a new policy would lower in who may see, query or write a field ({@link PolicyDowngrade}):
 * reveal, query or write granted to more identities (or to everyone), a mask that shows more
 * (deny and redact show nothing; a pseudonym shows equality; partial shows a suffix, more with a
 * larger keep), or an identity those lists name now matching other connections (its attributes
 * changed, or it is gone, so its connections fall to anonymous or another name).
 */
final class AccessDowngrade {
    private AccessDowngrade() {
    }

    static void of(String field, FieldAccess was, FieldAccess now, Identities before, Identities after,
                   List<String> lowered) {
        widened("reveal", field, was.reveal(), now.reveal(), lowered);
        widened("query", field, was.query(), now.query(), lowered);
        widened("write", field, was.write(), now.write(), lowered);
        if (was.reveal() != null && now.reveal() != null && !now.deny().containsAll(was.deny())) {
            lowered.add("deny of " + field + " narrowed to " + new TreeSet<>(now.deny()));
        }
        if (was.reveal() != null && now.reveal() != null && shows(now) > shows(was)) {
            lowered.add("the mask of " + field + " (" + describe(was) + " becomes " + describe(now) + ")");
        }
        Set<String> named = new TreeSet<>();
        for (Set<String> s : List.of(nullToEmpty(was.reveal()), was.deny(), nullToEmpty(was.query()),
                nullToEmpty(was.write()))) {
            named.addAll(s);
        }
        for (String name : named) {
            if (!name.equals(Identities.ANONYMOUS)
                    && !Objects.equals(before.byName().get(name), after.byName().get(name))) {
                lowered.add("identity '" + name + "' named by " + field + " is redefined or removed");
            }
        }
    }

    private static void widened(String what, String field, Set<String> was, Set<String> now, List<String> lowered) {
        if (was != null && (now == null || !was.containsAll(now))) {
            lowered.add(what + " of " + field + " widened to " + (now == null ? "everyone" : new TreeSet<>(now)));
        }
    }

    /** How much a mask shows, in order: nothing, equality, a suffix of growing length. */
    private static int shows(FieldAccess a) {
        return switch (a.mask()) {
            case DENY, REDACT -> 0;
            case PSEUDONYM -> 1;
            case PARTIAL -> 2 + a.keep();
        };
    }

    private static String describe(FieldAccess a) {
        return a.mask().name().toLowerCase(java.util.Locale.ROOT) + (a.mask() == FieldAccess.Mask.PARTIAL
                ? " keeping " + a.keep() : "");
    }

    private static Set<String> nullToEmpty(Set<String> s) {
        return s == null ? Set.of() : s;
    }
}
