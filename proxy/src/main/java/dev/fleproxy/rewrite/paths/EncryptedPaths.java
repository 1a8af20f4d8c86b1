package dev.fleproxy.rewrite.paths;

import dev.fleproxy.crypto.Envelope;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldRule;

/**
 * Where a path stands relative to a collection's encrypted fields, from one tree of the policy's
 * paths that both ways of asking walk: by dotted string ({@link #classify}, for filters, updates
 * and pipelines) and segment by segment over raw bytes ({@link Node#child}, for documents written
 * in bulk). Array indexes and positional operators ("items.0.price", "items.$[].price") are
 * passed over before a field is reached, so a policy path reaches through arrays of documents the
 * way MongoDB's dotted paths do; once a field is reached, anything after it lies inside its one
 * opaque envelope.
 */
public final class EncryptedPaths {

    public record Match(PathKind kind, FieldRule rule) {
        public static final Match NONE = new Match(PathKind.NONE, null);
        static final Match PREFIX = new Match(PathKind.PREFIX, null);
    }

    /**
     * One segment of the policy's paths: an encrypted field (rule set) or a step towards some
     * (children). Under {@code fields: "*"} the root stands for every top-level field but _id.
     */
    public static final class Node extends PathNode<Node> {
        FieldRule rule;
        /** The v2 context of the rule's envelopes (namespace and path), when rule is set. */
        byte[] context;

        Node(String name) {
            super(name);
        }

        /** The encrypted field this segment ends, or null if it is a step towards some. */
        public FieldRule rule() {
            return rule;
        }

        /** The v2 context of the rule's envelopes, when rule is set. */
        public byte[] context() {
            return context;
        }
    }

    private static final byte[] ID = {'_', 'i', 'd'};

    private final CollectionPolicy policy;
    private final Node root = new Node("");
    private final ReadShape readShape;
    /** The fields with a search index, by path; their tags live under {@code __fle}. */
    private final java.util.List<FieldRule> searchIndexed;

    EncryptedPaths(CollectionPolicy policy) {
        this.policy = policy;
        this.searchIndexed = policy.searchIndexed();
        for (FieldRule r : policy.fields().values()) {
            Node n = PathNode.grow(root, r.path(), Node::new);
            n.rule = r;
            n.context = Envelope.context(policy.namespace(), r.path());
        }
        readShape = ReadShape.of(policy);
    }

    /** The collection's documents as a reply returns them: where envelopes may be opened. Never changed. */
    public ReadShape readShape() {
        return readShape;
    }

    CollectionPolicy policy() {
        return policy;
    }

    /** Every top-level field but _id is one envelope ({@code fields: "*"}). */
    public boolean allFields() {
        return policy.allFields();
    }

    public Node root() {
        return root;
    }

    /** The rule {@code fields: "*"} gives every top-level field: randomized (for the bytes walk, which needs no name). */
    public static final FieldRule EVERY_FIELD = new FieldRule("*", false);

    /** The rule {@code fields: "*"} gives a top-level field. */
    static FieldRule topLevelRule(String name) {
        return new FieldRule(name, false);
    }

    /** True for _id, which is never encrypted. */
    public static boolean isId(byte[] buf, int start, int end) {
        return end - start == 3 && buf[start] == ID[0] && buf[start + 1] == ID[1] && buf[start + 2] == ID[2];
    }

    /**
     * True if a top-level field of this name (buf[start, end)) holds nothing encrypted: not
     * encrypted itself, nor on the way to an encrypted field. Names that read like array indexes
     * or operators count as touching, to be safe.
     */
    public boolean plainTopLevel(byte[] buf, int start, int end) {
        if (policy.allFields()) {
            return isId(buf, start, end);
        }
        if (!searchIndexed.isEmpty() && end - start == TAGS.length && java.util.Arrays.equals(buf, start, end, TAGS, 0,
                TAGS.length)) {
            return false; // the proxy's search tags: looked at by the rewriters, which refuse them
        }
        return !PathSegments.transparent(buf, start, end) && root.child(buf, start, end) == null;
    }

    private static final byte[] TAGS = dev.fleproxy.rewrite.search.SearchTags.FIELD.getBytes(
            java.nio.charset.StandardCharsets.UTF_8);

    /** The fields with a search index, by path (empty for most collections). */
    public java.util.List<FieldRule> searchIndexed() {
        return searchIndexed;
    }

    public Match classify(String rawPath) {
        if (!searchIndexed.isEmpty() && dev.fleproxy.rewrite.search.SearchTags.reserved(rawPath)) {
            throw dev.fleproxy.protocol.Refusal.command(policy.namespace(), "the field '"
                    + dev.fleproxy.rewrite.search.SearchTags.FIELD + "' holds the proxy's search tags: clients may "
                    + "not name it");
        }
        if (policy.allFields()) {
            return topLevel(rawPath);
        }
        if (rawPath.isEmpty()) {
            return Match.PREFIX;
        }
        Node n = root;
        String[] segs = rawPath.split("\\.", -1);
        for (int i = 0; i < segs.length; i++) {
            String seg = segs[i];
            if (n.rule != null) {
                return new Match(PathKind.INSIDE, n.rule); // a segment after the field: inside its envelope
            }
            if (PathSegments.transparent(seg)) {
                continue;
            }
            Node next = n.child(seg);
            if (next == null) {
                return Match.NONE;
            }
            n = next;
        }
        if (n.rule != null) {
            return new Match(PathKind.EXACT, n.rule);
        }
        return Match.PREFIX; // every node without a rule has children
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
        return new Match(dot < 0 ? PathKind.EXACT : PathKind.INSIDE, topLevelRule(top));
    }

    /** The tree node a PREFIX path reaches (the encrypted fields under it are its descendants); null if none. */
    public Node nodeAt(String rawPath) {
        if (policy.allFields()) {
            return null;
        }
        Node n = root;
        for (String seg : rawPath.isEmpty() ? new String[0] : rawPath.split("\\.", -1)) {
            if (n.rule != null) {
                return null;
            }
            if (!PathSegments.transparent(seg)) {
                n = n.child(seg);
                if (n == null) {
                    return null;
                }
            }
        }
        return n.rule != null ? null : n;
    }

    /** True if any encrypted field under this prefix (or the prefix itself) is randomized. */
    public boolean anyRandomizedUnder(String rawPrefix) {
        if (policy.allFields()) {
            return true;
        }
        String prefix = PathSegments.normalize(rawPrefix);
        for (FieldRule r : policy.fields().values()) {
            if (!r.deterministic() && (r.path().equals(prefix) || r.path().startsWith(prefix + "."))) {
                return true;
            }
        }
        return false;
    }
}
