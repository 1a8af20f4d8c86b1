package dev.fleproxy.rewrite.scan;

import java.util.Set;
import org.bson.BsonDocument;

/**
 * The fields that start a transaction (startTransaction, readConcern), when the client's command
 * is its first: they go on the first command the proxy sends for it, and on no other, as the
 * server accepts them on a transaction's first command only. Every step also carries the
 * transaction's lsid, txnNumber and autocommit ({@link EvaluatedWrites}), so the proxy's reads and
 * writes run inside the client's transaction and commit or abort with it.
 */
final class TransactionOpening {
    private static final Set<String> FIELDS = Set.of("startTransaction", "readConcern");

    private BsonDocument pending;

    private TransactionOpening(BsonDocument pending) {
        this.pending = pending;
    }

    /** The client's command's opening fields; none outside a transaction (readConcern stays a read's own there). */
    static TransactionOpening of(BsonDocument body) {
        BsonDocument fields = new BsonDocument();
        if (body.containsKey("autocommit")) {
            body.forEach((name, v) -> {
                if (FIELDS.contains(name)) {
                    fields.put(name, v);
                }
            });
        }
        return new TransactionOpening(fields.isEmpty() ? null : fields);
    }

    /** The command, with the opening fields if it is the first the proxy sends. */
    BsonDocument first(BsonDocument cmd) {
        if (pending != null) {
            cmd.putAll(pending);
            pending = null;
        }
        return cmd;
    }
}
