package dev.fleproxy.policy;

import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/** The collections the proxy encrypts, by namespace ("db.collection"). Immutable; swapped whole on reload. */
public final class Policy {
    public static final Policy EMPTY = new Policy(Map.of());

    private final Map<String, CollectionPolicy> byNamespace;
    private final Identities identities;
    /** True if some field has reveal, query or write rules: without any, no request needs its identity. */
    private final boolean accessRules;
    /** The databases that hold encrypted collections, and the same by their names in lower case (asked of every request). */
    private final Set<String> databases;
    private final Map<String, String> databasesByLowerCase;

    public Policy(Map<String, CollectionPolicy> byNamespace) {
        this(byNamespace, Identities.NONE);
    }

    public Policy(Map<String, CollectionPolicy> byNamespace, Identities identities) {
        this.byNamespace = Map.copyOf(byNamespace);
        this.identities = identities;
        this.accessRules = byNamespace.values().stream()
                .anyMatch(c -> c.fields().values().stream().anyMatch(r -> !r.access().open()));
        Map<String, String> dbs = new java.util.HashMap<>();
        byNamespace.values().forEach(c -> dbs.put(c.database().toLowerCase(java.util.Locale.ROOT), c.database()));
        this.databasesByLowerCase = Map.copyOf(dbs);
        this.databases = byNamespace.values().stream().map(CollectionPolicy::database)
                .collect(java.util.stream.Collectors.toUnmodifiableSet());
    }

    /** True if some field has reveal, query or write rules. */
    public boolean hasAccessRules() {
        return accessRules;
    }

    /** The same collections with these identities. */
    public Policy withIdentities(Identities named) {
        return new Policy(byNamespace, named);
    }

    /** The named identities field rules refer to. */
    public Identities identities() {
        return identities;
    }

    /** The collection's policy, or null if it is not encrypted. */
    public CollectionPolicy get(String database, String collection) {
        if (byNamespace.isEmpty() || database == null || collection == null) {
            return null;
        }
        return byNamespace.get(database + "." + collection);
    }

    public CollectionPolicy get(String namespace) {
        return byNamespace.get(namespace);
    }

    public boolean isEmpty() {
        return byNamespace.isEmpty();
    }

    public Map<String, CollectionPolicy> collections() {
        return byNamespace;
    }

    /** True if some policy collection lives in this database. */
    public boolean coversDatabase(String database) {
        return databases.contains(database);
    }

    /**
     * The policy's database this name differs from in case only ("HR" for "hr"), or null. MongoDB
     * refuses to create such a database beside the other, but a backend that does not would store
     * in clear what the proxy took for a plain database's.
     */
    public String databaseDifferingInCase(String database) {
        return databases.contains(database) ? null : databasesByLowerCase.get(database.toLowerCase(java.util.Locale.ROOT));
    }

    /** Every key the policy names, previous keys included: all of them are validated and prefetched. */
    public Set<UUID> keyIds() {
        Set<UUID> ids = new LinkedHashSet<>();
        byNamespace.values().forEach(p -> ids.addAll(p.openingKeys()));
        return ids;
    }

    @Override
    public String toString() {
        return byNamespace.keySet().toString();
    }
}
