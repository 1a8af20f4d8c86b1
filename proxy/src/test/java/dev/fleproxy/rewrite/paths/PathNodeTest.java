package dev.fleproxy.rewrite.paths;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Children found by name, scanned while few and by hash past that, as bytes in place and as Strings. */
class PathNodeTest {
    private static ReadShape.Node lookUp(ReadShape.Node n, String name) {
        byte[] buf = ("xx" + name + "yy").getBytes(StandardCharsets.UTF_8);
        ReadShape.Node byBytes = n.child(buf, 2, buf.length - 2);
        assertSame(n.child(name), byBytes, name);
        return byBytes;
    }

    @Test
    void everyChildIsFoundAtEverySizeAndNothingElseIs() {
        ReadShape.Node root = new ReadShape.Node("");
        List<ReadShape.Node> added = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            String path = (i % 3 == 0 ? "a.b" + i : i % 3 == 1 ? "f" + i : "\u00e9t\u00e9" + i);
            added.add(PathNode.grow(root, path, ReadShape.Node::new));
            if (i == 7 || i == 8 || i == 9 || i == 64 || i == 2999) {
                for (int j = 0; j <= i; j++) {
                    String p = (j % 3 == 0 ? "a.b" + j : j % 3 == 1 ? "f" + j : "\u00e9t\u00e9" + j);
                    ReadShape.Node n = root;
                    for (String segment : p.split("\\.")) {
                        n = lookUp(n, segment);
                    }
                    assertSame(added.get(j), n, p);
                }
                assertNull(lookUp(root, "f" + (i + 1)));
                assertNull(lookUp(root, ""));
                assertNull(lookUp(root, "f1 "));
            }
        }
        assertEquals(1 + 2000, root.children.size()); // "a" and the f…, été… paths
    }

    @Test
    void aReplacedChildIsTheOneFoundOnEitherSideOfTheThreshold() {
        for (int size : new int[] {3, 8, 9, 40}) {
            ReadShape.Node root = new ReadShape.Node("");
            for (int i = 0; i < size; i++) {
                PathNode.grow(root, "f" + i, ReadShape.Node::new);
            }
            ReadShape.Node replacement = new ReadShape.Node("f1");
            root.replaceChild(replacement);
            assertSame(replacement, lookUp(root, "f1"));
            assertEquals(size, root.children.size());
            ReadShape.Node added = new ReadShape.Node("new");
            root.replaceChild(added);
            assertSame(added, lookUp(root, "new"));
            assertEquals(size + 1, root.children.size());
            for (int i = 0; i < size; i++) {
                assertEquals("f" + i, lookUp(root, "f" + i).name);
            }
        }
    }
}
