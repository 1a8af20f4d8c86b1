package dev.fleproxy.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.KeySource;
import dev.fleproxy.keys.KeyState;
import dev.fleproxy.keys.PolicyKeyCheck;
import dev.fleproxy.keys.ResolvedKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Reloading the policy file, with keys from memory (the end-to-end reload test uses the real KMS). */
class PolicyHolderTest {
    private static final String KEY = "89d6d529-a2fe-31dd-ae60-3cb35458dcc0";
    private static final String NEW_KEY = "da6fd698-4681-3bb5-88ad-d1d9d68b1df6";
    private static final String PAY = "  hr.pay: { key: " + KEY + ", fields: \"*\" }\n";

    @RegisterExtension
    final HolderLog log = new HolderLog();
    @TempDir
    Path dir;

    private List<String> warnings() {
        return log.lines(Level.WARN);
    }

    private List<String> errors() {
        return log.lines(Level.ERROR);
    }

    private static KeyResolver memoryKeys() {
        return new KeyResolver(new KeySource() {
            @Override
            public ResolvedKey fetch(UUID id) {
                return new ResolvedKey(new DataKey(id, CipherAlgorithm.AES, new byte[32]), KeyState.ACTIVE, "1",
                        Instant.now());
            }

            @Override
            public String describe() {
                return "test keys";
            }
        }, KeyResolver.Settings.DEFAULT);
    }

    private static String config(String fields) {
        return withCollections("  hr.people: { key: " + KEY + ", fields: " + fields + " }\n");
    }

    private static String withCollections(String collections) {
        return "listen: 127.0.0.1:1\nupstream: 127.0.0.1:2\nkmip:\n  host: k\n  ca: c\n  clientPkcs12: p\n"
                + "collections:\n" + collections;
    }

    private static String people(String key, String rest) {
        return "  hr.people: { key: " + key + ", fields: [ssn]" + rest + " }\n";
    }

    /** A holder started from this file, as the runtime starts it. */
    private PolicyHolder started(Path file, KeyResolver keys) {
        ProxyConfig c = ProxyConfig.load(file);
        return new PolicyHolder(file, c, PolicyParser.parse(c.policySection()),
                keys != null ? PolicyKeyCheck.forReloads(keys, file.toString()) : null);
    }

    @Test
    void aReloadWithAnAllDigitPathSegmentKeepsThePreviousPolicy() throws Exception {
        Path file = dir.resolve("proxy.yaml");
        Files.writeString(file, config("[ssn]"));
        try (KeyResolver keys = memoryKeys(); PolicyHolder holder = started(file, keys)) {
            Policy before = holder.get();
            Files.writeString(file, config("[ssn, scores.2024]"));
            assertFalse(holder.reload("test"));
            assertSame(before, holder.get());
            assertTrue(holder.get().get("hr.people").fields().containsKey("ssn"));

            Files.writeString(file, config("[ssn, scores.y2024]"));
            assertTrue(holder.reload("test"));
            assertTrue(holder.get().get("hr.people").fields().containsKey("scores.y2024"));
        }
    }

    @Test
    void aReloadWithAKeyNamedTwiceKeepsThePreviousPolicy() throws Exception {
        Path file = dir.resolve("proxy.yaml");
        Files.writeString(file, withCollections(people(KEY, "")));
        try (KeyResolver keys = memoryKeys(); PolicyHolder holder = started(file, keys)) {
            Policy before = holder.get();
            // the second entry would have replaced the first, whose ssn would then go unencrypted
            Files.writeString(file, withCollections(people(KEY, "") + PAY + "  hr.people: { key: " + KEY
                    + ", fields: [name] }\n"));
            assertFalse(holder.reload("test"));
            assertSame(before, holder.get());
            assertEquals(List.of("policy reload (test) failed, keeping the previous policy: " + file + ": line 10: "
                    + "duplicate key 'hr.people' in the mapping that starts at line 8; YAML would keep only the last "
                    + "value, so the file is refused (name each key once)"), errors());
        }
    }

