package dev.fleproxy.crypto;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/** Every value counted; the time estimated from a random one value in TIME_EVERY. */
class CryptoStatsTest {
    private static final byte[] CONTEXT = Envelope.context("hr.people", "ssn");

    @Test
    void everyValueIsCountedAndTheTimedOnesStandForTheRest() throws Exception {
        CryptoStats.enable(); // process-wide; other tests only see their values counted
        FieldCipher fc = FieldCipher.create(FieldCipherTest.key(CipherAlgorithm.AES, 32), CipherSuite.AES_GCM, false);
        int values = 50 * CryptoStats.TIME_EVERY; // none timed among them: odds (7/8)^400, about 1e-23
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
            long sealed = CryptoStats.sealed(CipherSuite.AES_GCM);
            long opened = CryptoStats.opened(CipherSuite.AES_GCM);
            long sealNanos = CryptoStats.sealNanos(CipherSuite.AES_GCM);
            long openNanos = CryptoStats.openNanos(CipherSuite.AES_GCM);
            thread.submit(() -> {
                for (int i = 0; i < values; i++) {
                    fc.decrypt(fc.encrypt((byte) 2, new byte[] {1, 2, 3}, CONTEXT), CONTEXT);
                }
            }).get();
            assertTrue(CryptoStats.sealed(CipherSuite.AES_GCM) - sealed >= values);
            assertTrue(CryptoStats.opened(CipherSuite.AES_GCM) - opened >= values);
            assertTrue(CryptoStats.sealNanos(CipherSuite.AES_GCM) > sealNanos);
            assertTrue(CryptoStats.openNanos(CipherSuite.AES_GCM) > openNanos);
        } finally {
            thread.shutdown();
        }
    }

    @Test
    void aboutOneValueInTimeEveryIsTimed() {
        int draws = 80_000;
        int timed = 0;
        for (int i = 0; i < draws; i++) {
            timed += CryptoStats.timeNext() ? 1 : 0;
        }
        // binomial(80,000, 1/8): mean 10,000, standard deviation 94; six of them either side
        assertTrue(Math.abs(timed - draws / CryptoStats.TIME_EVERY) < 560, timed + " of " + draws);
    }
}
