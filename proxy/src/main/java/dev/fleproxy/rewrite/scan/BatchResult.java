package dev.fleproxy.rewrite.scan;

import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.bson.BsonValue;

/**
 * The reply to an update or delete command the proxy carries out, summed over its steps as the
 * server sums its statements: {@code n} and {@code nModified}, {@code upserted} and {@code
 * writeErrors} each with the index of the statement in the client's command (never the index
 * within a command the proxy sent), and the first {@code writeConcernError} a step met.
 */
final class BatchResult {
    private long n;
    private long nModified;
    private final BsonArray upserted = new BsonArray();
    private final BsonArray writeErrors = new BsonArray();
    private BsonDocument writeConcernError;

    void matched(long count, long modified) {
        n += count;
        nModified += modified;
    }

    void upserted(int index, BsonValue id) {
        n++;
        upserted.add(new BsonDocument("index", new BsonInt32(index)).append("_id", id));
    }

    /** A statement's write error, its own index (a step's) replaced by the client's. */
    void writeError(int index, BsonDocument error) {
        BsonDocument e = new BsonDocument("index", new BsonInt32(index));
        error.forEach((k, v) -> {
            if (!k.equals("index")) {
                e.put(k, v);
            }
        });
        writeErrors.add(e);
    }

    /** A whole command the server refused (ok: 0) as a statement's write error: its code and message. */
    void commandError(int index, BsonDocument reply) {
        BsonDocument e = new BsonDocument("code", reply.get("code", new BsonInt32(8)))
                .append("errmsg", reply.get("errmsg", new BsonString("")));
        if (reply.containsKey("codeName")) {
            e.append("codeName", reply.get("codeName"));
        }
        writeError(index, e);
    }

    /** A step's writeConcernError, if it has one and none was kept before. */
    void writeConcern(BsonDocument reply) {
        if (writeConcernError == null && reply.isDocument("writeConcernError")) {
            writeConcernError = reply.getDocument("writeConcernError");
        }
    }

    /**
     * Sums the reply of a command of the statements the server runs, whose statement i is the
     * client's {@code first + i}; true if it reports a write error.
     */
    boolean fold(BsonDocument reply, int first) {
        int upserts = reply.isArray("upserted") ? reply.getArray("upserted").size() : 0;
        n += (reply.isNumber("n") ? reply.getNumber("n").longValue() : 0) - upserts;
        nModified += reply.isNumber("nModified") ? reply.getNumber("nModified").longValue() : 0;
        if (upserts > 0) {
            for (BsonValue u : reply.getArray("upserted")) {
                upserted(first + u.asDocument().getNumber("index").intValue(), u.asDocument().get("_id"));
            }
        }
        writeConcern(reply);
        if (!reply.isArray("writeErrors") || reply.getArray("writeErrors").isEmpty()) {
            return false;
        }
        for (BsonValue e : reply.getArray("writeErrors")) {
            writeError(first + e.asDocument().getNumber("index").intValue(), e.asDocument());
        }
        return true;
    }

    /** The reply, as the server builds one (update's nModified only for an update). */
    BsonDocument reply(boolean update) {
        BsonDocument out = new BsonDocument("n", new BsonInt32((int) n));
        if (update) {
            out.append("nModified", new BsonInt32((int) nModified));
        }
        if (!upserted.isEmpty()) {
            out.append("upserted", upserted);
        }
        if (!writeErrors.isEmpty()) {
            out.append("writeErrors", writeErrors);
        }
        if (writeConcernError != null) {
            out.append("writeConcernError", writeConcernError);
        }
        return out.append("ok", new BsonInt32(1));
    }
}
