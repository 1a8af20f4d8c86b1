package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import org.bson.BSONException;
import org.bson.RawBsonDocument;

/**
 * A bounds-checked cursor over one message's bytes. Every read checks against the end of the
 * message, so a lying length inside a message is a {@link WireProtocolException}, never an
 * out-of-range read or a document spliced from the next message.
 */
final class WireReader {
    private final ByteBuf buf;
    private final int end;
    private int pos;

    WireReader(ByteBuf buf, int start, int end) {
        this.buf = buf;
        this.pos = start;
        this.end = end;
    }

    /** A reader over a frame's bytes after the 16-byte header. */
    static WireReader afterHeader(Frame frame) {
        ByteBuf buf = frame.content();
        return new WireReader(buf, buf.readerIndex() + MsgHeader.SIZE, buf.readerIndex() + frame.length());
    }

    int position() {
        return pos;
    }

    int remaining() {
        return end - pos;
    }

    boolean hasRemaining() {
        return pos < end;
    }

    private void need(int n, String what) {
        if (n < 0 || end - pos < n) {
            throw new WireProtocolException("message truncated while reading " + what);
        }
    }

    int int32(String what) {
        need(4, what);
        int v = buf.getIntLE(pos);
        pos += 4;
        return v;
    }

    long int64(String what) {
        need(8, what);
        long v = buf.getLongLE(pos);
        pos += 8;
        return v;
    }

    int uint8(String what) {
        need(1, what);
        return buf.getUnsignedByte(pos++);
    }

    String cstring(String what) {
        int nul = buf.indexOf(pos, end, (byte) 0);
        if (nul < 0) {
            throw new WireProtocolException("unterminated string in " + what);
        }
        byte[] bytes = new byte[nul - pos];
        buf.getBytes(pos, bytes);
        pos = nul + 1;
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** Skips one BSON document after checking its length frame; returns its length. */
    int skipDocument(String what) {
        need(5, what);
        int len = buf.getIntLE(pos);
        if (len < 5 || len > end - pos) {
            throw new WireProtocolException(what + " declares " + len + " bytes but "
                    + (end - pos) + " remain in the message");
        }
        if (buf.getByte(pos + len - 1) != 0) {
            throw new WireProtocolException(what + " is not terminated by a NUL byte");
        }
        pos += len;
        return len;
    }

    /** How deep the documents of the legacy opcodes may nest (as deep as the proxy ever encrypts). */
    static final int MAX_DEPTH = 1000;

    /**
     * Reads one BSON document (copied; its elements are parsed lazily on access), checked well-formed
     * all the way down first: the driver's lazy reader answers a lying length inside a document with
     * IllegalArgumentException or IndexOutOfBoundsException, not with a BSON error.
     */
    RawBsonDocument document(String what) {
        int start = pos;
        int len = skipDocument(what);
        byte[] bytes = new byte[len];
        buf.getBytes(start, bytes);
        try {
            BsonCursor.validate(BsonCursor.DOCUMENT, bytes, 0, len, MAX_DEPTH);
        } catch (BSONException e) {
            throw new WireProtocolException(what + " is not well-formed BSON: " + e.getMessage(), e);
        }
        return new RawBsonDocument(bytes);
    }

    byte[] bytes(int n, String what) {
        need(n, what);
        byte[] out = new byte[n];
        buf.getBytes(pos, out);
        pos += n;
        return out;
    }

    void skip(int n, String what) {
        need(n, what);
        pos += n;
    }
}
