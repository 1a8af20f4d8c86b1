package dev.fleproxy.metrics;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The values of the {@code command} label: a fixed list, so a client cannot grow the metrics by
 * sending commands with made-up names (anything else is {@code other}). Each label has an index,
 * so the data path counts requests in an array.
 */
final class CommandLabels {
    private static final List<String> KNOWN = List.of(
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

    /** Every label, by index: the known names, then {@code other} and {@code none}. */
    static final List<String> LABELS;
    static final int OTHER;
    static final int NONE;
    private static final Map<String, Integer> INDEX = new HashMap<>();

    static {
        List<String> all = new java.util.ArrayList<>(KNOWN);
        all.add("other");
        all.add("none");
        LABELS = List.copyOf(all);
        OTHER = LABELS.indexOf("other");
        NONE = LABELS.indexOf("none");
        for (String k : KNOWN) {
            INDEX.put(k, INDEX.size());
        }
        INDEX.put("ismaster", INDEX.get("isMaster"));
        INDEX.put("findandmodify", INDEX.get("findAndModify"));
    }

    private CommandLabels() {
    }

    /** The label for a command name; null (not a command: a legacy opcode or a plain query) is {@code none}. */
    static String of(String command) {
        return LABELS.get(index(command));
    }

    /** The index in {@link #LABELS} of a command name's label. */
    static int index(String command) {
        if (command == null || command.isEmpty()) {
            return NONE;
        }
        Integer i = INDEX.get(command);
        return i != null ? i : OTHER;
    }
}
