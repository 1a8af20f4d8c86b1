package dev.fleproxy.rewrite;

import dev.fleproxy.crypto.DecryptionFailedException;
import dev.fleproxy.crypto.Envelopes;
import dev.fleproxy.crypto.FieldCipher;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.wire.BsonCursor;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsgView;
import dev.fleproxy.wire.OpMsgWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import org.bson.BSONException;

/**
 * Decrypts the documents a reply returns for an encrypted collection (a cursor's firstBatch or
 * nextBatch, findAndModify's value, distinct's values), every envelope wherever it sits (a
 * pipeline may have copied it to another name), under the key its header names. One pass from
 * the reply's bytes into the outgoing buffer: elements are copied as they are, envelopes become
 * their plaintext values, nothing is decoded into objects. Values that are not envelopes — stored
 * before a policy existed, or never encrypted — pass as they are. An envelope that fails
 * authentication fails the whole reply: never garbage. An envelope whose key is not in memory
 * yet is noted ({@link RequestKeys}) and the reply is decrypted again once it is.
 */
final class ReplyDecryptor {
    private static final byte[] OK = bytes("ok");
    private static final byte[] CURSOR = bytes("cursor");
    private static final byte[] FIRST_BATCH = bytes("firstBatch");
    private static final byte[] NEXT_BATCH = bytes("nextBatch");
    private static final byte[] VALUE = bytes("value");
    private static final byte[] VALUES = bytes("values");

    private final RequestKeys keys;
    private final Envelopes.Opener envelopes;
    private final String ns;
    /** Names on the way down, for a refusal's message: [start, end) pairs, -1 for an array level. */
    private int[] path = new int[32];
    private int depth;
    private byte[] buf;
    private String pathBase;

