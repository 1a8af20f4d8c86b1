package dev.fleproxy.rewrite.write;

import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.wire.BsonCursor;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsgView;
import dev.fleproxy.wire.OpMsgWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * insert on an encrypted collection, the hot write path: its documents (in the body's
 * {@code documents} array or, as drivers send them, in a kind-1 sequence of that name) are
 * encrypted in one pass from the request's bytes straight into the outgoing message; everything
 * else in the message is copied as it is.
 */
public final class Inserts {
    private static final String DOCUMENTS = "documents";
    private static final byte[] DOCUMENTS_BYTES = DOCUMENTS.getBytes(StandardCharsets.UTF_8);

    private Inserts() {
    }

    /** The rewritten message, or null if none of its documents holds a policy field. */
    public static Frame rewrite(OpMsgView msg, CollectionContext ctx, ByteBufAllocator alloc) {
        int length = msg.frame().length();
        OpMsgWriter w = OpMsgWriter.replacing(msg, alloc, length + length / 2 + 256);
        boolean changed;
        try {
            w.body();
            changed = body(msg.bodyBytes(), ctx, w.out());
            for (int i = 0; i < msg.sequenceCount(); i++) {
                if (!msg.sequenceIdentifier(i).equals(DOCUMENTS)) {
                    msg.copySequenceSection(i, w.out());
                    continue;
                }
                int mark = w.beginSequence(DOCUMENTS);
                byte[] docs = msg.sequenceBytes(i);
                for (int at = 0; at < docs.length; at += BsonCursor.int32(docs, at)) {
                    changed |= DocumentEncryptor.write(docs, at, docs.length, ctx, w.out());
                }
                w.endSequence(mark);
            }
        } catch (RuntimeException | Error e) {
            w.abandon();
            throw e;
        }
        if (!changed) {
            w.abandon();
            return null;
        }
        return w.finish();
    }

    /** The body, with the documents of its documents array (if it has one) encrypted. */
    private static boolean body(byte[] body, CollectionContext ctx, ByteBuf out) {
        BsonCursor c = new BsonCursor(body, 0, body.length);
        int mark = OpMsgWriter.beginDocument(out);
        boolean changed = false;
        while (c.next()) {
            if (c.type != BsonCursor.ARRAY || !c.nameIs(DOCUMENTS_BYTES)) {
                OpMsgWriter.copyElement(out, c);
                continue;
            }
            OpMsgWriter.elementHeader(out, c.type, c);
            BsonCursor docs = new BsonCursor(body, c.valueStart, c.valueEnd);
            int arrayMark = OpMsgWriter.beginDocument(out);
            while (docs.next()) {
                if (docs.type != BsonCursor.DOCUMENT) {
                    throw Refusal.command(ctx.ns(), "an entry of documents that is not a document");
                }
                OpMsgWriter.elementHeader(out, docs.type, docs);
                changed |= DocumentEncryptor.write(body, docs.valueStart, docs.valueEnd, ctx, out);
            }
            OpMsgWriter.endDocument(out, arrayMark);
        }
        OpMsgWriter.endDocument(out, mark);
        return changed;
    }
}
