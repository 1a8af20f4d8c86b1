package dev.fleproxy.cli;

import dev.fleproxy.crypto.CipherSuite;
import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.keys.ResolvedKey;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.FieldRule;
import dev.fleproxy.policy.Policy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * The effective policy, one row per collection: its key and the key's algorithm as the KMS
 * described it ({@code ?} where it was not asked), the suite it writes with (its own, or the
 * algorithm's default, chosen where the proxy chooses it: {@link CollectionKeys#suiteFor}), its
 * fields (deterministic ones marked), previous keys and plaintextReads.
 */
final class PolicyTable {
    private static final List<String> HEADER = List.of("namespace", "key", "algorithm", "suite", "fields",
            "previous keys", "plaintextReads");

    private PolicyTable() {
    }

    static List<String> lines(Policy policy, KmsCheck.Keys keys) {
        if (policy.isEmpty()) {
            return List.of("policy: no collections: every namespace is relayed as it is");
        }
        List<List<String>> rows = new ArrayList<>();
        rows.add(HEADER);
        for (CollectionPolicy cp : new TreeMap<>(policy.collections()).values()) { // the policy's map has no order
            rows.add(row(cp, keys));
        }
        int[] widths = new int[HEADER.size()];
        for (List<String> r : rows) {
            for (int i = 0; i < widths.length; i++) {
                widths[i] = Math.max(widths[i], r.get(i).length());
            }
        }
        List<String> out = new ArrayList<>();
        out.add(format(rows.get(0), widths));
        out.add(Arrays.stream(widths).mapToObj("-"::repeat).collect(Collectors.joining("-+-")));
        rows.subList(1, rows.size()).forEach(r -> out.add(format(r, widths)));
        if (out.stream().anyMatch(l -> l.contains(" (det)"))) {
            out.add("(det): deterministic encryption, equality queries allowed; other fields randomized");
        }
        return out;
    }

    private static List<String> row(CollectionPolicy cp, KmsCheck.Keys keys) {
        ResolvedKey k = keys.known().get(cp.keyId());
        String algorithm;
        String suite;
        if (k != null) {
            algorithm = k.key().algorithm() + "-" + k.key().bits()
                    + (k.state().mayEncrypt() ? "" : " (" + k.state() + ")");
            CipherSuite s = CollectionKeys.suiteFor(cp, k.key().algorithm());
            suite = s.name() + (cp.suite() == null ? " (default)" : "");
        } else {
            algorithm = keys.unknown().contains(cp.keyId()) ? "not in the KMS" : "?";
            suite = cp.suite() != null ? cp.suite().name() : "?";
        }
        String previous = cp.previousKeys().isEmpty() ? "-"
                : cp.previousKeys().stream().map(UUID::toString).collect(Collectors.joining(", "));
        return List.of(cp.namespace(), cp.keyId().toString(), algorithm, suite, fields(cp), previous,
                cp.plaintextReads() ? "allow" : "deny");
    }

    /** The policy's fields, sorted, deterministic ones marked "(det)"; "*" for every field. */
    private static String fields(CollectionPolicy cp) {
        if (cp.allFields()) {
            return "* (" + cp.describeFields() + ")";
        }
        return new TreeMap<>(cp.fields()).values().stream()
                .map((FieldRule f) -> f.path() + (f.deterministic() ? " (det)" : ""))
                .collect(Collectors.joining(", "));
    }

    private static String format(List<String> cells, int[] widths) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            b.append(i == 0 ? "" : " | ").append(cells.get(i)).append(" ".repeat(widths[i] - cells.get(i).length()));
        }
        return b.toString().stripTrailing();
    }
}
