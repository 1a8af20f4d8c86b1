package dev.fleproxy.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.keys.KeyAccessException;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.KeySource;
import dev.fleproxy.keys.KeyState;
import dev.fleproxy.keys.PolicyKeyCheck;
import dev.fleproxy.keys.PolicyValidator;
import dev.fleproxy.keys.ResolvedKey;
import dev.fleproxy.testing.Eventually;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A reload is in force once the file is read, before the KMS is asked anything: with the KMS hung,
 * a new collection is in the policy at once (so its writes wait for the key and are refused, never
 * forwarded in plaintext). What the KMS says later is logged; a key it refuses leaves the collection
 * in the policy, and the file that corrects a mistyped key applies without a restart.
 */
class ReloadBeforeKeyCheckTest {
    private static final UUID AES = UUID.fromString("89d6d529-a2fe-31dd-ae60-3cb35458dcc0");
    private static final UUID ARIA = UUID.fromString("da6fd698-4681-3bb5-88ad-d1d9d68b1df6");
    private static final UUID AES_2 = UUID.fromString("00000000-0000-0000-0000-0000000000a2");
    private static final UUID MISTYPED = UUID.fromString("00000000-0000-0000-0000-000000000404");

    @RegisterExtension
    final HolderLog log = new HolderLog();
    /** While closed, every fetch hangs (a KMS stopped with SIGSTOP), except of the key started with. */
    private final CountDownLatch kmsAnswers = new CountDownLatch(1);
    private volatile boolean hung;
    /** While set, every fetch fails as if the KMS were unreachable (except of the key started with). */
    private volatile boolean down;
    @TempDir
    Path dir;
    private Path file;

    @BeforeEach
    void configFile() {
        file = dir.resolve("proxy.yaml");
    }

    @AfterEach
    void kmsAnswersAgain() {
        kmsAnswers.countDown();
    }

    private List<String> lines(Level level) {
        return log.lines(level);
    }

