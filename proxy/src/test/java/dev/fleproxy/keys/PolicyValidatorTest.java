package dev.fleproxy.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.Policy;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Previous keys and plaintextReads against keys from memory. */
class PolicyValidatorTest {
    static final UUID KEY = UUID.fromString("89d6d529-a2fe-31dd-ae60-3cb35458dcc0"); // PolicyParserTest.KEY
    static final UUID ARIA = UUID.fromString("00000000-0000-0000-0000-00000000a41a");
    static final UUID REVOKED = UUID.fromString("00000000-0000-0000-0000-00000000dead");
    static final UUID DESTROYED = UUID.fromString("00000000-0000-0000-0000-0000000000d5");
    static final UUID UNKNOWN = UUID.fromString("00000000-0000-0000-0000-000000000404");
    static final UUID UNREACHABLE = UUID.fromString("00000000-0000-0000-0000-000000000503");

    /** AES keys, Active unless the id says otherwise; one ARIA key; one unknown; one behind an outage. */
    static KeyResolver keys() {
        return new KeyResolver(new KeySource() {
            @Override
            public ResolvedKey fetch(UUID id) {
                if (id.equals(UNKNOWN)) {
                    throw new KeyAccessException(id, KeyAccessException.Reason.UNKNOWN_KEY, "no key named " + id);
                }
                if (id.equals(UNREACHABLE)) {
                    throw new KeyAccessException(id, KeyAccessException.Reason.KMS_UNAVAILABLE, "connection refused");
                }
                KeyState state = id.equals(REVOKED) ? KeyState.DEACTIVATED
                        : id.equals(DESTROYED) ? KeyState.COMPROMISED : KeyState.ACTIVE;
                CipherAlgorithm alg = id.equals(ARIA) ? CipherAlgorithm.ARIA : CipherAlgorithm.AES;
                return new ResolvedKey(new DataKey(id, alg, new byte[32]), state, "1", Instant.now());
            }

            @Override
            public String describe() {
                return "test keys";
            }
        }, KeyResolver.Settings.DEFAULT);
    }

    static Policy policy(List<UUID> previous, boolean plaintextReads) {
        return new Policy(Map.of("hr.people", new CollectionPolicy("hr.people", KEY, previous, null, true, Map.of(),
                (byte) 6, plaintextReads)));
    }

    @Test
    void previousKeysOfAnyAlgorithmThatMayDecryptPassQuietly() {
        try (KeyResolver k = keys()) {
            assertEquals(List.of(), PolicyValidator.validate(policy(List.of(ARIA, REVOKED), false), k, "p.yaml"));
            assertTrue(k.cached(ARIA) != null, "validating warms the cache with previous keys too");
        }
    }

    @Test
    void aPreviousKeyThatCannotDecryptWarns() {
        try (KeyResolver k = keys()) {
            List<String> w = PolicyValidator.validate(policy(List.of(DESTROYED), false), k, "p.yaml");
            assertEquals(List.of("p.yaml: collections.hr.people: previous key " + DESTROYED + " is Compromised, so "
                    + "envelopes under it in hr.people cannot be read"), w);
        }
    }

    @Test
    void anUnknownPreviousKeyIsAConfigErrorNamingPreviousKeys() {
        try (KeyResolver k = keys()) {
            String e = assertThrows(ConfigException.class,
                    () -> PolicyValidator.validate(policy(List.of(UNKNOWN), false), k, "p.yaml")).getMessage();
            assertTrue(e.startsWith("p.yaml: collections.hr.people.previousKeys: no key named " + UNKNOWN), e);
        }
    }

    @Test
    void anUnreachablePreviousKeyWarns() {
        try (KeyResolver k = keys()) {
            List<String> w = PolicyValidator.validate(policy(List.of(UNREACHABLE), false), k, "p.yaml");
            assertEquals(1, w.size(), w.toString());
            assertTrue(w.get(0).startsWith("p.yaml: collections.hr.people: previous key " + UNREACHABLE
                    + " could not be checked: connection refused"), w.get(0));
            assertTrue(w.get(0).endsWith("envelopes under it in hr.people cannot be read until the KMS answers"), w.get(0));
        }
    }

    @Test
    void plaintextReadsAllowWarnsEvenWhenTheKmsIsDown() {
        String expected = "p.yaml: collections.hr.people has plaintextReads: allow: values of its policy fields that "
                + "are not envelopes are returned as stored (meant only while data written before the policy is migrated)";
        try (KeyResolver k = keys()) {
            assertEquals(List.of(expected), PolicyValidator.validate(policy(List.of(), true), k, "p.yaml"));
        }
        Policy down = new Policy(Map.of("hr.people", new CollectionPolicy("hr.people", UNREACHABLE, List.of(), null,
                true, Map.of(), (byte) 6, true)));
        try (KeyResolver k = keys()) {
            List<String> w = PolicyValidator.validate(down, k, "p.yaml");
            assertEquals(2, w.size(), w.toString());
            assertEquals(expected, w.get(1));
        }
    }
}
