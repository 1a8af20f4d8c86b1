package dev.fleproxy.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.protocol.CommandSpec.OnEncrypted;
import dev.fleproxy.protocol.CommandSpec.Scope;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The command table against MongoDB 8.0's command list. */
class CommandTableTest {
    /** The generic arguments of the command reference, which every command may carry. */
    private static final Set<String> GENERIC = Set.of("$db", "lsid", "txnNumber", "autocommit", "startTransaction",
            "$clusterTime", "readConcern", "writeConcern", "$readPreference", "maxTimeMS", "apiVersion", "apiStrict",
            "apiDeprecationErrors", "comment");

    static List<String> commandList() throws IOException {
        try (InputStream in = CommandTableTest.class.getResourceAsStream("/protocol/mongodb-8.0-commands.txt")) {
            assertNotNull(in, "the command list resource");
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines()
                    .map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
        }
    }

    @Test
    void everyCommandOfMongoDb80IsInTheTable() throws IOException {
        List<String> names = commandList();
        assertTrue(names.size() > 150, "the list holds the whole reference: " + names.size());
        for (String name : names) {
            assertNotNull(CommandTable.get(name), name + " is missing from the command table");
        }
    }

    @Test
    void everyCommandForwardedOnAnEncryptedCollectionListsItsArgumentsWithTheGenericOnes() throws IOException {
        for (String name : commandList()) {
            CommandSpec spec = CommandTable.get(name);
            boolean onACollection = Set.of(Scope.COLLECTION, Scope.CURSOR, Scope.NAMESPACE, Scope.NAMESPACES)
                    .contains(spec.scope());
            if (!onACollection || spec.onEncrypted() == OnEncrypted.REFUSE) {
                continue;
            }
            assertTrue(spec.args().keySet().containsAll(GENERIC), name + " lacks generic arguments: " + spec.args());
            for (Arg a : spec.args().values()) {
                assertNotNull(a.kind(), name + "." + a.name());
                boolean nested = Set.of(ArgKind.UPDATE_STATEMENTS, ArgKind.DELETE_STATEMENTS, ArgKind.BULK_OPERATIONS,
                        ArgKind.NAMESPACES, ArgKind.INDEX_SPECS, ArgKind.SETTINGS, ArgKind.COLLATION).contains(a.kind());
                assertEquals(nested, !a.fields().isEmpty(), name + "." + a.name() + ": fields only for documents of fields");
            }
            if (spec.onEncrypted() == OnEncrypted.REWRITE) {
                assertNotNull(spec.rewriter(), name + " has a rewriter");
            }
        }
    }

    @Test
    void theCrudCommandsCarryTheirReferenceArguments() {
        assertTrue(CommandTable.get("find").args().keySet().containsAll(Set.of("filter", "sort", "projection", "hint",
                "skip", "limit", "batchSize", "singleBatch", "min", "max", "collation", "let", "allowDiskUse",
                "returnKey", "showRecordId", "tailable", "awaitData", "noCursorTimeout", "allowPartialResults")));
        assertEquals(ArgKind.FILTER, CommandTable.get("find").arg("filter").kind());
        assertEquals(ArgKind.COMMENT, CommandTable.get("insert").arg("comment").kind());
        Arg updates = CommandTable.get("update").arg("updates");
        assertTrue(updates.sequence());
        assertEquals(Set.of("q", "u", "c", "upsert", "multi", "arrayFilters", "hint", "collation", "sort"),
                updates.fields().keySet());
        assertEquals(Set.of("q", "limit", "hint", "collation"), CommandTable.get("delete").arg("deletes").fields().keySet());
        assertTrue(CommandTable.get("aggregate").arg("cursor").fields().containsKey("batchSize"));
        assertNull(CommandTable.get("find").arg("filteX"));
    }

    @Test
    void aliasesMapToTheirCommandAndTheHandshakeIsKnown() {
        assertEquals("findAndModify", CommandTable.get("findandmodify").name());
        assertEquals("isMaster", CommandTable.get("ismaster").name());
        assertTrue(CommandTable.isHello("hello") && CommandTable.isHello("isMaster") && CommandTable.isHello("ismaster"));
        assertFalse(CommandTable.isHello("ping"));
        assertTrue(CommandTable.isConnectionLevel("saslContinue"));
        assertFalse(CommandTable.isConnectionLevel("find"));
        assertNull(CommandTable.get("fimd"));
        assertNull(CommandTable.get("f\uFFFDnd"));
    }

    @Test
    void everyNameIsListedOnce() {
        List<CommandSpec> all = CommandTable.all();
        assertEquals(all.size(), all.stream().map(CommandSpec::name).distinct().count());
    }
}
