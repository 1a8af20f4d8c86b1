package dev.fleproxy.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.testing.Eventually;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The cache's timing rules with a scripted key source and a hand-moved clock (the real-KMS
 * behaviour is in KeyResolverKmsTest).
 */
class KeyResolverCacheTest {
    static final UUID ID = UUID.fromString("89d6d529-a2fe-31dd-ae60-3cb35458dcc0");
    static final KeyResolver.Settings SETTINGS = new KeyResolver.Settings(Duration.ofSeconds(100),
            Duration.ofSeconds(50), Duration.ofSeconds(10), Duration.ofSeconds(5), 2);

    /** A clock the test moves by hand. */
    static final class TestClock extends Clock {
        Instant now = Instant.parse("2026-11-22T00:00:00Z");

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }

        void advance(long seconds) {
            now = now.plusSeconds(seconds);
        }
    }

    /** A KMS stand-in: answers with a key in a given state, or is down. */
    static class Source implements KeySource {
        final TestClock clock;
        final AtomicInteger calls = new AtomicInteger();
        volatile KeyState state = KeyState.ACTIVE;
        volatile boolean down;
        volatile boolean unknown;

        Source(TestClock clock) {
            this.clock = clock;
        }

        @Override
        public ResolvedKey fetch(UUID id) {
            calls.incrementAndGet();
            if (down) {
                throw new KeyAccessException(id, KeyAccessException.Reason.KMS_UNAVAILABLE, "KMS test:1 unreachable");
            }
            if (unknown) {
                throw new KeyAccessException(id, KeyAccessException.Reason.UNKNOWN_KEY, "no key named " + id);
            }
            return new ResolvedKey(new DataKey(id, CipherAlgorithm.AES, new byte[32]), state, "1", clock.instant());
        }

        @Override
        public String describe() {
            return "KMS test:1";
        }
    }

    @Test
    void servesFromTheCacheWithinTheTtl() {
        TestClock clock = new TestClock();
        Source src = new Source(clock);
        try (KeyResolver r = new KeyResolver(src, SETTINGS, clock)) {
            DataKey k = r.forEncryption(ID);
            for (int i = 0; i < 1000; i++) {
                assertSame(k, r.forEncryption(ID));
            }
            assertEquals(1, src.calls.get());
            assertEquals(1, r.kmsFetches());
            clock.advance(101);
            r.forEncryption(ID);
            assertEquals(2, src.calls.get(), "fetched again after the TTL");
        }
    }

    @Test
    void refreshesAheadOfExpiryInTheBackground() throws InterruptedException {
        TestClock clock = new TestClock();
        Source src = new Source(clock);
        try (KeyResolver r = new KeyResolver(src, SETTINGS, clock)) {
            r.forEncryption(ID);
            clock.advance(80); // past 3/4 of the TTL
            src.state = KeyState.DEACTIVATED;
            r.forEncryption(ID); // served from cache, triggers the refresh
            // the refresh's answer lands in memory some time after the source was asked
            Eventually.await(() -> r.cached(ID).state() == KeyState.DEACTIVATED, "the refreshed state in memory");
            assertEquals(2, src.calls.get());
            KeyAccessException e = assertThrows(KeyAccessException.class, () -> r.forEncryption(ID));
            assertEquals(KeyAccessException.Reason.WRONG_STATE, e.reason());
            r.forDecryption(ID);
        }
    }

    /** Waits (real time) for the background refresh to have asked the source n times in all. */
    private static void awaitCalls(Source src, int n) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (src.calls.get() < n && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        Thread.sleep(50);
        assertEquals(n, src.calls.get(), "source calls");
    }

    @Test
    void anOutageIsBridgedForTheWindowThenFailsClosedThenRecovers() throws InterruptedException {
        TestClock clock = new TestClock();
        Source src = new Source(clock);
        try (KeyResolver r = new KeyResolver(src, SETTINGS, clock)) {
            r.forEncryption(ID);
            src.down = true;
            clock.advance(80); // past 3/4 of the TTL: the background refresh asks, and fails
            assertSame(KeyState.ACTIVE, r.cached(ID).state(), "still fresh");
            awaitCalls(src, 2);
            clock.advance(40); // 120 s old: past the TTL, inside TTL + outage window (150)
            for (int i = 0; i < 100; i++) {
                assertSame(KeyState.ACTIVE, r.cached(ID).state(), "served from memory during the outage");
            }
            assertEquals(100, r.staleServes());
            Thread.sleep(300);
            assertEquals(2, src.calls.get(), "no KMS attempt per request, nor before the retry interval");
            clock.advance(6);
            awaitCalls(src, 3); // one new attempt after the retry interval

            clock.advance(30); // 156 s old: past the window
            assertEquals(null, r.cached(ID), "past the window the copy in memory is not served");
            KeyAccessException e = assertThrows(KeyAccessException.class, () -> r.forEncryption(ID));
            assertEquals(KeyAccessException.Reason.KMS_UNAVAILABLE, e.reason());
            assertTrue(e.getMessage().contains("past its TTL and the 50 s outage window"), e.getMessage());
            assertThrows(KeyAccessException.class, () -> r.forDecryption(ID), "decryption fails closed too");
            assertThrows(KeyAccessException.class, () -> r.cached(ID), "and the failure is remembered");

            src.down = false;
            clock.advance(11); // past the negative cache
            r.forEncryption(ID);
        }
    }

    @Test
    void theDataPathNeverWaitsForTheKms() throws Exception {
        TestClock clock = new TestClock();
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        Source hanging = new Source(clock) {
            @Override
            public ResolvedKey fetch(UUID id) {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return super.fetch(id);
            }
        };
        try (KeyResolver r = new KeyResolver(hanging, SETTINGS, clock)) {
            long t0 = System.nanoTime();
            assertEquals(null, r.cached(ID), "not in memory: null at once, no fetch");
            java.util.concurrent.CompletableFuture<Void> f1 = r.fetch(java.util.List.of(ID));
            java.util.concurrent.CompletableFuture<Void> f2 = r.fetch(java.util.List.of(ID));
            assertEquals(null, r.cached(ID));
            assertTrue(System.nanoTime() - t0 < 1_000_000_000L, "nothing above waited for the hanging KMS");
            assertTrue(!f1.isDone() && !f2.isDone());
            release.countDown();
            f1.get(5, java.util.concurrent.TimeUnit.SECONDS);
            f2.get(5, java.util.concurrent.TimeUnit.SECONDS);
            assertEquals(1, hanging.calls.get(), "two askers, one fetch");
            assertSame(KeyState.ACTIVE, r.cached(ID).state());
        }
    }

    @Test
    void aRefreshThatHangsPastTheTtlLeavesTheKeyServedFromMemory() throws Exception {
        TestClock clock = new TestClock();
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean hang = new java.util.concurrent.atomic.AtomicBoolean();
        Source src = new Source(clock) {
            @Override
            public ResolvedKey fetch(UUID id) {
                if (hang.get()) {
                    calls.incrementAndGet();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    calls.decrementAndGet();
                }
                return super.fetch(id);
            }
        };
        try (KeyResolver r = new KeyResolver(src, SETTINGS, clock)) {
            r.forEncryption(ID);
            hang.set(true);
            clock.advance(80);
            r.cached(ID);
            awaitCalls(src, 2); // the refresh has started and hangs
            clock.advance(40); // past the TTL while it hangs
            assertSame(KeyState.ACTIVE, r.cached(ID).state(), "served from memory, not waited for");
            release.countDown();
            awaitCalls(src, 2);
        }
    }

    @Test
    void aKmsFailureForAKeyNeverHeldIsRememberedBriefly() {
        TestClock clock = new TestClock();
        Source src = new Source(clock);
        src.down = true;
        try (KeyResolver r = new KeyResolver(src, SETTINGS, clock)) {
            r.fetch(java.util.List.of(ID)).join();
            for (int i = 0; i < 50; i++) {
                KeyAccessException e = assertThrows(KeyAccessException.class, () -> r.cached(ID));
                assertEquals(KeyAccessException.Reason.KMS_UNAVAILABLE, e.reason());
            }
            assertEquals(1, src.calls.get(), "a key the KMS could not deliver is not asked for per request");
            src.down = false;
            clock.advance(11);
            assertEquals(null, r.cached(ID), "after the negative TTL it is fetched again");
            r.fetch(java.util.List.of(ID)).join();
            assertSame(KeyState.ACTIVE, r.cached(ID).state());
        }
    }

    @Test
    void aKeyNeverFetchedFailsAtOnceDuringAnOutage() {
        TestClock clock = new TestClock();
        Source src = new Source(clock);
        src.down = true;
        try (KeyResolver r = new KeyResolver(src, SETTINGS, clock)) {
            KeyAccessException e = assertThrows(KeyAccessException.class, () -> r.forDecryption(ID));
            assertTrue(e.getMessage().contains("has not been fetched before"), e.getMessage());
        }
    }

    @Test
    void definitiveAnswersAreRememberedBriefly() {
        TestClock clock = new TestClock();
        Source src = new Source(clock);
        src.unknown = true;
        try (KeyResolver r = new KeyResolver(src, SETTINGS, clock)) {
            for (int i = 0; i < 50; i++) {
                assertEquals(KeyAccessException.Reason.UNKNOWN_KEY,
                        assertThrows(KeyAccessException.class, () -> r.forEncryption(ID)).reason());
            }
            assertEquals(1, src.calls.get(), "an unknown UUID does not make every request a KMS round trip");
            src.unknown = false;
            clock.advance(11);
            r.forEncryption(ID);
        }
    }

    @Test
    void stateRules() {
        TestClock clock = new TestClock();
        Source src = new Source(clock);
        for (KeyState s : KeyState.values()) {
            src.state = s;
            try (KeyResolver r = new KeyResolver(src, SETTINGS, clock)) {
                boolean enc = s == KeyState.ACTIVE;
                boolean dec = s == KeyState.ACTIVE || s == KeyState.DEACTIVATED;
                if (enc) {
                    r.forEncryption(ID);
                } else {
                    KeyAccessException e = assertThrows(KeyAccessException.class, () -> r.forEncryption(ID));
                    assertTrue(e.getMessage().contains("is " + s + "; only Active keys encrypt"), e.getMessage());
                }
                if (dec) {
                    r.forDecryption(ID);
                } else {
                    assertEquals(KeyAccessException.Reason.WRONG_STATE,
                            assertThrows(KeyAccessException.class, () -> r.forDecryption(ID)).reason());
                }
            }
        }
    }
}