    /** AES keys and one ARIA key, MISTYPED unknown; hangs while {@link #hung}. */
    private KeyResolver keys() {
        return new KeyResolver(new KeySource() {
            @Override
            public ResolvedKey fetch(UUID id) {
                if (hung && !id.equals(AES)) {
                    try {
                        kmsAnswers.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                if (down && !id.equals(AES)) {
                    throw new KeyAccessException(id, KeyAccessException.Reason.KMS_UNAVAILABLE, "connection refused");
                }
                if (id.equals(MISTYPED)) {
                    throw new KeyAccessException(id, KeyAccessException.Reason.UNKNOWN_KEY, "no key named " + id
                            + " in the test KMS");
                }
                CipherAlgorithm alg = id.equals(ARIA) ? CipherAlgorithm.ARIA : CipherAlgorithm.AES;
                return new ResolvedKey(new DataKey(id, alg, new byte[32]), KeyState.ACTIVE, "1", Instant.now());
            }

            @Override
            public String describe() {
                return "the test KMS";
            }
        }, new KeyResolver.Settings(Duration.ofMinutes(5), Duration.ofMinutes(15), Duration.ofMillis(200),
                Duration.ofMillis(100), 2));
    }

    private static String config(String collections) {
        return "listen: 127.0.0.1:1\nupstream: 127.0.0.1:2\nkmip:\n  host: k\n  ca: c\n  clientPkcs12: p\n"
                + "collections:\n  hr.people: { key: " + AES + ", fields: [ssn] }\n" + collections;
    }

    private static String pay(UUID key, String rest) {
        return "  hr.pay: { key: " + key + ", fields: [salary]" + rest + " }\n";
    }

    /** A holder started from a file with hr.people and these collections, keys checked first as at start. */
    private PolicyHolder started(KeyResolver keys, String collections) throws Exception {
        Files.writeString(file, config(collections));
        ProxyConfig c = ProxyConfig.load(file);
        Policy p = PolicyParser.parse(c.policySection());
        PolicyValidator.validate(p, keys, file.toString());
        return new PolicyHolder(file, c, p, PolicyKeyCheck.forReloads(keys, file.toString()));
    }

    /** Writes hr.people and these collections to the file, and reloads it. */
    private boolean reload(PolicyHolder holder, String collections) throws Exception {
        Files.writeString(file, config(collections));
        return holder.reload("test");
    }

    private static void awaitCheck(PolicyHolder holder) throws Exception {
        holder.keysChecked().get(10, TimeUnit.SECONDS);
    }

    @Test
    void aNewCollectionIsInForceWhileTheKmsHangsAndItsKeysAreCheckedOnceItAnswers() throws Exception {
        try (KeyResolver keys = keys(); PolicyHolder holder = started(keys, "")) {
            hung = true;
            long t0 = System.nanoTime();
            assertTrue(reload(holder, pay(AES_2, "")));
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(2), "no KMS round trip before it applies");
            assertNotNull(holder.get().get("hr.pay"), "in force while the KMS hangs");
            assertFalse(holder.keysChecked().isDone(), "its key is still being checked");
            assertNull(keys.cached(AES_2), "the data path finds no key, so its requests wait for one");

            kmsAnswers.countDown();
            awaitCheck(holder);
            assertNotNull(keys.cached(AES_2), "the check warmed the cache");
            assertEquals(List.of(), lines(Level.ERROR));
            assertTrue(lines(Level.INFO).stream().anyMatch(l -> l.equals("policy reload (test): keys checked with the test KMS")),
                    lines(Level.INFO).toString());
        }
    }

    @Test
    void anUnknownKeyLeavesTheCollectionProtectedAndTheCorrectedFileApplies() throws Exception {
        try (KeyResolver keys = keys(); PolicyHolder holder = started(keys, "")) {
            assertTrue(reload(holder, pay(MISTYPED, "")));
            awaitCheck(holder);
            assertEquals(MISTYPED, holder.get().get("hr.pay").keyId(), "stays in force: refused, not unencrypted");
            assertEquals(List.of("policy reload (test): " + file + ": collections.hr.pay: no key named " + MISTYPED
                    + " in the test KMS. The new policy stays in force: requests for hr.pay that need this key are "
                    + "refused with 9720020 until a corrected file is loaded (never forwarded in plaintext)"),
                    lines(Level.ERROR));

            // The KMS never had it, so no envelope can be under it: dropping it lowers nothing.
            assertTrue(reload(holder, pay(AES_2, "")), lines(Level.WARN).toString());
            assertEquals(AES_2, holder.get().get("hr.pay").keyId());
            // A key the KMS has is another matter: dropping it still takes a restart.
            assertFalse(reload(holder, pay(AES, "")));
            assertTrue(lines(Level.WARN).get(0).contains("would remove or lower: key " + AES_2 + " of hr.pay."),
                    lines(Level.WARN).toString());
        }
    }

    @Test
    void aCheckThatCouldNotReachTheKmsIsRetriedUntilItAnswers() throws Exception {
        try (KeyResolver keys = keys(); PolicyHolder holder = started(keys, "")) {
            down = true;
            assertTrue(reload(holder, pay(MISTYPED, "")));
            Eventually.await(() -> !lines(Level.WARN).isEmpty(), "the first check failed");
            Thread.sleep(1000); // several retries (every 100 ms) while the KMS is down
            assertFalse(holder.keysChecked().isDone());
            List<String> warned = lines(Level.WARN);
            assertEquals(1, warned.size(), "said once, not at every retry: " + warned);
            assertTrue(warned.get(0).startsWith(file + ": collections.hr.pay: key " + MISTYPED + " could not be checked: "
                    + "connection refused"), warned.get(0));
            assertEquals(List.of(), lines(Level.ERROR));

            down = false;
            awaitCheck(holder);
            List<String> errors = lines(Level.ERROR);
            assertEquals(1, errors.size(), errors.toString());
            assertTrue(errors.get(0).contains("no key named " + MISTYPED), errors.get(0));
        }
    }

    @Test
    void aKeyOfAnotherAlgorithmThanTheSuiteLeavesTheCollectionProtected() throws Exception {
        try (KeyResolver keys = keys(); PolicyHolder holder = started(keys, "")) {
            assertTrue(reload(holder, pay(ARIA, ", suite: AES_GCM")));
            awaitCheck(holder);
            assertNotNull(holder.get().get("hr.pay"));
            List<String> errors = lines(Level.ERROR);
            assertEquals(1, errors.size(), errors.toString());
            assertTrue(errors.get(0).startsWith("policy reload (test): " + file + ": collections.hr.pay: suite AES_GCM needs "
                    + "a AES key, but key " + ARIA + " is ARIA-256. The new policy stays in force"), errors.get(0));
            // fixed by naming the suite that fits the key: not a lowering
            assertTrue(reload(holder, pay(ARIA, ", suite: ARIA_GCM")));
        }
    }

    @Test
    void aFileThatLowersProtectionStillAddsItsNewCollections() throws Exception {
        try (KeyResolver keys = keys(); PolicyHolder holder = started(keys, pay(AES, ""))) {
            Policy before = holder.get();
            // hr.pay removed (lowering), hr.notes added
            Files.writeString(file, config("  hr.notes: { key: " + AES + ", fields: \"*\" }\n")
                    .replace("fields: [ssn]", "fields: [ssn, address]"));
            assertFalse(holder.reload("test"));
            Policy now = holder.get();
            assertEquals(before.get("hr.pay"), now.get("hr.pay"), "the lowering is not applied");
            assertEquals(before.get("hr.people"), now.get("hr.people"), "nor anything else of the file");
            assertTrue(now.get("hr.notes").allFields(), "but the new collection is protected at once");
            assertEquals(List.of("policy reload (test) not applied: " + file + " would remove or lower: collection hr.pay. "
                    + "The previous policy stays in force, with the file's new collection(s) [hr.notes] added to it "
                    + "(adding protection never waits); a restart applies the new file"), lines(Level.WARN));
        }
    }

    @Test
    void aCheckOvertakenByAnotherReloadIsDropped() throws Exception {
        try (KeyResolver keys = keys(); PolicyHolder holder = started(keys, "")) {
            hung = true;
            Files.writeString(file, config(pay(MISTYPED, "")));
            assertTrue(holder.reload("first"));
            var first = holder.keysChecked();
            String notes = "  hr.notes: { key: " + AES_2 + ", fields: \"*\" }\n";
            Files.writeString(file, config(pay(MISTYPED, "") + notes));
            assertTrue(holder.reload("second"), "applied although the first check still waits for the KMS");
            assertNotNull(holder.get().get("hr.notes"));
            kmsAnswers.countDown();
            first.get(10, TimeUnit.SECONDS);
            awaitCheck(holder);
            List<String> errors = lines(Level.ERROR);
            assertEquals(1, errors.size(), "said once, by the check of the policy in force: " + errors);
            assertTrue(errors.get(0).startsWith("policy reload (second): "), errors.get(0));
        }
    }
}
