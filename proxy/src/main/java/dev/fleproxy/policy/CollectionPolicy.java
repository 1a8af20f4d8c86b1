package dev.fleproxy.policy;

import dev.fleproxy.crypto.CipherSuite;
import java.util.Map;
import java.util.UUID;

/**
 * How one collection is encrypted: its key, the suite (null until validated: then the given one or
 * the key algorithm's default), the fields ({@code allFields}: every top-level field but _id,
 * randomized), and the BSON binary subtype envelopes are stored as.
 */
public record CollectionPolicy(String namespace, UUID keyId, CipherSuite suite, boolean allFields,
                               Map<String, FieldRule> fields, byte subtype) {

    public CollectionPolicy {
        fields = Map.copyOf(fields);
    }

    public String database() {
        return namespace.substring(0, namespace.indexOf('.'));
    }

    public String collection() {
        return namespace.substring(namespace.indexOf('.') + 1);
    }

    public CollectionPolicy withSuite(CipherSuite s) {
        return new CollectionPolicy(namespace, keyId, s, allFields, fields, subtype);
    }

    public String describeFields() {
        return allFields ? "every field but _id" : String.join(", ", fields.keySet());
    }
}
