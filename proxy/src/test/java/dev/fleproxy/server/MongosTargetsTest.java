package dev.fleproxy.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.config.HostPort;
import java.util.List;
import org.junit.jupiter.api.Test;

/** New sessions take the mongos in turn; one whose connection failed lately comes last. */
class MongosTargetsTest {
    private static final HostPort A = new HostPort("a", 1);
    private static final HostPort B = new HostPort("b", 2);
    private static final HostPort C = new HostPort("c", 3);

    @Test
    void inTurnAndAFailedOneLast() {
        MongosTargets t = new MongosTargets(List.of(A, B, C));
        long now = System.nanoTime();
        assertEquals(List.of(A, B, C), t.order(now));
        assertEquals(List.of(B, C, A), t.order(now));
        t.failed(B, "upstream b:2 is unreachable: refused");
        assertEquals(List.of(C, A, B), t.order(now));
        assertEquals(List.of(A, C, B), t.order(now));
        assertTrue(t.describe().get(1).startsWith("b:2: a connection failed"), t.describe().toString());
        // long after, or once a session is bound to it again, it takes its turn
        assertEquals(List.of(B, C, A), t.order(now + java.util.concurrent.TimeUnit.SECONDS.toNanos(
                MongosTargets.SKIP_SECONDS + 1)));
        t.bound(B, null);
        assertEquals(List.of(C, A, B), t.order(now));
        assertEquals("b:2: in turn", t.describe().get(1));
    }

    @Test
    void oneServerIsAlwaysIt() {
        MongosTargets t = new MongosTargets(List.of(A));
        t.failed(A, "upstream a:1 is unreachable: refused");
        assertEquals(List.of(A), t.order(System.nanoTime()));
    }
}
