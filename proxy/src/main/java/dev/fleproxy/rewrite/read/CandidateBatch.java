package dev.fleproxy.rewrite.read;

import dev.fleproxy.wire.BsonCursor;
import java.nio.charset.StandardCharsets;
import org.bson.BSONException;

/**
 * Where a batch of candidates lies in a cursor reply's body, read in place: the cursor's id (0:
 * exhausted) and the bytes of its firstBatch or nextBatch array.
 */
record CandidateBatch(long cursorId, int start, int end) {
    private static final byte[] CURSOR = bytes("cursor");
    private static final byte[] ID = bytes("id");
    private static final byte[] FIRST_BATCH = bytes("firstBatch");
    private static final byte[] NEXT_BATCH = bytes("nextBatch");

    private static byte[] bytes(String name) {
        return name.getBytes(StandardCharsets.UTF_8);
    }

    /** The batch of the well-formed body at buf[start, end); a BSONException if it holds none. */
    static CandidateBatch in(byte[] buf, int start, int end) {
        BsonCursor c = new BsonCursor(buf, start, end);
        if (!c.find(CURSOR) || c.type != BsonCursor.DOCUMENT) {
            throw new BSONException("the server's answer to the proxy's read of candidates holds no cursor");
        }
        Long id = null;
        int batchStart = -1;
        int batchEnd = -1;
        for (BsonCursor in = new BsonCursor(buf, c.valueStart, c.valueEnd); in.next(); ) {
            if (in.nameIs(ID) && id == null) {
                id = in.longValue() != null ? in.longValue() : (long) in.numberValue(); // not a number (NaN): 0
            } else if (batchStart < 0 && in.type == BsonCursor.ARRAY && (in.nameIs(FIRST_BATCH) || in.nameIs(NEXT_BATCH))) {
                batchStart = in.valueStart;
                batchEnd = in.valueEnd;
            }
        }
        if (batchStart < 0 || id == null) {
            throw new BSONException("the server's cursor of candidates holds no batch or no id");
        }
        return new CandidateBatch(id, batchStart, batchEnd);
    }
}
