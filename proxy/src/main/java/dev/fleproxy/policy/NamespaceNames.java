package dev.fleproxy.policy;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.protocol.ErrorReplies;
import java.nio.charset.StandardCharsets;

/**
 * MongoDB's naming restrictions ("MongoDB Limits and Thresholds"), taken on every platform at
 * once, for the policy's namespaces and for the names requests carry.
 *
 * <p>A policy's namespaces must be names MongoDB can hold. One that it cannot is never the name of
 * a real collection, so its policy would protect nothing while the operator believes it does:
 * above all a pattern such as {@code "hr.*"}, which the proxy would read as a collection literally
 * named {@code *} and leave every real collection of {@code hr} in plaintext.
 *
 * <p>A request's names are held to the same rules before the proxy decides anything by them: a
 * server that reads {@code "hr\0"} as {@code hr}, or that creates a database {@code "hr."}, would
 * otherwise store what the proxy took for another namespace's plaintext.
 *
 * <ul>
 *   <li>database: not empty, fewer than 64 bytes, none of {@code / \ . " $ * < > : | ?}, space or
 *       NUL (the Windows list; Unix forbids a subset, and a name must mean the same everywhere);
 *   <li>collection (everything after the first dot): not empty, not starting with a dot, no
 *       {@code $} or NUL; in a policy also not starting with {@code system.} (reserved for the
 *       server's own collections), and no {@code *}, which MongoDB allows but which here can only
 *       be a wildcard the proxy does not have.
 * </ul>
 */
public final class NamespaceNames {
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
        String problem = databaseProblem(ns.substring(0, dot));
        if (problem == null) {
            problem = policyCollectionProblem(ns.substring(dot + 1));
        }
        if (problem != null) {
            throw new ConfigException(where + ": " + problem);
        }
    }

    /** What is wrong with a database name, or null if MongoDB can hold it. Never quotes more than the name. */
    public static String databaseProblem(String db) {
        if (db.isEmpty()) {
            return "the database name is empty; a namespace is \"database.collection\"";
        }
        for (int i = 0; i < db.length(); i++) {
            char c = db.charAt(i);
            if (DATABASE_FORBIDDEN.indexOf(c) >= 0) {
                return "the database name '" + ErrorReplies.quoted(db) + "' contains " + named(c)
                        + ", which MongoDB does not allow in database names (/\\. \"$*<>:|? and NUL)" + wildcard(c);
            }
        }
        // at most 3 UTF-8 bytes per char: most names are short enough not to need counting (every request asks)
        if (db.length() * 3 > DATABASE_MAX_BYTES && db.getBytes(StandardCharsets.UTF_8).length > DATABASE_MAX_BYTES) {
            return "the database name is longer than MongoDB allows (" + DATABASE_MAX_BYTES + " bytes)";
        }
        return null;
    }

    /** What is wrong with a collection name a request carries, or null if MongoDB can hold it. */
    public static String collectionProblem(String coll) {
        if (coll.isEmpty()) {
            return "the collection name is empty";
        }
        if (coll.charAt(0) == '.') {
            return "the collection name '" + ErrorReplies.quoted(coll) + "' starts with a dot, which MongoDB does not allow";
        }
        for (int i = 0; i < coll.length(); i++) {
            char c = coll.charAt(i);
            if (c == '$' || c == '\0') {
                return "the collection name '" + ErrorReplies.quoted(coll) + "' contains " + named(c)
                        + ", which MongoDB does not allow in collection names";
            }
        }
        return null;
    }

    /** What is wrong with a "database.collection" a request carries, or null. */
    public static String namespaceProblem(String ns) {
        int dot = ns.indexOf('.');
        if (dot < 0) {
            return "the namespace '" + ErrorReplies.quoted(ns) + "' is not \"database.collection\"";
        }
        String problem = databaseProblem(ns.substring(0, dot));
        return problem != null ? problem : collectionProblem(ns.substring(dot + 1));
    }

    private static String policyCollectionProblem(String coll) {
        if (coll.isEmpty()) {
            return "the collection name is empty; a namespace is \"database.collection\"";
        }
        String problem = collectionProblem(coll);
        if (problem != null) {
            return problem;
        }
        if (coll.indexOf('*') >= 0) {
            return "the collection name '" + coll + "' contains '*'" + wildcard('*');
        }
        if (coll.startsWith("system.")) {
            return "collection names starting with 'system.' are MongoDB's own; the proxy does not encrypt them";
        }
        return null;
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
}
