package dev.fleproxy.rewrite.read;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BsonBinary;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.RawBsonDocument;
import org.bson.codecs.BsonDocumentCodec;
import org.junit.jupiter.api.Test;

/** The proxy's own cursors over answers it evaluated: batches, bounds, binding, idle time. */
class HeldCursorsTest {
    private static final String NS = "app.people";
    private static final BsonDocument LSID = new BsonDocument("id", new BsonBinary(new byte[16]));
    private final AtomicLong now = new AtomicLong();
    private final EvaluationMemory memory = new EvaluationMemory(256L * 1024 * 1024);
    private final HeldCursors held = new HeldCursors(now::get, memory);

    private static ArrayDeque<RawBsonDocument> documents(int n, int padding) {
        ArrayDeque<RawBsonDocument> d = new ArrayDeque<>();
        for (int i = 0; i < n; i++) {
            d.add(new RawBsonDocument(new BsonDocument("i", new BsonInt32(i))
                    .append("pad", new BsonString("x".repeat(padding))), new BsonDocumentCodec()));
        }
        return d;
    }

    @Test
    void aHeldAnswerIsReadInBatchesInOrderAndThenClosed() {
        long id = held.hold(NS, LSID, "app", 1, documents(5, 0));
        assertTrue(id > 0);
        HeldCursors.Batch b1 = held.next(id, NS, LSID, "app", 2, Integer.MAX_VALUE);
        assertEquals(List.of(0, 1), b1.documents().stream().map(d -> d.getInt32("i").getValue()).toList());
        assertEquals(id, b1.cursorId());
        HeldCursors.Batch b2 = held.next(id, NS, LSID, "app", 0, Integer.MAX_VALUE); // 0: as many as fit
        assertEquals(3, b2.documents().size());
        assertEquals(0, b2.cursorId());
        assertFalse(held.holds(id));
        assertEquals(0, held.bytes());
    }

    @Test
    void aBatchStopsAtItsBytesButHoldsOneDocumentAtLeast() {
        ArrayDeque<RawBsonDocument> d = documents(3, 1000);
        int one = d.peekFirst().getByteBuffer().remaining();
        assertEquals(2, HeldCursors.take(d, 0, 2 * one + 1).size());
        assertEquals(1, HeldCursors.take(d, 0, 10).size());
    }

    @Test
    void anotherSessionIdentityOrCollectionDoesNotReadIt() {
        long id = held.hold(NS, LSID, "app", 1, documents(3, 0));
        BsonDocument other = new BsonDocument("id", new BsonBinary(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
                13, 14, 15, 16}));
        assertNull(held.next(id, NS, other, "app", 1, Integer.MAX_VALUE));
        assertNull(held.next(id, NS, null, "app", 1, Integer.MAX_VALUE));
        assertNull(held.next(id, "app.other", LSID, "app", 1, Integer.MAX_VALUE));
        assertNull(held.next(id, NS, LSID, "support", 1, Integer.MAX_VALUE), "another identity: its masks differ");
        assertFalse(held.kill(id, "app.other", LSID, "app"));
        assertFalse(held.kill(id, NS, other, "app"), "another session does not kill it");
        assertFalse(held.kill(id, NS, LSID, "support"), "nor another identity");
        assertEquals(1, held.next(id, NS, LSID, "app", 1, Integer.MAX_VALUE).documents().size());
    }

    @Test
    void killCursorsAndIdleTimeForgetIt() {
        long killed = held.hold(NS, null, null, 1, documents(3, 0));
        long idle = held.hold(NS, null, null, 1, documents(3, 0));
        assertTrue(held.kill(killed, NS, null, null));
        assertFalse(held.holds(killed));
        now.addAndGet(HeldCursors.IDLE.toNanos() + 1);
        assertNull(held.next(idle, NS, null, null, 1, Integer.MAX_VALUE));
        assertEquals(0, held.count());
        assertEquals(0, held.bytes());
    }

    @Test
    void idsAreDistinctAndPositive() {
        long a = held.hold(NS, null, null, 1, documents(1, 0));
        long b = held.hold(NS, null, null, 1, documents(1, 0));
        assertNotEquals(a, b);
        assertTrue(a > 0 && b > 0);
    }

    @Test
    void pastItsCursorCountTheProxyRefusesToHoldMore() {
        // spread over identities and connections, so that only the proxy-wide count binds
        for (int i = 0; i < HeldCursors.MAX_CURSORS; i++) {
            held.hold(NS, null, "id" + i % 8, i, documents(1, 0));
        }
        Refusal r = assertThrows(Refusal.class, () -> held.hold(NS, null, "other", -1, documents(1, 0)));
        assertEquals(ProxyError.EVALUATED_RESULT_TOO_LARGE, r.error());
        now.addAndGet(HeldCursors.IDLE.toNanos() + 1); // the idle ones make room again
        assertTrue(held.hold(NS, null, "other", -1, documents(1, 0)) > 0);
    }

    @Test
    void oneConnectionOrIdentityCannotTakeEveryCursor() {
        for (int i = 0; i < HeldCursors.MAX_PER_CONNECTION; i++) {
            held.hold(NS, null, "anonymous", 7, documents(1, 0));
        }
        Refusal r = assertThrows(Refusal.class, () -> held.hold(NS, null, "anonymous", 7, documents(1, 0)));
        assertTrue(r.getMessage().contains("this connection or identity"), r.getMessage());
        for (int c = 8; held.count("anonymous") < HeldCursors.MAX_PER_IDENTITY; c++) {
            held.hold(NS, null, "anonymous", c, documents(1, 0));
        }
        assertThrows(Refusal.class, () -> held.hold(NS, null, "anonymous", 1_000, documents(1, 0)));
        assertTrue(held.hold(NS, LSID, "payments", 1_000, documents(1, 0)) > 0, "another identity is still served");
    }

    @Test
    void theCursorsOfAConnectionOutsideASessionGoWithIt() {
        long alone = held.hold(NS, null, "app", 3, documents(2, 0));
        long inSession = held.hold(NS, LSID, "app", 3, documents(2, 0));
        long other = held.hold(NS, null, "app", 4, documents(2, 0));
        held.connectionClosed(3);
        assertFalse(held.holds(alone));
        assertTrue(held.holds(inSession), "a session's cursor may be continued on another connection");
        assertTrue(held.holds(other));
        assertEquals(2, held.count("app"));
    }

    @Test
    void pastItsBytesTheProxyRefusesToHoldMore() {
        int docs = (int) (memory.budget() / (1024 * 1024 + 30)) + 1;
        ArrayDeque<RawBsonDocument> big = new ArrayDeque<>();
        RawBsonDocument mib = documents(1, 1024 * 1024).peekFirst();
        for (int i = 0; i < docs; i++) {
            big.add(mib); // the same bytes, counted as many times as they are held
        }
        Refusal r = assertThrows(Refusal.class, () -> held.hold(NS, null, null, 1, big));
        assertTrue(r.getMessage().contains("256 MiB"), r.getMessage());
        assertEquals(0, held.count());
        assertEquals(0, memory.used(), "nothing of a refused answer is charged");
    }

    @Test
    void theBytesHeldAreChargedToTheProxyWideBudgetAndGivenBackAsTheyAreRead() {
        long id = held.hold(NS, null, null, 1, documents(3, 1000));
        long charged = memory.used();
        assertTrue(charged > 3000, "charged " + charged);
        held.next(id, NS, null, null, 1, 1 << 20);
        assertTrue(memory.used() < charged && memory.used() > 0);
        held.kill(id, NS, null, null);
        assertEquals(0, memory.used());
    }
}
