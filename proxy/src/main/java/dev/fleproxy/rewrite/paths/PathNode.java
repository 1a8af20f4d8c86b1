package dev.fleproxy.rewrite.paths;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * One segment of a tree of field paths, found by name as a String (paths in commands) or as
 * bytes in place (names in BSON being walked): the shared part of {@link EncryptedPaths.Node}
 * and {@link ReadShape.Node}.
 */
abstract class PathNode<N extends PathNode<N>> {
    /** Up to this many children are scanned; past it they are found by hash. */
    private static final int SCANNED = 8;

    final String name;
    final byte[] nameBytes;
    private final int hash;
    /** Read only: add with {@link #addChild}, replace with {@link #replaceChild}. */
    final List<N> children = new ArrayList<>(2);
    /**
     * Past {@link #SCANNED} children: the children by name, and an open-addressing table of them
     * by the hash of their name's bytes (a policy listing thousands of paths would otherwise cost
     * a scan of them for every field of every document: issue 30 measured 2 ns per listed path per
     * field). Built while the tree is built, read only after.
     */
    private Map<String, N> byName;
    private Object[] byBytes;

    PathNode(String name) {
        this.name = name;
        this.nameBytes = name.getBytes(StandardCharsets.UTF_8);
        this.hash = hash(nameBytes, 0, nameBytes.length);
    }

    private static int hash(byte[] b, int start, int end) {
        int h = 1;
        for (int i = start; i < end; i++) {
            h = 31 * h + b[i];
        }
        return h ^ (h >>> 16);
    }

    /** Adds a child (whose name none of the others has). */
    final void addChild(N c) {
        children.add(c);
        if (byName != null) {
            byName.put(c.name, c);
            if (2 * children.size() > byBytes.length) {
                index();
            } else {
                place(byBytes, c);
            }
        } else if (children.size() > SCANNED) {
            index();
        }
    }

    /** Replaces the child of the same name, or adds it. */
    public final void replaceChild(N c) {
        if (children.removeIf(old -> old.name.equals(c.name))) {
            byName = null; // made again from what is left
            byBytes = null;
        }
        addChild(c);
    }

    private void index() {
        byName = new HashMap<>(2 * children.size());
        byBytes = new Object[Integer.highestOneBit(4 * children.size() - 1) << 1];
        for (N c : children) {
            byName.put(c.name, c);
            place(byBytes, c);
        }
    }

    private static void place(Object[] table, PathNode<?> c) {
        int mask = table.length - 1;
        int i = c.hash & mask;
        while (table[i] != null) {
            i = (i + 1) & mask;
        }
        table[i] = c;
    }

    /** The node a policy path reaches from root, with the nodes on the way made where missing. */
    static <N extends PathNode<N>> N grow(N root, String path, Function<String, N> make) {
        N n = root;
        for (String segment : path.split("\\.")) {
            N next = n.child(segment);
            if (next == null) {
                next = make.apply(segment);
                n.addChild(next);
            }
            n = next;
        }
        return n;
    }

    /** True if paths go on under this segment. */
    public final boolean hasChildren() {
        return !children.isEmpty();
    }

    /** The child named by buf[start, end), or null. */
    @SuppressWarnings("unchecked")
    public final N child(byte[] buf, int start, int end) {
        if (byBytes != null) {
            int mask = byBytes.length - 1;
            for (int i = hash(buf, start, end) & mask; byBytes[i] != null; i = (i + 1) & mask) {
                N c = (N) byBytes[i];
                if (c.nameBytes.length == end - start
                        && java.util.Arrays.equals(c.nameBytes, 0, c.nameBytes.length, buf, start, end)) {
                    return c;
                }
            }
            return null;
        }
        for (N c : children) {
            if (c.nameBytes.length == end - start
                    && java.util.Arrays.equals(c.nameBytes, 0, c.nameBytes.length, buf, start, end)) {
                return c;
            }
        }
        return null;
    }

    public final N child(String segment) {
        if (byName != null) {
            return byName.get(segment);
        }
        for (N c : children) {
            if (c.name.equals(segment)) {
                return c;
            }
        }
        return null;
    }
}
