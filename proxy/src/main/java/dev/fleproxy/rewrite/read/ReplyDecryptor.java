package dev.fleproxy.rewrite.read;

import dev.fleproxy.crypto.DecryptionFailedException;
import dev.fleproxy.crypto.Envelope;
import dev.fleproxy.crypto.Envelopes;
import dev.fleproxy.crypto.FieldCipher;
import dev.fleproxy.keys.CollectionKeys;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.bson.BsonLimits;
import dev.fleproxy.rewrite.bson.EnvelopeBinary;
import dev.fleproxy.rewrite.paths.EncryptedPaths;
import dev.fleproxy.rewrite.paths.FieldContext;
import dev.fleproxy.rewrite.paths.PathSegments;
import dev.fleproxy.rewrite.paths.ReadShape;
import dev.fleproxy.wire.BsonCursor;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpMsgView;
import dev.fleproxy.wire.OpMsgWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.bson.BSONException;
import org.bson.RawBsonDocument;

/**
 * Decrypts the documents a reply returns for an encrypted collection (a cursor's firstBatch or
 * nextBatch, findAndModify's value, distinct's values) where, and only where, its {@link
 * ReadShape} says a policy field is: the collection's fields, or the names a pipeline copied them
 * to. There an envelope must open under one of the collection's keys ({@code key},
 * {@code previousKeys}; checked before any key is looked up) and, for v2, in the context of the
 * field it is found in. A value there that is not such an envelope fails the reply (9720021), unless
 * the collection allows plaintext reads while it is migrated. An envelope anywhere else is
 * returned exactly as stored and never looked at. One pass from the reply's bytes into the
 * outgoing buffer; nothing is decoded into objects. An envelope whose key is not in memory yet
 * is noted ({@link CollectionKeys}) and the reply is decrypted again once it is.
 */
public final class ReplyDecryptor {
    private static final byte[] OK = bytes("ok");
    private static final byte[] CURSOR = bytes("cursor");
    private static final byte[] FIRST_BATCH = bytes("firstBatch");
    private static final byte[] NEXT_BATCH = bytes("nextBatch");
    private static final byte[] VALUE = bytes("value");
    private static final byte[] VALUES = bytes("values");

    private final Envelopes.Opener envelopes;
    private final CollectionPolicy policy;
    private final String ns;
    /** What a returned document holds (for distinct: what each value is). */
    private final ReadShape.Node documents;
    private final boolean distinct;
    private final FieldContext topLevel;
    /** What the connection's identity gets instead of the fields it may not see. */
    private final FieldMasks masks;
    private byte[] buf;
    /** Where the body in {@link #buf} ends. */
    private int bufLength;
    /** How many documents the reply returned (its batch's, or findAndModify's value: 0 or 1); -1 if neither. */
    private long returned = -1;

    /** Decrypts to plaintext throughout: for what the proxy itself evaluates before it answers. */
    public ReplyDecryptor(CollectionKeys keys, ReadShape shape, ReadShape.Node documents, boolean distinct) {
        this(keys, shape, documents, distinct, FieldMasks.NONE);
    }

