package dev.fleproxy.rewrite.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.junit.jupiter.api.Test;

/** The server cursors the proxy remembers: bounded, forgotten when idle, owned (docs/access.md, "Cursors"). */
class OpenCursorsTest {
    private static final BsonDocument LSID = new BsonDocument("id", new BsonBinary(new byte[16]));
    private final AtomicLong now = new AtomicLong();
    private final OpenCursors<String> cursors = new OpenCursors<>(3, now::get);

    @Test
    void atMostMaxTheLeastRecentlyUsedForgotten() {
        for (long id = 1; id <= 3; id++) {
            cursors.opened(id, "a.b", new CursorOwner("app", null), "plan" + id);
        }
        assertNotNull(cursors.get(1)); // used: 2 is now the least recently used
        cursors.opened(4, "a.b", new CursorOwner("app", null), "plan4");
        assertEquals(3, cursors.count());
        assertNull(cursors.get(2));
        assertEquals("plan1", cursors.get(1).what());
    }

    @Test
    void idleCursorsAreForgottenAsTheServerTimesThemOut() {
        cursors.opened(1, "a.b", new CursorOwner("app", null), "old");
        now.addAndGet(OpenCursors.IDLE.toNanos() / 2);
        cursors.opened(2, "a.b", new CursorOwner("app", null), "newer");
        now.addAndGet(OpenCursors.IDLE.toNanos() / 2 + 1);
        assertNull(cursors.get(1));
        assertEquals("newer", cursors.get(2).what());
        cursors.closed(2);
        assertEquals(0, cursors.count());
    }

    @Test
    void onlyItsOwnerInItsSessionMayUseIt() {
        CursorOwner payments = new CursorOwner("payments", LSID);
        assertNull(payments.refuses(new CursorOwner("payments", LSID)));
        assertEquals("was not opened by this connection's identity", payments.refuses(new CursorOwner("support", LSID)));
        assertEquals("was opened in another session", payments.refuses(new CursorOwner("payments", null)));
        assertEquals("was opened outside a session", new CursorOwner("payments", null).refuses(payments));
    }
}
