package dev.fleproxy.config;

/**
 * The {@code collections:}, {@code identities:} and {@code envelopeSubtype:} sections as the YAML loader read them,
 * with the file they came from. {@code policy.PolicyParser} turns them into a policy; keeping them
 * raw here lets the policy package depend on config and not the other way round.
 */
public record PolicySection(Object collections, Object envelopeSubtype, Object identities, String source) {
    public static final PolicySection NONE = new PolicySection(null, null, null, "(none)");

    public PolicySection(Object collections, Object envelopeSubtype, String source) {
        this(collections, envelopeSubtype, null, source);
    }

    /** True if the file names at least one collection. */
    public boolean present() {
        return collections instanceof java.util.Map<?, ?> m ? !m.isEmpty() : collections != null;
    }
}
