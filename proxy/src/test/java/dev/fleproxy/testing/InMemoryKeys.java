package dev.fleproxy.testing;

import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.keys.KeyAccessException;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.KeySource;
import dev.fleproxy.keys.KeyState;
import dev.fleproxy.keys.ResolvedKey;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.policy.PolicyParser;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The policy and in-memory keys of the filter's unit and fuzz tests (the integration tests use the
 * real KMS): hr.people (ssn deterministic, address.street and items.price randomized, AES-256-GCM)
 * and hr.all (every field but _id, ARIA-256-GCM); hr.plain has no policy.
 */
public final class InMemoryKeys {
    public static final UUID AES_KEY = UUID.fromString("11111111-2222-3333-4444-555555555555");
    public static final UUID ARIA_KEY = UUID.fromString("66666666-7777-8888-9999-aaaaaaaaaaaa");

    private InMemoryKeys() {
    }

    public static Policy policy(String origin) {
        return PolicyParser.parse(Map.of(
                "hr.people", Map.of("key", AES_KEY.toString(), "fields", Map.of(
                        "ssn", Map.of("deterministic", true),
                        "address.street", Map.of(),
                        "items.price", Map.of())),
                "hr.all", Map.of("key", ARIA_KEY.toString(), "fields", "*")), 6, origin);
    }

    /**
     * A key resolver over the two keys (any other is unknown), recording each key asked for in
     * {@code fetched}; the caller prefetches them (from @BeforeAll, never a static initializer:
     * prefetch waits on the resolver's threads, which would wait for the class).
     */
    public static KeyResolver resolver(Set<UUID> fetched, KeyResolver.Settings settings) {
        return new KeyResolver(new KeySource() {
            @Override
            public ResolvedKey fetch(UUID id) {
                fetched.add(id);
                CipherAlgorithm alg = id.equals(AES_KEY) ? CipherAlgorithm.AES
                        : id.equals(ARIA_KEY) ? CipherAlgorithm.ARIA : null;
                if (alg == null) {
                    throw new KeyAccessException(id, KeyAccessException.Reason.UNKNOWN_KEY, "no such key");
                }
                byte[] material = new byte[32];
                Arrays.fill(material, (byte) (alg.ordinal() + 1));
                return new ResolvedKey(new DataKey(id, alg, material), KeyState.ACTIVE, "1", Instant.now());
            }

            @Override
            public String describe() {
                return "in-memory test keys";
            }
        }, settings);
    }
}