    @Test
    void aReloadThatRemovesACollectionIsNotAppliedAndSaysSoInOneWarning() throws Exception {
        Path file = dir.resolve("proxy.yaml");
        Files.writeString(file, withCollections(people(KEY, "") + PAY));
        try (KeyResolver keys = memoryKeys(); PolicyHolder holder = started(file, keys)) {
            Policy before = holder.get();
            Files.writeString(file, withCollections(people(KEY, "")));
            assertFalse(holder.reload("test"));
            assertSame(before, holder.get());
            assertEquals(List.of("policy reload (test) not applied: " + file + " would remove or lower: collection hr.pay. "
                    + "The previous policy stays in force; a restart applies the new file"), warnings());
        }
    }

    @Test
    void aReloadThatAddsACollectionIsApplied() throws Exception {
        Path file = dir.resolve("proxy.yaml");
        Files.writeString(file, withCollections(people(KEY, "")));
        try (KeyResolver keys = memoryKeys(); PolicyHolder holder = started(file, keys)) {
            Files.writeString(file, withCollections(people(KEY, "") + PAY));
            assertTrue(holder.reload("test"));
            assertTrue(holder.get().get("hr.pay").allFields());
            assertEquals(List.of(), warnings());
        }
    }

    @Test
    void rotatingTheKeyIntoPreviousKeysIsAppliedDroppingItIsNot() throws Exception {
        Path file = dir.resolve("proxy.yaml");
        Files.writeString(file, withCollections(people(KEY, "")));
        try (KeyResolver keys = memoryKeys(); PolicyHolder holder = started(file, keys)) {
            Files.writeString(file, withCollections(people(NEW_KEY, ", previousKeys: [" + KEY + "]")));
            assertTrue(holder.reload("test"));
            Policy rotated = holder.get();
            assertEquals(UUID.fromString(NEW_KEY), rotated.get("hr.people").keyId());
            assertEquals(List.of(UUID.fromString(KEY)), rotated.get("hr.people").previousKeys());

            Files.writeString(file, withCollections(people(NEW_KEY, "")));
            assertFalse(holder.reload("test"));
            assertSame(rotated, holder.get());
            List<String> w = warnings();
            assertEquals(1, w.size(), w.toString());
            assertTrue(w.get(0).contains("would remove or lower: key " + KEY + " of hr.people."), w.get(0));
        }
    }

    @Test
    void allowingPlaintextReadsTakesARestartAndIsWarnedAboutAtEveryReload() throws Exception {
        Path file = dir.resolve("proxy.yaml");
        Files.writeString(file, withCollections(people(KEY, "")));
        try (KeyResolver keys = memoryKeys(); PolicyHolder holder = started(file, keys)) {
            Files.writeString(file, withCollections(people(KEY, ", plaintextReads: allow")));
            assertFalse(holder.reload("test"));
            assertFalse(holder.get().get("hr.people").plaintextReads());
            assertEquals(1, warnings().size());
            assertTrue(warnings().get(0).contains("would remove or lower: plaintextReads: allow on hr.people."));
        }
        log.clear();
        // started with allow (a restart): each reload repeats the warning, and allow -> deny is applied
        try (KeyResolver keys = memoryKeys(); PolicyHolder holder = started(file, keys)) {
            Files.writeString(file, withCollections(people(KEY, ", plaintextReads: allow") + PAY));
            assertTrue(holder.reload("test"));
            holder.keysChecked().get(10, TimeUnit.SECONDS); // the validator's warnings come with the key check
            assertEquals(List.of(file + ": collections.hr.people has plaintextReads: allow: values of its policy fields "
                    + "that are not envelopes are returned as stored (meant only while data written before the policy "
                    + "is migrated)"), warnings());
            Files.writeString(file, withCollections(people(KEY, ", plaintextReads: deny") + PAY));
            assertTrue(holder.reload("test"));
            assertFalse(holder.get().get("hr.people").plaintextReads());
        }
    }
}