    public ReplyDecryptor(CollectionKeys keys, ReadShape shape, ReadShape.Node documents, boolean distinct,
                          FieldMasks masks) {
        this.masks = masks;
        this.policy = shape.policy;
        this.ns = policy.namespace();
        this.envelopes = keys.about(ns).envelopes().opener(keys);
        this.documents = documents;
        this.distinct = distinct;
        this.topLevel = new FieldContext(ns);
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * After {@link #decrypt}: how many documents the reply returned (a cursor's batch, or
     * findAndModify's value: 0 if null, else 1), -1 if it held neither; counted as they were written.
     */
    public long returned() {
        return returned;
    }

    /**
     * The reply with its documents decrypted, as a new frame; null if it holds nothing to decrypt
     * (an error reply, no envelope) or if keys are pending ({@link CollectionKeys#hasPending}).
     */
    public Frame decrypt(OpMsgView reply, ByteBufAllocator alloc, CollectionKeys keys) {
        byte[] body = reply.bodyBytes();
        BsonCursor c = new BsonCursor(body, 0, body.length);
        if (!c.find(OK) || c.numberValue() != 1.0 || documents == null) {
            return null; // errors carry no documents; nothing of a policy field is returned
        }
        buf = body;
        bufLength = body.length;
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

    /**
     * Only a reply's body, {@code body}[0, length) (checked well-formed), with its documents
     * decrypted into {@code out}, a heap buffer, and checked well-formed: for the candidates of a
     * query the proxy evaluates, examined in place and never sent as they are. The document is a
     * view over {@code out}'s array. Null as for {@link #decrypt}.
     */
    public RawBsonDocument decryptBody(byte[] body, int length, CollectionKeys keys, ByteBuf out) {
        BsonCursor c = new BsonCursor(body, 0, length);
        if (!c.find(OK) || c.numberValue() != 1.0 || documents == null) {
            return null;
        }
        buf = body;
        bufLength = length;
        if (!body(out) || keys.hasPending()) {
            return null;
        }
        byte[] bytes = out.array();
        int start = out.arrayOffset() + out.readerIndex();
        BsonCursor.validate(BsonCursor.DOCUMENT, bytes, start, start + out.readableBytes(), BsonLimits.MAX_DEPTH);
        return new RawBsonDocument(bytes, start, out.readableBytes());
    }

    /** The body: the one field holding documents is decrypted, the rest copied. */
    private boolean body(ByteBuf out) {
        byte[] target = null;
        BsonCursor find = new BsonCursor(buf, 0, bufLength);
        if (find.find(CURSOR) && find.type == BsonCursor.DOCUMENT) {
            target = CURSOR;
        } else {
            find = new BsonCursor(buf, 0, bufLength);
            while (find.next() && target == null) {
                if (find.nameIs(distinct ? VALUES : VALUE)) {
                    target = distinct ? VALUES : VALUE;
                }
            }
        }
        BsonCursor c = new BsonCursor(buf, 0, bufLength);
        int mark = OpMsgWriter.beginDocument(out);
        boolean changed = false;
        while (c.next()) {
            if (target != null && c.nameIs(target)) {
                target = null; // only the first of that name, as a server would read it
                if (c.nameIs(CURSOR)) {
                    OpMsgWriter.elementHeader(out, c.type, c);
                    changed = cursor(c.valueStart, c.valueEnd, out);
                } else if (distinct) {
                    changed = element(c, documents, out, 0); // each value stands where the key points
                } else {
                    returned = c.type == BsonCursor.NULL ? 0 : 1;
                    changed = c.type == BsonCursor.DOCUMENT ? documentElement(c, documents, out) : copy(c, out);
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
                OpMsgWriter.elementHeader(out, c.type, c);
                changed = batch(c.valueStart, c.valueEnd, out);
            } else {
                OpMsgWriter.copyElement(out, c);
            }
        }
        OpMsgWriter.endDocument(out, mark);
        return changed;
    }

    /** A batch: each element a returned document. */
    private boolean batch(int start, int end, ByteBuf out) {
        BsonCursor c = new BsonCursor(buf, start, end);
        int mark = OpMsgWriter.beginDocument(out);
        boolean changed = false;
        long n = 0;
        while (c.next()) {
            n++;
            changed |= c.type == BsonCursor.DOCUMENT ? documentElement(c, documents, out) : copy(c, out);
        }
        returned = n;
        OpMsgWriter.endDocument(out, mark);
        return changed;
    }

    private static boolean copy(BsonCursor c, ByteBuf out) {
        OpMsgWriter.copyElement(out, c);
        return false;
    }

    private boolean documentElement(BsonCursor c, ReadShape.Node node, ByteBuf out) {
        OpMsgWriter.elementHeader(out, c.type, c);
        return document(c.valueStart, c.valueEnd, node, out, 0);
    }

    /** A document whose names stand under this node. */
    private boolean document(int start, int end, ReadShape.Node node, ByteBuf out, int depth) {
        if (depth > BsonLimits.MAX_DEPTH) {
            throw new BSONException("documents nested too deeply to decode");
        }
        BsonCursor c = new BsonCursor(buf, start, end);
        int mark = OpMsgWriter.beginDocument(out);
        boolean changed = false;
        while (c.next()) {
            ReadShape.Node child = node.child(buf, c.nameStart, c.nameEnd);
            if (child != null) {
                changed |= element(c, child, out, depth + 1);
            } else if (node.allFields() && !EncryptedPaths.isId(buf, c.nameStart, c.nameEnd)) {
                int len = topLevel.of(buf, c.nameStart, c.nameEnd);
                changed |= field(c, null, topLevel.bytes(), len, out, depth + 1);
            } else if (!node.allFields() && PathSegments.transparent(buf, c.nameStart, c.nameEnd)) {
                changed |= element(c, node, out, depth + 1); // a name read as an array index, as writers read it
            } else {
                OpMsgWriter.copyElement(out, c); // no policy field here: as stored, whatever it holds
            }
        }
        OpMsgWriter.endDocument(out, mark);
        return changed;
    }

    /** An element standing at this node. */
    private boolean element(BsonCursor c, ReadShape.Node node, ByteBuf out, int depth) {
        if (node.tags()) {
            return true; // the proxy's search tags: never returned
        }
        if (node.isField()) {
            return field(c, node, node.context(), node.context().length, out, depth);
        }
        if (c.type == BsonCursor.DOCUMENT) {
            OpMsgWriter.elementHeader(out, c.type, c);
            return document(c.valueStart, c.valueEnd, node, out, depth);
        }
        if (c.type == BsonCursor.ARRAY) {
            return array(c, node, out, depth); // array indexes are passed over, as in policy paths
        }
        OpMsgWriter.copyElement(out, c); // a scalar where the policy expects documents: no field there
        return false;
    }

    private boolean array(BsonCursor c, ReadShape.Node node, ByteBuf out, int depth) {
        if (depth > BsonLimits.MAX_DEPTH) {
            throw new BSONException("documents nested too deeply to decode");
        }
        OpMsgWriter.elementHeader(out, c.type, c);
        BsonCursor e = new BsonCursor(buf, c.valueStart, c.valueEnd);
        int mark = OpMsgWriter.beginDocument(out);
        boolean changed = false;
        while (e.next()) {
            changed |= element(e, node, out, depth + 1);
        }
        OpMsgWriter.endDocument(out, mark);
        return changed;
    }

    /**
     * The value of a policy field (node null: a top-level field under fields: "*", context given):
     * an envelope it may open, opened; anything else an error unless the policy allows plaintext.
     */
    private boolean field(BsonCursor c, ReadShape.Node node, byte[] context, int contextLength, ByteBuf out,
                          int depth) {
        int dataStart = c.valueStart + 5;
        int dataLength = c.valueEnd - dataStart;
        if (c.type != BsonCursor.BINARY || !EnvelopeBinary.holdsEnvelope(buf[c.valueStart + 4], buf, dataStart, dataLength)) {
            if (node != null && node.copied() && c.type == BsonCursor.ARRAY) {
                return array(c, node, out, depth); // $push of a field: an array of its envelopes
            }
            if (c.type == BsonCursor.BINARY && claimsEnvelope(buf[c.valueStart + 4], dataStart, dataLength)) {
                throw new Refusal(ProxyError.DECRYPTION_FAILED, ns + ": field '" + fieldName(node, c)
                        + "' of a returned document holds a damaged envelope (cut short, or its format byte changed)");
            }
            if ((node != null && node.copied() && c.type == BsonCursor.NULL) || policy.plaintextReads()) {
                return copy(c, out); // $first of a missing field; or data written before the policy
            }
            throw new Refusal(ProxyError.DECRYPTION_FAILED, ns + ": field '" + fieldName(node, c)
                    + "' of a returned document holds a value that is not an envelope for it (written around the "
                    + "proxy, tampered, or stored before the policy; plaintextReads: allow accepts such values while "
                    + "they are migrated)");
        }
        if (!mayOpen(dataStart)) {
            throw new Refusal(ProxyError.DECRYPTION_FAILED, ns + ": field '" + fieldName(node, c)
                    + "' of a returned document holds an envelope under a key that is neither the collection's key "
                    + "nor one of its previousKeys");
        }
        FieldCipher.Plaintext p;
        try {
            p = envelopes.open(buf, dataStart, dataLength, context, 0, contextLength);
            if (p == null) {
                OpMsgWriter.copyElement(out, c); // its key is being fetched; this reply is done again
                return false;
            }
            BsonCursor.validate(p.bsonType(), p.value(), 0, p.value().length, BsonLimits.MAX_DEPTH);
        } catch (DecryptionFailedException e) {
            throw new Refusal(ProxyError.DECRYPTION_FAILED, ns + ": decryption failed for field '" + fieldName(node, c)
                    + "' of a returned document (tampered, moved from another field or collection, or not encrypted "
                    + "by this proxy's keys)");
        } catch (BSONException e) {
            throw new Refusal(ProxyError.DECRYPTION_FAILED, ns + ": field '" + fieldName(node, c)
                    + "' decrypted to no valid BSON value");
        }
        if (node != null && masks.masks(node.field())) {
            FieldMasks.Masked m = masks.apply(node.field(), p.bsonType(), p.value());
            OpMsgWriter.elementHeader(out, m.type(), c);
            out.writeBytes(m.value());
            return true;
        }
        OpMsgWriter.elementHeader(out, p.bsonType(), c);
        out.writeBytes(p.value());
        return true;
    }

    /**
     * A binary that is not a whole envelope but says it is one (subtype 6, an envelope's format
     * byte, or a header naming one of the collection's keys): damaged, never plaintext an
     * application wrote, so not returned as stored even where plaintextReads allows plaintext.
     */
    private boolean claimsEnvelope(byte subtype, int dataStart, int dataLength) {
        return subtype == EnvelopeBinary.ENCRYPTED || Envelopes.hasFormatByte(buf, dataStart, dataLength)
                || dataLength >= Envelope.HEADER_LENGTH && mayOpen(dataStart);
    }

    /** The collection's key or one of its previous keys: checked before any key is looked up. */
    private boolean mayOpen(int envelopeStart) {
        if (Envelopes.namesKey(buf, envelopeStart, policy.keyId())) {
            return true;
        }
        for (UUID previous : policy.previousKeys()) {
            if (Envelopes.namesKey(buf, envelopeStart, previous)) {
                return true;
            }
        }
        return false;
    }

    /** The policy field a refusal names (never a value). */
    private String fieldName(ReadShape.Node node, BsonCursor c) {
        return node != null ? node.field() : new String(buf, c.nameStart, c.nameEnd - c.nameStart, StandardCharsets.UTF_8);
    }
}
