package dev.fleproxy.policy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The named identities of the {@code identities:} section, in the file's order. A connection is
 * the first identity every one of whose attributes its {@link PeerFacts} match, or {@link
 * #ANONYMOUS}: a certificate subject ({@link SubjectName}: compared as distinguished names, the
 * case of attribute types aside, values byte for byte unless the identity asks otherwise), a DNS
 * name or URI among its subject alternative names (a SPIFFE id, say; byte for byte), a MongoDB
 * user ("name@db") whose SCRAM conversation the server confirmed.
 */
public final class Identities {
    public static final String ANONYMOUS = "anonymous";
    public static final Identities NONE = new Identities(Map.of());

    /** One identity's attributes; null where it names none. An identity names at least one. */
    public record Identity(String name, SubjectName subject, String dns, String uri, String user) {
        boolean matches(PeerFacts f) {
            return (subject == null || f.subject() != null && subject.matches(f.subject()))
                    && (dns == null || f.dnsNames().contains(dns))
                    && (uri == null || f.uris().contains(uri))
                    && (user == null || user.equals(f.user()));
        }
    }

    private final Map<String, Identity> byName;

    public Identities(Map<String, Identity> byName) {
        this.byName = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(byName));
    }

    /** The identity of a connection with these facts: the first that matches, else anonymous. */
    public String of(PeerFacts facts) {
        for (Identity i : byName.values()) {
            if (i.matches(facts)) {
                return i.name();
            }
        }
        return ANONYMOUS;
    }

    /** True if rules may name this identity: one of the section's, or anonymous. */
    public boolean knows(String name) {
        return ANONYMOUS.equals(name) || byName.containsKey(name);
    }

    public Map<String, Identity> byName() {
        return byName;
    }

    /** Every name a rule may use, for messages. */
    public List<String> names() {
        List<String> out = new java.util.ArrayList<>(byName.keySet());
        out.add(ANONYMOUS);
        return out;
    }
}