    ReplyDecryptor(RequestKeys keys, String ns) {
        this.keys = keys.about(ns);
        this.envelopes = keys.envelopes().opener(keys);
        this.ns = ns;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The reply with its documents decrypted, as a new frame; null if it holds nothing to decrypt
     * (an error reply, no envelope) or if keys are pending ({@link RequestKeys#hasPending}).
     */
    Frame decrypt(OpMsgView reply, ByteBufAllocator alloc) {
        byte[] body = reply.bodyBytes();
        BsonCursor c = new BsonCursor(body, 0, body.length);
        if (!c.find(OK) || c.numberValue() != 1.0) {
            return null; // errors carry no documents
        }
        buf = body;
        OpMsgWriter w = OpMsgWriter.replacing(reply, alloc, reply.frame().length() + 64);
        boolean changed;
        try {
            w.body();
            changed = body(w.out());
            for (int i = 0; i < reply.sequenceCount(); i++) {
                reply.copySequenceSection(i, w.out());
            }
        } catch (RuntimeException | Error e) {
            w.abandon();
            throw e;
        }
        if (!changed || keys.hasPending()) {
            w.abandon();
            return null;
        }
        return w.finish();
    }

    /** The body: the one field holding documents is decrypted, the rest copied. */
    private boolean body(ByteBuf out) {
        byte[] target = null;
        BsonCursor find = new BsonCursor(buf, 0, buf.length);
        if (find.find(CURSOR) && find.type == BsonCursor.DOCUMENT) {
            target = CURSOR;
        } else {
            find = new BsonCursor(buf, 0, buf.length);
            while (find.next() && target == null) {
                if (find.nameIs(VALUE)) {
                    target = VALUE;
                } else if (find.nameIs(VALUES)) {
                    target = VALUES;
                }
            }
        }
        BsonCursor c = new BsonCursor(buf, 0, buf.length);
        int mark = OpMsgWriter.beginDocument(out);
        boolean changed = false;
        while (c.next()) {
            if (target != null && c.nameIs(target)) {
                target = null; // only the first of that name, as a server would read it
                if (c.nameIs(CURSOR)) {
                    OpMsgWriter.elementHeader(out, c.type, c);
                    changed = cursor(c.valueStart, c.valueEnd, out);
                } else {
                    pathBase = c.nameIs(VALUES) ? "values" : "";
                    changed = element(c, out);
                }
            } else {
                OpMsgWriter.copyElement(out, c);
            }
        }
        OpMsgWriter.endDocument(out, mark);
        return changed;
    }

    /** A cursor document: its first batch array (firstBatch, else nextBatch) is decrypted. */
    private boolean cursor(int start, int end, ByteBuf out) {
        byte[] batch = null;
        BsonCursor find = new BsonCursor(buf, start, end);
        while (find.next() && batch == null) {
            if (find.type == BsonCursor.ARRAY && (find.nameIs(FIRST_BATCH) || find.nameIs(NEXT_BATCH))) {
                batch = find.nameIs(FIRST_BATCH) ? FIRST_BATCH : NEXT_BATCH;
            }
        }
        BsonCursor c = new BsonCursor(buf, start, end);
        int mark = OpMsgWriter.beginDocument(out);
        boolean changed = false;
        while (c.next()) {
            if (batch != null && c.type == BsonCursor.ARRAY && c.nameIs(batch)) {
                batch = null;
                pathBase = "";
                changed = element(c, out);
            } else {
                OpMsgWriter.copyElement(out, c);
            }
        }
        OpMsgWriter.endDocument(out, mark);
        return changed;
    }

    /** One element, decrypted wherever it holds envelopes; its name is not part of refusal paths. */
    private boolean element(BsonCursor c, ByteBuf out) {
        depth = 0;
        if (c.type == BsonCursor.DOCUMENT || c.type == BsonCursor.ARRAY) {
            OpMsgWriter.elementHeader(out, c.type, c);
            push(c.type == BsonCursor.ARRAY ? -1 : -2, 0);
            boolean changed = document(c.valueStart, c.valueEnd, c.type == BsonCursor.ARRAY, out);
            depth--;
            return changed;
        }
        return value(c, out);
    }

    private boolean document(int start, int end, boolean array, ByteBuf out) {
        if (depth > DocumentEncryptor.MAX_DEPTH) {
            throw new BSONException("documents nested too deeply to decode");
        }
        BsonCursor c = new BsonCursor(buf, start, end);
        int mark = OpMsgWriter.beginDocument(out);
        boolean changed = false;
        while (c.next()) {
            if (array) {
                push(-1, 0);
            } else {
                push(c.nameStart, c.nameEnd);
            }
            if (c.type == BsonCursor.DOCUMENT || c.type == BsonCursor.ARRAY) {
                OpMsgWriter.elementHeader(out, c.type, c);
                changed |= document(c.valueStart, c.valueEnd, c.type == BsonCursor.ARRAY, out);
            } else {
                changed |= value(c, out);
            }
            depth--;
        }
        OpMsgWriter.endDocument(out, mark);
        return changed;
    }

    /** A scalar element: an envelope becomes its plaintext, anything else is copied. */
    private boolean value(BsonCursor c, ByteBuf out) {
        int dataStart = c.valueStart + 5;
        int dataLength = c.valueEnd - dataStart;
        if (c.type != BsonCursor.BINARY || !EnvelopeBinary.holdsEnvelope(buf[c.valueStart + 4], buf, dataStart, dataLength)) {
            OpMsgWriter.copyElement(out, c);
            return false;
        }
        FieldCipher.Plaintext p;
        try {
            p = envelopes.open(buf, dataStart, dataLength);
            if (p == null) {
                OpMsgWriter.copyElement(out, c); // its key is being fetched; this reply is done again
                return false;
            }
            BsonCursor.validate(p.bsonType(), p.value(), 0, p.value().length, DocumentEncryptor.MAX_DEPTH);
        } catch (DecryptionFailedException e) {
            throw new Refusal(ProxyError.DECRYPTION_FAILED, ns + ": decryption failed for field '" + path()
                    + "' of a returned document (tampered, or not encrypted by this proxy's keys)");
        } catch (BSONException e) {
            throw new Refusal(ProxyError.DECRYPTION_FAILED, ns + ": field '" + path() + "' decrypted to no valid BSON value");
        }
        OpMsgWriter.elementHeader(out, p.bsonType(), c);
        out.writeBytes(p.value());
        return true;
    }

    private void push(int start, int end) {
        if (2 * depth + 1 >= path.length) {
            path = java.util.Arrays.copyOf(path, path.length * 2);
        }
        path[2 * depth] = start;
        path[2 * depth + 1] = end;
        depth++;
    }

    /** The dotted path of the current element within its returned document, array indexes left out. */
    private String path() {
        StringBuilder sb = new StringBuilder(pathBase);
        for (int i = 0; i < depth; i++) {
            int start = path[2 * i];
            if (start < 0) {
                continue;
            }
            if (sb.length() > 0) {
                sb.append('.');
            }
            sb.append(new String(buf, start, path[2 * i + 1] - start, StandardCharsets.UTF_8));
        }
        return sb.toString();
    }
}
