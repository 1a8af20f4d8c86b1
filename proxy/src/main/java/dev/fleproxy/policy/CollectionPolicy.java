package dev.fleproxy.policy;

import dev.fleproxy.crypto.CipherSuite;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * How one collection is encrypted: its key, the keys it was encrypted under before ({@code
 * previousKeys}: they may open its envelopes, never seal), the suite it names (null: its key's
 * algorithm's default, chosen in {@code keys.CollectionKeys#suiteFor}), the fields ({@code
 * allFields}: every top-level field but _id, randomized), the BSON binary subtype envelopes are stored as, and whether a
 * policy field may hold a value that is not an envelope ({@code plaintextReads}: only while data
 * written before the policy is being migrated; by default such a value fails the read), and how
 * many documents one request may have the proxy decrypt and examine for the conditions, sorts and
 * projections on encrypted fields that the server cannot evaluate ({@code maxScanDocuments}).
 */
public record CollectionPolicy(String namespace, UUID keyId, List<UUID> previousKeys, CipherSuite suite,
                               boolean allFields, Map<String, FieldRule> fields, byte subtype,
                               boolean plaintextReads, int maxScanDocuments) {

    /** The documents one request may have the proxy examine, unless the policy says otherwise. */
    public static final int DEFAULT_MAX_SCAN_DOCUMENTS = 10_000;

    public CollectionPolicy(String namespace, UUID keyId, List<UUID> previousKeys, CipherSuite suite,
                            boolean allFields, Map<String, FieldRule> fields, byte subtype, boolean plaintextReads) {
        this(namespace, keyId, previousKeys, suite, allFields, fields, subtype, plaintextReads, DEFAULT_MAX_SCAN_DOCUMENTS);
    }

    public CollectionPolicy {
        previousKeys = List.copyOf(previousKeys);
        fields = Map.copyOf(fields);
    }

    public String database() {
        return namespace.substring(0, namespace.indexOf('.'));
    }

    public String collection() {
        return namespace.substring(namespace.indexOf('.') + 1);
    }

    /** The keys whose envelopes this collection's fields may hold: its key, then its previous keys. */
    public Set<UUID> openingKeys() {
        Set<UUID> ids = new LinkedHashSet<>();
        ids.add(keyId);
        ids.addAll(previousKeys);
        return ids;
    }

    /** True if an envelope under this key may be opened in this collection's fields. */
    public boolean mayOpenWith(UUID id) {
        return keyId.equals(id) || previousKeys.contains(id);
    }

    /** The fields with a search index (range, prefix), by path (none under fields: "*"). */
    public java.util.List<FieldRule> searchIndexed() {
        return fields.values().stream().filter(FieldRule::indexed)
                .sorted(java.util.Comparator.comparing(FieldRule::path)).toList();
    }

    public String describeFields() {
        return allFields ? "every field but _id" : String.join(", ", fields.keySet());
    }
}
