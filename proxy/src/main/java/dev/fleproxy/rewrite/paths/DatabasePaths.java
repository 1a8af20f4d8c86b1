package dev.fleproxy.rewrite.paths;

import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.Refusal;
import java.util.ArrayList;
import java.util.List;

/**
 * The policy's named fields, as values that are no collection's documents may name them: a
 * database-level comment, an oplog note, client metadata, a diagnostic filter, {@code $documents}
 * literals. Such a value may carry a policy field's value under its name at any depth and behind
 * any prefix ("command.filter.ssn", "fullDocument.address.street"), so a path mentions a policy
 * field if any run of its segments, from any segment on, is a path of some collection's policy in
 * the database (every collection's, for admin, whose commands reach every database). Collections
 * with {@code fields: "*"} name no fields, so they add nothing here; values that could hold their
 * documents' fields are held to allowlists of names instead ({@code ArgKind.METADATA_FILTER}).
 */
public final class DatabasePaths implements FieldPaths {
    private final String database;
    private final List<EncryptedPaths> named;

    private DatabasePaths(String database, List<EncryptedPaths> named) {
        this.database = database;
        this.named = named;
    }

    /** The named fields of {@code database}'s encrypted collections, or of all of them for admin. */
    public static DatabasePaths of(Policy policy, String database) {
        List<EncryptedPaths> named = new ArrayList<>();
        for (CollectionPolicy cp : policy.collections().values()) {
            if (!cp.allFields() && (database.equals("admin") || cp.database().equals(database))) {
                named.add(new EncryptedPaths(cp));
            }
        }
        return new DatabasePaths(database, named);
    }

    @Override
    public PathKind kind(String path) {
        if (path.isEmpty() || named.isEmpty()) {
            return PathKind.NONE;
        }
        String[] segs = path.split("\\.", -1);
        for (int from = 0; from < segs.length; from++) {
            if (PathSegments.transparent(segs[from])) {
                continue;
            }
            String tail = String.join(".", java.util.Arrays.asList(segs).subList(from, segs.length));
            for (EncryptedPaths paths : named) {
                PathKind k = paths.classify(tail).kind();
                if (k != PathKind.NONE) {
                    return k;
                }
            }
        }
        return PathKind.NONE;
    }

    @Override
    public Refusal refuse(String path, String what) {
        return Refusal.onField(database, path, what);
    }
}
