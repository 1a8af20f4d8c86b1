package dev.fleproxy.policy;

import dev.fleproxy.config.ConfigException;
import java.nio.charset.StandardCharsets;

/**
 * A policy's namespaces must be names MongoDB can hold. One that it cannot is never the name of a
 * real collection, so its policy would protect nothing while the operator believes it does: above
 * all a pattern such as {@code "hr.*"}, which the proxy would read as a collection literally named
 * {@code *} and leave every real collection of {@code hr} in plaintext. The rules are MongoDB's
 * naming restrictions ("MongoDB Limits and Thresholds"), taken on every platform at once:
 *
 * <ul>
 *   <li>database: not empty, fewer than 64 bytes, none of {@code / \ . " $ * < > : | ?}, space or
 *       NUL (the Windows list; Unix forbids a subset, and a policy must mean the same everywhere);
 *   <li>collection (everything after the first dot): not empty, no {@code $} or NUL, not starting
 *       with {@code system.} (reserved for the server's own collections); and no {@code *}, which
 *       MongoDB allows but which here can only be a wildcard the proxy does not have.
 * </ul>
 */
final class NamespaceNames {
    private static final String DATABASE_FORBIDDEN = "/\\. \"$*<>:|?\0";
    private static final int DATABASE_MAX_BYTES = 63;

    private NamespaceNames() {
    }

    /** Throws a ConfigException saying what is wrong with {@code ns}; {@code where} names its place in the file. */
    static void check(String ns, String where) {
        int dot = ns.indexOf('.');
        if (dot < 0) {
            throw new ConfigException(where + ": a namespace is \"database.collection\"");
        }
        database(ns.substring(0, dot), where);
        collection(ns.substring(dot + 1), where);
    }

    private static void database(String db, String where) {
        if (db.isEmpty()) {
            throw new ConfigException(where + ": the database name is empty; a namespace is \"database.collection\"");
        }
        for (int i = 0; i < db.length(); i++) {
            char c = db.charAt(i);
            if (DATABASE_FORBIDDEN.indexOf(c) >= 0) {
                throw new ConfigException(where + ": the database name '" + shown(db) + "' contains " + named(c)
                        + ", which MongoDB does not allow in database names (/\\. \"$*<>:|? and NUL)"
                        + wildcard(c));
            }
        }
        if (db.getBytes(StandardCharsets.UTF_8).length > DATABASE_MAX_BYTES) {
            throw new ConfigException(where + ": the database name is longer than MongoDB allows (" + DATABASE_MAX_BYTES
                    + " bytes)");
        }
    }

    private static void collection(String coll, String where) {
        if (coll.isEmpty()) {
            throw new ConfigException(where + ": the collection name is empty; a namespace is \"database.collection\"");
        }
        for (int i = 0; i < coll.length(); i++) {
            char c = coll.charAt(i);
            if (c == '$' || c == '\0') {
                throw new ConfigException(where + ": the collection name '" + shown(coll) + "' contains " + named(c)
                        + ", which MongoDB does not allow in collection names");
            }
            if (c == '*') {
                throw new ConfigException(where + ": the collection name '" + coll + "' contains '*'" + wildcard(c));
            }
        }
        if (coll.startsWith("system.")) {
            throw new ConfigException(where + ": collection names starting with 'system.' are MongoDB's own; "
                    + "the proxy does not encrypt them");
        }
    }

    private static String wildcard(char c) {
        return c == '*' || c == '?'
                ? "; namespaces are literal names, never patterns: list each collection to encrypt" : "";
    }

    private static String named(char c) {
        return switch (c) {
            case '\0' -> "NUL";
            case ' ' -> "a space";
            default -> "'" + c + "'";
        };
    }

    /** The name for a message, with NUL made visible so the line stays printable. */
    private static String shown(String name) {
        return name.replace("\0", "\\0");
    }
}
