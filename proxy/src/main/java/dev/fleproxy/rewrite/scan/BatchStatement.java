package dev.fleproxy.rewrite.scan;

import org.bson.BsonDocument;

/**
 * One statement of an update or delete command the proxy carries out: either the proxy carries it
 * out itself ({@code proxied}), or the server runs it ({@code forServer}: the statement as the
 * server path rewrote it, its values sealed and deterministic equalities made envelopes), sent
 * with the statements around it that the server runs too.
 */
record BatchStatement(WriteStatement proxied, BsonDocument forServer) {
    static BatchStatement byProxy(WriteStatement statement) {
        return new BatchStatement(statement, null);
    }

    static BatchStatement byServer(BsonDocument rewritten) {
        return new BatchStatement(null, rewritten);
    }

    /** The proxy's, but the server could run it ({@link EvaluatedWrites}): both forms. */
    static BatchStatement taken(WriteStatement statement, BsonDocument rewritten) {
        return new BatchStatement(statement, rewritten);
    }

    boolean byServer() {
        return proxied == null;
    }
}
