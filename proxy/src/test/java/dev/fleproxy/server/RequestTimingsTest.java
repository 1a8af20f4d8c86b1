package dev.fleproxy.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class RequestTimingsTest {
    private static RequestTiming timing(int n) {
        return new RequestTiming(n, n + 1, "c" + n);
    }

    @Test
    void repliesInOrderTakeTheOldestWhileTheRingWrapsAndGrows() {
        RequestTimings t = new RequestTimings();
        int added = 0;
        int taken = 0;
        for (int round = 0; round < 20; round++) { // holds 3 more each round: wraps, then grows
            for (int i = 0; i < 5; i++, added++) {
                t.add(1000 + added, timing(added));
            }
            for (int i = 0; i < 2; i++, taken++) {
                assertEquals(taken, t.take(1000 + taken).readAtNanos());
            }
        }
        assertEquals(added - taken, t.size());
        while (taken < added) {
            assertEquals(taken, t.take(1000 + taken).readAtNanos());
            taken++;
        }
        assertEquals(0, t.size());
    }

    @Test
    void aReplyToAnyHeldRequestFindsItAndTheOthersStayInOrder() {
        RequestTimings t = new RequestTimings();
        for (int i = 0; i < 6; i++) {
            t.add(i, timing(i));
        }
        assertEquals(3.0, t.take(3).readAtNanos());
        assertNull(t.take(3), "taken once");
        assertNull(t.take(99), "a reply to no held request (an exhaust stream's later replies)");
        for (int i : new int[] {0, 1, 2, 4, 5}) {
            assertEquals(i, t.take(i).readAtNanos());
        }
        assertEquals(0, t.size());
    }
}
