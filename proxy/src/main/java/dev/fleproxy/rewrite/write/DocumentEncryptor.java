package dev.fleproxy.rewrite.write;

import dev.fleproxy.policy.FieldRule;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.bson.BsonLimits;
import dev.fleproxy.rewrite.bson.BsonValueBytes;
import dev.fleproxy.rewrite.paths.CollectionContext;
import dev.fleproxy.rewrite.paths.EncryptedPaths;
import dev.fleproxy.rewrite.paths.PathSegments;
import dev.fleproxy.rewrite.query.Arguments;
import dev.fleproxy.rewrite.search.SearchTags;
import dev.fleproxy.wire.BsonBytes;
import dev.fleproxy.wire.BsonCursor;
import dev.fleproxy.wire.OpMsgWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import org.bson.BsonDocument;
import org.bson.BsonValue;
import org.bson.RawBsonDocument;

/**
 * Encrypts the policy fields of a document being written (insert, replacement, $set of a whole
 * sub-document) in one pass over its bytes: every element is copied as it is, except an
 * encrypted field, whose value bytes (exactly what the ciphertext format encrypts) become its
 * envelope, and a sub-document or array on the way to one, which is walked the same way. Nothing
 * is decoded into objects; _id is never touched. The tree-shaped callers (updates) go through the
 * same pass.
 */
public final class DocumentEncryptor {
    private DocumentEncryptor() {
    }

    /**
     * Writes the document buf[off, its end) into out with its policy fields encrypted, refusing a
     * result over 16 MiB; returns whether anything was encrypted.
     */
    static boolean write(byte[] buf, int off, int limit, CollectionContext ctx, ByteBuf out) {
        int start = out.writerIndex();
        boolean changed = document(buf, off, limit, ctx.paths.root(), true, ctx, out, 0);
        int size = out.writerIndex() - start;
        if (size > BsonLimits.MAX_DOCUMENT) {
            throw new Refusal(ProxyError.TOO_LARGE_AFTER_ENCRYPTION, ctx.ns() + ": a document would be " + size
                    + " bytes once encrypted, over MongoDB's 16 MiB document limit");
        }
        return changed;
    }

    private static boolean document(byte[] buf, int off, int limit, EncryptedPaths.Node node, boolean top,
                                    CollectionContext ctx, ByteBuf out, int depth) {
        if (depth > BsonLimits.MAX_DEPTH) {
            throw new org.bson.BSONException("documents nested too deeply to decode");
        }
        BsonCursor c = new BsonCursor(buf, off, limit);
        int mark = OpMsgWriter.beginDocument(out);
        boolean changed = false;
        boolean allFields = ctx.paths.allFields();
        // a stored document carries its indexed fields' tags (SearchTags), made here from the plaintext
        BsonDocument tags = top && !ctx.paths.searchIndexed().isEmpty() ? new BsonDocument() : null;
        while (c.next()) {
            if (tags != null && c.nameIs(TAG_FIELD)) {
                throw Refusal.command(ctx.ns(), "a document with a field '" + SearchTags.FIELD + "' (it holds the "
                        + "proxy's search tags: clients may not write it)");
            }
            FieldRule rule = null;
            EncryptedPaths.Node next = null;
            byte[] context = null;
            int contextLength = 0;
            if (allFields) {
                if (top && !EncryptedPaths.isId(buf, c.nameStart, c.nameEnd)) {
                    rule = EncryptedPaths.EVERY_FIELD;
                    contextLength = ctx.topLevel.of(buf, c.nameStart, c.nameEnd);
                    context = ctx.topLevel.bytes();
                }
            } else if (PathSegments.transparent(buf, c.nameStart, c.nameEnd)) {
                next = node; // an array index (or a name that reads like one): the same place in the policy
            } else {
                next = node.child(buf, c.nameStart, c.nameEnd);
                if (next == null) {
                    refuseDottedPolicyPath(c, node, ctx);
                }
                if (next != null && next.rule() != null) {
                    rule = next.rule();
                    context = next.context();
                    contextLength = context.length;
                    next = null;
                }
            }
            if (rule != null) {
                if (tags != null && rule.indexed()) {
                    tags.put(rule.path(), SearchTags.stored(rule, ctx.fieldTags(rule), c.type, buf, c.valueStart,
                            c.valueEnd));
                }
                encryptElement(c, rule, context, contextLength, ctx, out, depth);
                changed = true;
            } else if (next != null && next.hasChildren()
                    && (c.type == BsonCursor.DOCUMENT || c.type == BsonCursor.ARRAY)) {
                OpMsgWriter.elementHeader(out, c.type, c);
                changed |= document(buf, c.valueStart, c.valueEnd, next, false, ctx, out, depth + 1);
            } else {
                OpMsgWriter.copyElement(out, c);
            }
        }
        if (tags != null) {
            writeTags(tags, ctx, out);
            changed = true;
        }
        OpMsgWriter.endDocument(out, mark);
        return changed;
    }

