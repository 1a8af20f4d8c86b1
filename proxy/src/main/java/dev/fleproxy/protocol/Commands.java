package dev.fleproxy.protocol;

import java.util.Set;

/**
 * The command vocabulary the proxy decides by: which commands are handshakes, which concern the
 * connection rather than a collection, which are harmless or unsupported on an encrypted
 * collection, and which can name a namespace other than their own. One place, so the handshake
 * and the encryption rules cannot disagree about a name.
 */
public final class Commands {
    /** The handshake, in its three spellings; its replies are rewritten (server.HelloRewriter). */
    public static final Set<String> HELLO = Set.of("hello", "isMaster", "ismaster");

    /** Authentication and session commands: never about a collection's values. */
    public static final Set<String> CONNECTION = Set.of("saslStart", "saslContinue", "authenticate",
            "getnonce", "logout", "ping", "buildInfo", "buildinfo", "endSessions", "startSession");

    /** Commands on an encrypted collection that neither carry nor return field values. */
    public static final Set<String> HARMLESS = Set.of("drop", "listIndexes", "dropIndexes",
            "collStats", "validate", "killCursors", "dataSize", "compact", "reIndex", "storageStats",
            "listSearchIndexes", "createSearchIndexes");

    /** Commands that read or write values in ways the proxy cannot rewrite. */
    public static final Set<String> UNSUPPORTED = Set.of("explain", "mapReduce", "mapreduce", "geoNear", "group",
            "eval", "parallelCollectionScan", "planCacheListFilters", "planCacheSetFilter");

    /**
     * Commands whose body can name a namespace other than the one they are sent for (pipelines
     * with $lookup/$out/…, views, renames, mapReduce output, clones, applyOps): on any collection,
     * encrypted or not, their bodies are checked for references to encrypted collections.
     */
    public static final Set<String> REFERENCING_OTHER_NAMESPACES = Set.of("applyOps", "renameCollection",
            "internalRenameIfOptionsAndIndexesMatch", "aggregate", "explain", "create", "collMod", "mapReduce",
            "mapreduce", "cloneCollectionAsCapped");

    /**
     * Legacy opcodes drivers since MongoDB 3.6 never send: OP_UPDATE, OP_INSERT, OP_DELETE and
     * OP_KILL_CURSORS get no reply by design, OP_GET_MORE's would carry documents in an OP_REPLY,
     * which the proxy does not decrypt. While collections are encrypted, a connection that sends
     * one is closed.
     */
    public static final Set<Integer> LEGACY_OPCODES = Set.of(2001, 2002, 2005, 2006, 2007);

    private Commands() {
    }

    /** Handshake or connection-level: passes every filter that is about collections. */
    public static boolean isConnectionLevel(String name) {
        return HELLO.contains(name) || CONNECTION.contains(name);
    }
}
