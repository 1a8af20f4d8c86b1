package dev.fleproxy.rewrite.paths;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * One segment of a tree of field paths, found by name as a String (paths in commands) or as
 * bytes in place (names in BSON being walked): the shared part of {@link EncryptedPaths.Node}
 * and {@link ReadShape.Node}.
 */
abstract class PathNode<N extends PathNode<N>> {
    final String name;
    final byte[] nameBytes;
    final List<N> children = new ArrayList<>(2);

    PathNode(String name) {
        this.name = name;
        this.nameBytes = name.getBytes(StandardCharsets.UTF_8);
    }

    /** The node a policy path reaches from root, with the nodes on the way made where missing. */
    static <N extends PathNode<N>> N grow(N root, String path, Function<String, N> make) {
        N n = root;
        for (String segment : path.split("\\.")) {
            N next = n.child(segment);
            if (next == null) {
                next = make.apply(segment);
                n.children.add(next);
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
    public final N child(byte[] buf, int start, int end) {
        for (N c : children) {
            if (c.nameBytes.length == end - start
                    && java.util.Arrays.equals(c.nameBytes, 0, c.nameBytes.length, buf, start, end)) {
                return c;
            }
        }
        return null;
    }

    public final N child(String segment) {
        for (N c : children) {
            if (c.name.equals(segment)) {
                return c;
            }
        }
        return null;
    }
}