    private static final byte[] TAG_FIELD = SearchTags.FIELD.getBytes(java.nio.charset.StandardCharsets.UTF_8);

    /** The {@code __fle} element: each indexed field's tags ("none" for one the document does not hold). */
    private static void writeTags(BsonDocument tags, CollectionContext ctx, ByteBuf out) {
        BsonDocument all = new BsonDocument();
        for (FieldRule r : ctx.paths.searchIndexed()) {
            BsonValue t = tags.get(r.path());
            all.put(r.path(), t != null ? t : SearchTags.absent(r, ctx.fieldTags(r)));
        }
        ByteBuffer bytes = BsonBytes.encode(all);
        out.writeByte(BsonCursor.DOCUMENT);
        out.writeBytes(TAG_FIELD);
        out.writeByte(0);
        out.writeBytes(bytes);
    }

    /**
     * A field literally named with dots ("address.street") that reads, from here, as a policy path
     * or the way to one: MongoDB stores it as one field that no path reaches, so the proxy would
     * store its value as it is under a name that says it is encrypted. Refused.
     */
    private static void refuseDottedPolicyPath(BsonCursor c, EncryptedPaths.Node node, CollectionContext ctx) {
        byte[] buf = c.buffer();
        int dot = c.nameStart;
        while (dot < c.nameEnd && buf[dot] != '.') {
            dot++;
        }
        if (dot == c.nameEnd || !node.hasChildren()) {
            return; // no dot: the name was looked up as it is
        }
        EncryptedPaths.Node n = node;
        for (String segment : c.name().split("\\.", -1)) {
            if (!PathSegments.transparent(segment)) {
                n = n.child(segment);
                if (n == null) {
                    return;
                }
                if (n.rule() != null) {
                    break;
                }
            }
        }
        String field = n.rule() != null ? n.rule().path() : Arguments.quoted(c.name());
        throw Refusal.onField(ctx.ns(), field, "a field literally named '" + Arguments.quoted(c.name()) + "' (MongoDB "
                + "stores a dotted name as one field, not at the policy's path, so it would not be encrypted there)");
    }

    private static void encryptElement(BsonCursor c, FieldRule rule, byte[] context, int contextLength,
                                       CollectionContext ctx, ByteBuf out, int depth) {
        byte[] buf = c.buffer();
        // what is stored must decode again when it is read back
        BsonCursor.validate(c.type, buf, c.valueStart, c.valueEnd, BsonLimits.MAX_DEPTH - depth);
        byte[] envelope = ctx.encryptBytes(rule, c.type, buf, c.valueStart, c.valueEnd, context, contextLength);
        OpMsgWriter.binaryElement(out, c, ctx.policy.subtype(), envelope);
    }

    // ---- the same pass for documents held as objects ----------------------------------------

    /** The document with its policy fields encrypted; the same object if it holds none. */
    public static BsonDocument encryptDocument(BsonDocument doc, CollectionContext ctx) {
        ByteBuffer in = BsonBytes.encode(doc);
        byte[] bytes;
        int off;
        if (in.hasArray() && !in.isReadOnly()) {
            bytes = in.array();
            off = in.arrayOffset() + in.position();
        } else {
            bytes = new byte[in.remaining()];
            in.duplicate().get(bytes);
            off = 0;
        }
        ByteBuf out = Unpooled.buffer(in.remaining() + 256);
        boolean changed = write(bytes, off, off + in.remaining(), ctx, out);
        if (!changed) {
            return doc;
        }
        return new RawBsonDocument(out.array(), out.arrayOffset(), out.readableBytes());
    }

    /**
     * The value found at {@code path}, a sub-document or array on the way to encrypted fields,
     * with those fields encrypted; the same object if nothing in it was.
     */
    static BsonValue encryptSubtree(BsonValue value, String path, CollectionContext ctx) {
        EncryptedPaths.Node node = ctx.paths.nodeAt(path);
        if (node == null || !(value.isDocument() || value.isArray())) {
            return value;
        }
        BsonValueBytes in = BsonValueBytes.of(value);
        ByteBuf out = Unpooled.buffer(in.bytes().length + 256);
        boolean changed = document(in.bytes(), 0, in.bytes().length, node, false, ctx, out, 0);
        if (!changed) {
            return value;
        }
        byte[] bytes = new byte[out.readableBytes()];
        out.readBytes(bytes);
        return new BsonValueBytes(in.type(), bytes).toBsonValue();
    }
}
