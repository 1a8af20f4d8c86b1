package dev.fleproxy.metrics;

import java.util.Set;

/**
 * The values of the {@code command} label: a fixed list, so a client cannot grow the metrics by
 * sending commands with made-up names (anything else is {@code other}).
 */
final class CommandLabels {
    private static final Set<String> KNOWN = Set.of(
            // CRUD and cursors
            "insert", "update", "delete", "find", "findAndModify", "getMore", "killCursors", "aggregate", "count",
            "distinct", "bulkWrite",
            // handshake, sessions, authentication, monitoring
            "hello", "isMaster", "ping", "buildInfo", "saslStart", "saslContinue", "authenticate", "logout",
            "endSessions", "startSession", "refreshSessions", "commitTransaction", "abortTransaction",
            "getParameter", "serverStatus", "connectionStatus", "whatsmyuri", "getLog", "hostInfo",
            // collections and indexes
            "create", "drop", "dropDatabase", "collMod", "listCollections", "listDatabases", "listIndexes",
            "createIndexes", "dropIndexes", "renameCollection", "collStats", "dbStats", "explain", "validate",
            // replication and sharding, as tools send them
            "replSetGetStatus", "replSetInitiate", "replSetReconfig", "shardCollection", "enableSharding");

    private CommandLabels() {
    }

    /** The label for a command name; null (not a command: a legacy opcode or a plain query) is {@code none}. */
    static String of(String command) {
        if (command == null || command.isEmpty()) {
            return "none";
        }
        if (KNOWN.contains(command)) {
            return command;
        }
        return switch (command) {
            case "ismaster" -> "isMaster";
            case "findandmodify" -> "findAndModify";
            default -> "other";
        };
    }
}
