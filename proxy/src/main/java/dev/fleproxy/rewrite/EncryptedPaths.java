package dev.fleproxy.rewrite;

import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldRule;

/**
 * Where a dotted path stands relative to a collection's encrypted fields. Array indexes and
 * positional operators ("items.0.price", "items.$[].price") are dropped before comparing, so a
 * policy path reaches through arrays of documents the way MongoDB's dotted paths do.
 */
final class EncryptedPaths {

    enum Kind {
        /** Nothing encrypted at or under this path. */
        NONE,
        /** The path is an encrypted field. */
        EXACT,
        /** The path points inside an encrypted value (which is one opaque envelope). */
        INSIDE,
        /** Encrypted fields lie under this path (a sub-document or array holding them). */
        PREFIX
    }

    record Match(Kind kind, FieldRule rule) {
        static final Match NONE = new Match(Kind.NONE, null);
        static final Match PREFIX = new Match(Kind.PREFIX, null);
    }

    private final CollectionPolicy policy;

    EncryptedPaths(CollectionPolicy policy) {
        this.policy = policy;
    }

    CollectionPolicy policy() {
        return policy;
    }

    static String normalize(String path) {
        if (path.indexOf('.') < 0) {
            return path;
        }
        StringBuilder out = new StringBuilder(path.length());
        for (String seg : path.split("\\.", -1)) {
            if (seg.startsWith("$") || (!seg.isEmpty() && seg.chars().allMatch(Character::isDigit))) {
                continue;
            }
            if (out.length() > 0) {
                out.append('.');
            }
            out.append(seg);
        }
        return out.toString();
    }

    Match classify(String rawPath) {
        if (policy.allFields()) {
            return topLevel(rawPath);
        }
        String path = normalize(rawPath);
        if (path.equals("_id") || path.startsWith("_id.")) {
            return Match.NONE;
        }
        boolean prefix = false;
        for (FieldRule r : policy.fields().values()) {
            String p = r.path();
            if (path.equals(p)) {
                return atOrInside(rawPath, r);
            }
            if (path.startsWith(p) && path.charAt(p.length()) == '.') {
                return new Match(Kind.INSIDE, r);
            }
            if (path.isEmpty() || (p.startsWith(path) && p.charAt(path.length()) == '.')) {
                prefix = true;
            }
        }
        return prefix ? Match.PREFIX : Match.NONE;
    }

    /**
     * fields: "*": every top-level field is one envelope. Its name is the path's first raw segment
     * (even "2024": at the top of a document it cannot be an array index), and anything after it
     * lies inside the envelope.
     */
    private static Match topLevel(String rawPath) {
        if (rawPath.isEmpty()) {
            return Match.PREFIX;
        }
        int dot = rawPath.indexOf('.');
        String top = dot < 0 ? rawPath : rawPath.substring(0, dot);
        if (top.equals("_id")) {
            return Match.NONE;
        }
        return new Match(dot < 0 ? Kind.EXACT : Kind.INSIDE, new FieldRule(top, false));
    }

    /**
     * The normalized path reached field {@code r}; any raw segment after it (an index such as
     * "phones.0" or a positional "phones.$[]") addresses a part of the one opaque envelope.
     */
    private static Match atOrInside(String rawPath, FieldRule r) {
        if (rawPath.indexOf('.') < 0) {
            return new Match(Kind.EXACT, r);
        }
        int named = r.path().split("\\.").length;
        String[] segs = rawPath.split("\\.", -1);
        int seen = 0;
        for (int i = 0; i < segs.length; i++) {
            String seg = segs[i];
            boolean skipped = seg.startsWith("$") || (!seg.isEmpty() && seg.chars().allMatch(Character::isDigit));
            if (!skipped && ++seen == named) {
                return new Match(i == segs.length - 1 ? Kind.EXACT : Kind.INSIDE, r);
            }
        }
        return new Match(Kind.EXACT, r);
    }

    /** True if any encrypted field under this prefix (or the prefix itself) is randomized. */
    boolean anyRandomizedUnder(String rawPrefix) {
        if (policy.allFields()) {
            return true;
        }
        String prefix = normalize(rawPrefix);
        for (FieldRule r : policy.fields().values()) {
            if (!r.deterministic() && (r.path().equals(prefix) || r.path().startsWith(prefix + "."))) {
                return true;
            }
        }
        return false;
    }
}
