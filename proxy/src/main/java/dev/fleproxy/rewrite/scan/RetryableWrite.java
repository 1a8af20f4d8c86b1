package dev.fleproxy.rewrite.scan;

import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonBoolean;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * A client's retryable write (a txnNumber, outside a transaction) that the proxy carries out
 * itself, applied once however often the driver retries it (docs/query-model.md, "Retried
 * writes"). The design is the server's own record of retryable writes, not one of the proxy's:
 * each write the proxy sends that applies a client statement carries the client's lsid and
 * txnNumber and that statement's index as its stmtId. The server records a statement with the
 * oplog entry of its write, in the same storage transaction, replicated with it and kept across
 * elections; a retried statement is answered from that record (counts, upserted _id, a
 * findAndModify's image) and not applied again — whatever the proxy's second reading of the
 * documents chose to write. A statement whose retry would send no write (nothing matches now,
 * or nothing would change) sends a probe instead: the same kind of write under a filter no
 * document meets, with the same stmtId, which the server answers from its record if the first
 * attempt applied the statement, and as a no-op (unrecorded) if not.
 *
 * <p>Chosen over a record kept in each document the proxy writes (lsid, txnNumber, statement):
 * that needs a field in the application's documents and an index to find it, cannot be kept by
 * a delete (the document is gone), and would repeat what every replica set member already does.
 */
final class RetryableWrite {
    /** A filter no document meets (every document has an _id), answered from the _id index. */
    private static final BsonDocument NO_DOCUMENT = new BsonDocument("_id", new BsonDocument("$in", new BsonArray()));
    /** An update that changes nothing where nothing matches; its kind (an update) is what a retry is checked against. */
    private static final BsonDocument NO_CHANGE = new BsonDocument("$setOnInsert",
            new BsonDocument("_fleProxyProbe", BsonBoolean.TRUE));
    static final RetryableWrite NONE = new RetryableWrite(null);

    private final BsonValue txnNumber;

    private RetryableWrite(BsonValue txnNumber) {
        this.txnNumber = txnNumber;
    }

    /** The client's command: retryable if it carries a txnNumber and is not part of a transaction. */
    static RetryableWrite of(BsonDocument body) {
        return body.containsKey("txnNumber") && !body.containsKey("autocommit")
                ? new RetryableWrite(body.get("txnNumber")) : NONE;
    }

    boolean retryable() {
        return txnNumber != null;
    }

    /**
     * The command (already holding the client's lsid) as the statements [from, to) of the
     * client's: its txnNumber, and their indexes as stmtIds (mongos numbers the statements it
     * sends to a shard the same way). Unchanged when not retryable.
     */
    BsonDocument statements(BsonDocument cmd, int from, int to) {
        if (txnNumber == null) {
            return cmd;
        }
        cmd.put("txnNumber", txnNumber);
        BsonArray ids = new BsonArray();
        for (int i = from; i < to; i++) {
            ids.add(new BsonInt32(i));
        }
        cmd.put("stmtIds", ids);
        return cmd;
    }

    /** findAndModify is one statement, stmtId 0 as the server numbers it: its txnNumber alone. */
    BsonDocument statement(BsonDocument cmd) {
        if (txnNumber != null) {
            cmd.put("txnNumber", txnNumber);
        }
        return cmd;
    }

    /** The probe of the client's update or delete statement {@code index}: a write that matches nothing. */
    BsonDocument probe(String collection, boolean update, int index, BsonDocument common) {
        BsonDocument st = new BsonDocument("q", NO_DOCUMENT.clone());
        if (update) {
            st.append("u", NO_CHANGE.clone());
        } else {
            st.append("limit", new BsonInt32(1));
        }
        BsonDocument cmd = new BsonDocument(update ? "update" : "delete", new BsonString(collection))
                .append(update ? "updates" : "deletes", new BsonArray(List.of(st)));
        cmd.putAll(common);
        return statements(cmd, index, index + 1);
    }

    /** The probe of a findAndModify: the same kind (remove or update, new or not), matching nothing. */
    BsonDocument probe(String collection, boolean remove, boolean returnNew, BsonDocument common) {
        BsonDocument cmd = new BsonDocument("findAndModify", new BsonString(collection)).append("query", NO_DOCUMENT.clone());
        if (remove) {
            cmd.append("remove", BsonBoolean.TRUE);
        } else {
            cmd.append("update", NO_CHANGE.clone()).append("new", BsonBoolean.valueOf(returnNew));
        }
        cmd.putAll(common);
        return statement(cmd);
    }

    /** True if a write's reply says it changed a document (the server's record of the statement, for a probe). */
    static boolean wrote(BsonDocument reply) {
        if (reply.containsKey("value")) { // a findAndModify's: the document it found, or its lastErrorObject's n
            BsonDocument last = reply.getDocument("lastErrorObject", new BsonDocument());
            return last.isNumber("n") && last.getNumber("n").intValue() > 0 || !reply.get("value").isNull();
        }
        return reply.isNumber("n") && reply.getNumber("n").intValue() > 0;
    }
}
