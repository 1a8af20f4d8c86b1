package dev.fleproxy.cli;

import dev.fleproxy.config.KmipConfig;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.KeyResolvers;
import dev.fleproxy.keys.PolicyValidator;
import dev.fleproxy.keys.ResolvedKey;
import dev.fleproxy.kmip.KmipClient;
import dev.fleproxy.kmip.KmipException;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.Policy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The KMS of {@code kmip:}: it answers, and every key of the policy (collections' {@code key} and
 * {@code previousKeys}) resolves, through the same client, resolver and checks as at the proxy's
 * start ({@link KeyResolvers}, {@link PolicyValidator}). A key the KMS could not be asked about is a
 * FAIL here (the proxy would start and refuse its requests). Key material is never printed: the
 * algorithm, length and state only.
 */
final class KmsCheck {
    /** A Locate for a name no key carries: one read-only round trip that proves the KMS answers. */
    private static final String PROBE = "fle-proxy check: reachability probe";

    /** What the KMS said about the policy's keys: those it delivered, those it does not have. */
    record Keys(Map<UUID, ResolvedKey> known, Set<UUID> unknown) {
        static final Keys NONE = new Keys(Map.of(), Set.of());
    }

    private final CheckReport report;

    KmsCheck(CheckReport report) {
        this.report = report;
    }

    /** Asks the KMS; {@link Keys#NONE} if there is none or it could not be asked. */
    Keys run(KmipConfig kmip, Policy policy, String source) {
        if (kmip == null) {
            report.ok("kms: none configured (no kmip: section, so no collections: policy)");
            return Keys.NONE;
        }
        try (KmipClient client = KeyResolvers.client(kmip); KeyResolver resolver = KeyResolvers.resolver(kmip, client)) {
            if (!reachable(client)) {
                return Keys.NONE;
            }
            return keys(policy, resolver, source);
        } catch (KmipException e) {
            report.fail("kms: not asked: " + e.getMessage()); // the client certificate did not load
            return Keys.NONE;
        }
    }

    private boolean reachable(KmipClient client) {
        long t0 = System.nanoTime();
        try {
            client.locateByName(PROBE, null);
        } catch (KmipException e) {
            if (e.resultStatus() == null) { // not an answer: no connection, no handshake, no reply
                String m = String.valueOf(e.getMessage());
                report.fail("kms: " + (m.contains(client.address()) ? m : client.address() + ": " + m));
                return false;
            }
            // an answer, even a refusal of the Locate, is a KMS that answers
        }
        report.ok("kms: " + client.address() + " answers over KMIP (mutual TLS, " + (System.nanoTime() - t0) / 1_000_000
                + " ms)");
        return true;
    }

    private Keys keys(Policy policy, KeyResolver resolver, String source) {
        PolicyValidator.Outcome o = PolicyValidator.check(policy, resolver, source);
        Map<UUID, ResolvedKey> known = new LinkedHashMap<>();
        for (UUID id : o.known()) {
            ResolvedKey k = resolver.cached(id); // fetched just now, well within its TTL
            if (k != null) {
                known.put(id, k);
                report.ok("key " + id + ": " + k.key().algorithm() + "-" + k.key().bits() + ", " + k.state() + " ("
                        + String.join("; ", uses(policy, id)) + ")");
            }
        }
        for (PolicyValidator.Problem p : o.problems()) {
            report.fail(p.message());
        }
        for (String w : o.warnings()) {
            if (o.unchecked().contains(w)) {
                report.fail(w); // the KMS did not answer for this key: nothing is known about it
            } else {
                report.warn(w);
            }
        }
        if (policy.isEmpty()) {
            report.ok("keys: the policy names none");
        }
        return new Keys(known, Set.copyOf(o.unknown()));
    }

    /** Where the policy uses a key: "key of hr.people", "previous key of hr.people". */
    private static List<String> uses(Policy policy, UUID id) {
        List<String> uses = new ArrayList<>();
        for (CollectionPolicy cp : policy.collections().values()) {
            if (cp.keyId().equals(id)) {
                uses.add("key of " + cp.namespace());
            }
            if (cp.previousKeys().contains(id)) {
                uses.add("previous key of " + cp.namespace());
            }
        }
        return uses;
    }
}
