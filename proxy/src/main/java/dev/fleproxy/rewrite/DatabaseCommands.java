package dev.fleproxy.rewrite;

import dev.fleproxy.policy.Policy;
import dev.fleproxy.protocol.CommandSpec;
import dev.fleproxy.protocol.CommandTable;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.paths.DatabasePaths;
import dev.fleproxy.rewrite.pipeline.DatabasePipelines;
import dev.fleproxy.rewrite.query.Arguments;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Commands that name no encrypted collection but reach into the database that holds some (or, on
 * admin, into every database): the handshake and sessions, diagnostics, the catalog, the profiler,
 * database-level aggregates and explain. On such a database every argument is held against the
 * command's row in the {@link CommandTable}, as on an encrypted collection: what the row does not
 * list is refused, and what it lists is examined by kind, against the policy's field names as
 * {@link DatabasePaths} finds them anywhere in a path. On any other database these commands pass
 * (the database holds nothing of the policy's).
 */
final class DatabaseCommands {
    private final Supplier<Policy> policy;
    /** The paths of each database examined, for the policy in force (a reload starts a new map). */
    private volatile Cache cache = new Cache(Policy.EMPTY);

    private record Cache(Policy policy, Map<String, DatabasePaths> byDatabase) {
        Cache(Policy policy) {
            this(policy, new ConcurrentHashMap<>());
        }
    }

    DatabaseCommands(Supplier<Policy> policy) {
        this.policy = policy;
    }

    /** Whether commands sent to this database are examined here: it holds encrypted collections, or is admin. */
    static boolean examines(String db, Policy p) {
        return db.equals("admin") || p.coversDatabase(db);
    }

    /**
     * Refuses the command unless every part of it is one its row lists and examines; a database-level
     * aggregate's pipeline and explain's command are followed too.
     */
    void examine(CommandSpec spec, BsonDocument body, int sequences, String db, Policy p) {
        Arguments.On on = new Arguments.On(db, paths(p, db));
        String own = body.getFirstKey();
        BsonValue target = body.get(own);
        if (spec.scope() == CommandSpec.Scope.COLLECTION && !spec.name().equals("aggregate")) {
            throw Refusal.command(db, spec.name() + " naming no collection on a database with encrypted collections");
        }
        switch (spec.name()) {
            case "aggregate" -> {
                Arguments.examineDatabaseCommand(spec, body, sequences, on, Set.of("pipeline"));
                DatabasePipelines.check(body.get("pipeline"), p, db, on);
            }
            case "explain" -> {
                Arguments.examineDatabaseCommand(spec, body, sequences, on, Set.of(own));
                explained(target, db, p);
            }
            default -> Arguments.examineDatabaseCommand(spec, body, sequences, on, Set.of());
        }
    }

    /**
     * explain's command, examined as if it were sent itself: refused on an encrypted collection,
     * followed into a plain one's references, held to its own row on the database itself.
     */
    private void explained(BsonValue inner, String db, Policy p) {
        if (!inner.isDocument() || inner.asDocument().isEmpty()) {
            throw Refusal.command(db, "explain of something that is not a command");
        }
        BsonDocument cmd = inner.asDocument();
        String name = cmd.getFirstKey();
        CommandSpec spec = CommandTable.get(name);
        if (spec == null || spec.name().equals("explain")) {
            throw Refusal.command(db, "explain of '" + Arguments.quoted(name) + "', a command the proxy does not "
                    + "examine there");
        }
        if (cmd.containsKey("$db")) {
            throw Refusal.command(db, "explain of a command that names its own database");
        }
        BsonValue target = cmd.get(name);
        boolean onCollection = spec.scope() == CommandSpec.Scope.COLLECTION && target.isString();
        String encrypted = !target.isString() ? null
                : onCollection && p.get(db, target.asString().getValue()) != null ? db + "." + target.asString().getValue()
                : spec.scope() == CommandSpec.Scope.NAMESPACE && p.get(target.asString().getValue()) != null
                        ? target.asString().getValue() : null;
        if (encrypted != null || spec.scope() == CommandSpec.Scope.NAMESPACES) {
            throw Refusal.command(encrypted != null ? encrypted : db, "explain is not supported on an encrypted "
                    + "collection (nor of bulkWrite)");
        }
        if (onCollection || spec.scope() == CommandSpec.Scope.NAMESPACE) {
            if (spec.crossReferences()) {
                CrossReferences.check(spec.name(), cmd, p, db, onCollection ? target.asString().getValue() : null);
            }
            return;
        }
        examine(spec, cmd, 0, db, p);
    }

    private DatabasePaths paths(Policy p, String db) {
        Cache c = cache;
        if (c.policy() != p) {
            c = new Cache(p);
            cache = c;
        }
        return c.byDatabase().computeIfAbsent(db, d -> DatabasePaths.of(p, d));
    }
}
