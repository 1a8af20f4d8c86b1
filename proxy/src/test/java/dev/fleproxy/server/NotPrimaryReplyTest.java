package dev.fleproxy.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsg;
import io.netty.buffer.ByteBufAllocator;
import org.bson.BsonDocument;
import org.bson.BsonDouble;
import org.bson.BsonInt32;
import org.bson.BsonString;
import org.junit.jupiter.api.Test;

/** The replies that say "not primary" (the state-change codes), and nothing else. */
class NotPrimaryReplyTest {

    private static String of(BsonDocument body) {
        Frame f = new Frame(new OpMsg(0, body).encode(ByteBufAllocator.DEFAULT, 7, 3));
        try {
            return NotPrimaryReply.of(f);
        } finally {
            f.release();
        }
    }

    @Test
    void stateChangeErrorsAreFoundAndOtherRepliesAreNot() {
        assertEquals("NotWritablePrimary", of(new BsonDocument("ok", new BsonDouble(0)).append("errmsg",
                new BsonString("not primary")).append("code", new BsonInt32(10107)).append("codeName",
                new BsonString("NotWritablePrimary"))));
        assertEquals("code 13435", of(new BsonDocument("ok", new BsonInt32(0)).append("code", new BsonInt32(13435))));
        assertNull(of(new BsonDocument("ok", new BsonDouble(0)).append("code", new BsonInt32(11000))), "duplicate key");
        assertNull(of(new BsonDocument("ok", new BsonDouble(1)).append("code", new BsonInt32(10107))), "ok: 1");
        assertNull(of(new BsonDocument("ok", new BsonDouble(1)).append("n", new BsonInt32(1))));
        BsonDocument big = new BsonDocument("ok", new BsonDouble(0)).append("code", new BsonInt32(10107))
                .append("pad", new BsonString("x".repeat(NotPrimaryReply.MAX_BYTES)));
        assertNull(of(big), "a large reply is not read");
    }
}
