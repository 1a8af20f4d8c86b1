package dev.fleproxy.rewrite.paths;

import dev.fleproxy.crypto.Envelope;
import dev.fleproxy.policy.CollectionPolicy;

/**
 * Where the documents of a reply hold envelopes the proxy may open, and of which policy field:
 * the only places it decrypts (docs/envelope-format.md, "Associated data and the context"). For a find it is the collection's policy fields;
 * an aggregation reshapes it stage by stage (rewrite/pipeline): a field copied, grouped or
 * pushed to another name carries its source field along (its envelopes open with the source's
 * context), a name given a computed value holds nothing to open, and a stage that replaces the
 * documents leaves nothing to open. An envelope anywhere else is returned exactly as stored.
 * Array indexes are passed over, as in policy paths. Mutable while a pipeline is analysed; the
 * collection's own shape is copied before it is changed.
 */
public final class ReadShape {

    /** One name of the returned documents. */
    public static final class Node extends PathNode<Node> {
        /** The policy field whose envelopes are here (its path, the context's second part); null if none. */
        String field;
        /** Envelope.context(namespace, field), when field is set. */
        byte[] context;
        /** Reached by a pipeline copy: $push makes arrays of it, $first of nothing gives null. */
        boolean copied;
        /** fields: "*" at this level: every name but _id is a field of its own name (unless a child says otherwise). */
        boolean allFields;
        /** The proxy's search tags (SearchTags.FIELD) stand here: left out of every reply. */
        boolean tags;

        Node(String name) {
            super(name);
        }

        public boolean isField() {
            return field != null;
        }

        /** The policy field whose envelopes are here; null if none. */
        public String field() {
            return field;
        }

        /** The context its envelopes open in, when field is set. */
        public byte[] context() {
            return context;
        }

        /** Reached by a pipeline copy: arrays of the field's envelopes, or null, may stand here. */
        public boolean copied() {
            return copied;
        }

        /** fields: "*" at this level: every name but _id is a field of its own name. */
        public boolean allFields() {
            return allFields;
        }

        /** The proxy's search tags stand here: what a reply holds at this node is left out. */
        public boolean tags() {
            return tags;
        }

        /** True if envelopes may be opened at or under this node (or tags left out). */
        boolean holdsFields() {
            if (field != null || allFields || tags) {
                return true;
            }
            for (Node c : children) {
                if (c.holdsFields()) {
                    return true;
                }
            }
            return false;
        }

        /** The same shape under another name. */
        public Node copyAs(String newName) {
            Node n = new Node(newName);
            n.field = field;
            n.context = context;
            n.copied = copied;
            n.allFields = allFields;
            n.tags = tags;
            for (Node c : children) {
                n.addChild(c.copyAs(c.name));
            }
            return n;
        }
    }

    public final CollectionPolicy policy;
    public final Node root;

    private ReadShape(CollectionPolicy policy, Node root) {
        this.policy = policy;
        this.root = root;
    }

    /** The collection's documents as stored: its policy fields. */
    static ReadShape of(CollectionPolicy p) {
        Node root = new Node("");
        root.allFields = p.allFields();
        for (var rule : p.fields().values()) {
            Node n = PathNode.grow(root, rule.path(), Node::new);
            n.field = rule.path();
            n.context = Envelope.context(p.namespace(), rule.path());
        }
        if (!p.searchIndexed().isEmpty()) {
            Node t = new Node(dev.fleproxy.rewrite.search.SearchTags.FIELD);
            t.tags = true;
            root.addChild(t);
        }
        return new ReadShape(p, root);
    }

    /** Documents with nothing to open (a stage replaced them). */
    public static ReadShape none(CollectionPolicy policy) {
        return new ReadShape(policy, new Node(""));
    }

    public ReadShape copy() {
        return new ReadShape(policy, root.copyAs(""));
    }

    /** The field of this name at a fields: "*" level, as a node of its own. */
    Node topLevelField(String name) {
        Node n = new Node(name);
        n.field = name;
        n.context = Envelope.context(policy.namespace(), name);
        return n;
    }

    /**
     * The node a dotted path reaches (array indexes passed over), or null if nothing to open lies
     * at or under it. Inside a field's envelope there is nothing to reach either: null.
     */
    public Node at(String path) {
        Node n = root;
        if (path.isEmpty()) {
            return n;
        }
        for (String seg : path.split("\\.", -1)) {
            if (PathSegments.transparent(seg)) {
                continue;
            }
            if (n.isField()) {
                return null;
            }
            Node next = n.child(seg);
            if (next == null && n.allFields && !seg.equals("_id")) {
                next = topLevelField(seg);
            }
            if (next == null) {
                return null;
            }
            n = next;
        }
        return n.holdsFields() ? n : null;
    }

    /** Where a path stands: at a field (EXACT), inside one, above some (PREFIX), or away from them all. */
    public PathKind kind(String path) {
        Node n = root;
        String[] segs = path.isEmpty() ? new String[0] : path.split("\\.", -1);
        for (String seg : segs) {
            if (n.isField()) {
                return PathKind.INSIDE;
            }
            if (PathSegments.transparent(seg)) {
                continue;
            }
            Node next = n.child(seg);
            if (next == null && n.allFields && !seg.equals("_id")) {
                next = topLevelField(seg);
            }
            if (next == null) {
                return PathKind.NONE;
            }
            n = next;
        }
        if (n.isField()) {
            return PathKind.EXACT;
        }
        return n.holdsFields() ? PathKind.PREFIX : PathKind.NONE;
    }

    /** The path now holds a copy of what the source node described (null: nothing to open). */
    public void assign(String path, Node source) {
        String[] segs = PathSegments.normalize(path).split("\\.", -1);
        Node n = root;
        for (int i = 0; i < segs.length - 1; i++) {
            Node next = n.child(segs[i]);
            if (next == null || next.isField()) {
                // a new sub-document (it replaces a field value, if one was there)
                next = new Node(segs[i]);
                n.replaceChild(next);
            }
            n = next;
        }
        Node leaf = source == null ? new Node(segs[segs.length - 1]) : source.copyAs(segs[segs.length - 1]);
        n.replaceChild(leaf);
    }

    /** As {@link #assign}, for a value copied by an accumulator or a group key: arrays of it and null may appear. */
    public void assignCopy(String path, Node source) {
        assign(path, source);
        if (source != null && source.isField()) {
            Node n = root;
            for (String seg : PathSegments.normalize(path).split("\\.", -1)) {
                n = n.child(seg);
            }
            n.copied = true;
        }
    }

    /** What the values of a distinct hold, as the node each value stands at. */
    public Node distinctValues(String key) {
        Node n = at(key);
        if (n == null) {
            return null;
        }
        Node v = n.copyAs("values");
        v.copied = true;
        return v;
    }
}
