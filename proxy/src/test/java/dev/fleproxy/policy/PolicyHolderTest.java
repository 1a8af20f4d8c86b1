package dev.fleproxy.policy;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.KeySource;
import dev.fleproxy.keys.KeyState;
import dev.fleproxy.keys.ResolvedKey;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reloading the policy file, with keys from memory (the end-to-end reload test uses the real KMS). */
class PolicyHolderTest {
    private static final String KEY = "89d6d529-a2fe-31dd-ae60-3cb35458dcc0";

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
        return "listen: 127.0.0.1:1\nupstream: 127.0.0.1:2\nkmip:\n  host: k\n  ca: c\n  clientPkcs12: p\n"
                + "collections:\n  hr.people: { key: " + KEY + ", fields: " + fields + " }\n";
    }

    @Test
    void aReloadWithAnAllDigitPathSegmentKeepsThePreviousPolicy(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("proxy.yaml");
        Files.writeString(file, config("[ssn]"));
        try (KeyResolver keys = memoryKeys();
             PolicyHolder holder = new PolicyHolder(file, ProxyConfig.load(file),
                     PolicyParser.parse(ProxyConfig.load(file).policySection()), keys)) {
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
}
