package dev.fleproxy.policy;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.ConfigSchema;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The {@code identities:} section:
 *
 * <pre>
 * identities:
 *   payments: { subject: "CN=payments,O=Example" }          # a client certificate's subject
 *   support:  { uri: "spiffe://example.org/support" }        # or a SAN URI, a SAN DNS name (dns:)
 *   batch:    { user: "etl@admin" }                          # a MongoDB user confirmed by the server
 * </pre>
 */
final class IdentitiesParser {
    private static final Set<String> KEYS = ConfigSchema.keysOf("identities.*");

    private IdentitiesParser() {
    }

    static Identities parse(Object node, String source) {
        if (node == null) {
            return Identities.NONE;
        }
        if (!(node instanceof Map<?, ?> map)) {
            throw new ConfigException(source + ": identities must map names to what a connection must have verified");
        }
        Map<String, Identities.Identity> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : map.entrySet()) {
            String name = String.valueOf(e.getKey());
            String where = source + ": identities." + name;
            if (name.equals(Identities.ANONYMOUS) || !name.matches("[A-Za-z][A-Za-z0-9_.-]{0,63}")) {
                throw new ConfigException(where + ": an identity's name is a letter then letters, digits, '_', '.' "
                        + "or '-' (at most 64), and not 'anonymous' (the name of a connection matching none)");
            }
            if (!(e.getValue() instanceof Map<?, ?> m) || m.isEmpty()) {
                throw new ConfigException(where + " must name at least one of " + KEYS);
            }
            for (Object k : m.keySet()) {
                if (!KEYS.contains(String.valueOf(k))) {
                    throw new ConfigException(where + ": unknown key " + k + "; known keys are " + KEYS);
                }
            }
            out.put(name, new Identities.Identity(name, subject(m.get("subject"), m.get("subjectIgnoreCase"), where), text(m.get("dns"), where + ".dns"),
                    text(m.get("uri"), where + ".uri"), user(m.get("user"), where + ".user")));
        }
        return new Identities(out);
    }

    private static SubjectName subject(Object v, Object ignoreCase, String where) {
        if (ignoreCase != null && !(ignoreCase instanceof Boolean)) {
            throw new ConfigException(where + ".subjectIgnoreCase must be true or false");
        }
        if (v == null) {
            if (ignoreCase != null) {
                throw new ConfigException(where + ".subjectIgnoreCase is given without subject");
            }
            return null;
        }
        try {
            return SubjectName.parse(String.valueOf(v), Boolean.TRUE.equals(ignoreCase));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(where + ".subject is not a distinguished name (RFC 2253, e.g. \"CN=payments,O=Example\")");
        }
    }

    private static String text(Object v, String where) {
        if (v != null && (!(v instanceof String s) || s.isEmpty())) {
            throw new ConfigException(where + " must be a non-empty string");
        }
        return (String) v;
    }

    private static String user(Object v, String where) {
        String u = text(v, where);
        if (u != null && (u.indexOf('@') <= 0 || u.endsWith("@"))) {
            throw new ConfigException(where + " must be name@database (the database the user authenticates against)");
        }
        return u;
    }
}
