package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;
import org.bson.BsonDocument;

/**
 * OP_MSG (opcode 2013): flagBits, exactly one kind-0 section (the command or reply body), any
 * number of kind-1 document sequences, and an optional CRC-32C trailer.
 */
public record OpMsg(int flagBits, BsonDocument body, List<DocumentSequence> sequences) implements WireMessage {
    public static final int CHECKSUM_PRESENT = 1;
    public static final int MORE_TO_COME = 1 << 1;
    public static final int EXHAUST_ALLOWED = 1 << 16;
    /** Bits 0–15 are "required": a receiver must reject any it does not know. */
    private static final int UNKNOWN_REQUIRED_BITS = 0xFFFF & ~(CHECKSUM_PRESENT | MORE_TO_COME);

    public OpMsg {
        sequences = List.copyOf(sequences);
    }

    public OpMsg(int flagBits, BsonDocument body) {
        this(flagBits, body, List.of());
    }

    @Override
    public int opCode() {
        return OpCode.OP_MSG;
    }

    public boolean has(int flag) {
        return (flagBits & flag) != 0;
    }

    public OpMsg withBody(BsonDocument newBody) {
        return new OpMsg(flagBits, newBody, sequences);
    }

    public static boolean isMoreToCome(Frame frame) {
        return frame.opCode() == OpCode.OP_MSG
                && (frame.content().getIntLE(frame.content().readerIndex() + MsgHeader.SIZE) & MORE_TO_COME) != 0;
    }

    /** Parses and validates a whole OP_MSG frame, checksum included. */
    public static OpMsg parse(Frame frame) {
        List<DocumentSequence> sequences = new ArrayList<>();
        BsonDocument[] body = new BsonDocument[1];
        int flags = walk(frame, (reader, kind) -> {
            if (kind == 0) {
                body[0] = reader.document("OP_MSG body");
            } else {
                int sectionEnd = sequenceEnd(reader);
                WireReader seq = new WireReader(frame.content(), reader.position(), sectionEnd);
                String id = seq.cstring("document sequence identifier");
                List<BsonDocument> docs = new ArrayList<>();
                while (seq.hasRemaining()) {
                    docs.add(seq.document("document in sequence '" + id + "'"));
                }
                reader.skip(sectionEnd - reader.position(), "document sequence");
                sequences.add(new DocumentSequence(id, docs));
            }
        });
        return new OpMsg(flags, body[0], sequences);
    }

    /**
     * The command name (first key of the body) without copying the message, after checking the
     * same structure {@link #parse} checks. Used on every request to decide whether anybody needs
     * to look closer.
     */
    public static String peekCommandName(Frame frame) {
        String[] name = new String[1];
        walk(frame, (reader, kind) -> {
            if (kind == 0) {
                int start = reader.position();
                int len = reader.skipDocument("OP_MSG body");
                if (len > 5) {
                    WireReader element = new WireReader(frame.content(), start + 5, start + len);
                    name[0] = element.cstring("command name");
                } else {
                    name[0] = "";
                }
            } else {
                reader.skip(sequenceEnd(reader) - reader.position(), "document sequence");
            }
        });
        return name[0];
    }

    /**
     * The body (kind-0 section) alone, copied; document sequences are skipped, not copied. For
     * looking at a command's fields ($db, the collection) before deciding whether to parse it all.
     */
    public static BsonDocument peekBody(Frame frame) {
        BsonDocument[] body = new BsonDocument[1];
        walk(frame, (reader, kind) -> {
            if (kind == 0) {
                body[0] = reader.document("OP_MSG body");
            } else {
                reader.skip(sequenceEnd(reader) - reader.position(), "document sequence");
            }
        });
        return body[0];
    }

    private interface SectionVisitor {
        void section(WireReader reader, int kind);
    }

    /** Reads a kind-1 section's size and returns where the section ends, after checking it. */
    private static int sequenceEnd(WireReader reader) {
        int sectionStart = reader.position();
        int available = reader.remaining();
        int size = reader.int32("document sequence size");
        if (size < 5 || size > available) {
            throw new WireProtocolException("document sequence declares " + size + " bytes but "
                    + available + " remain in the message");
        }
        return sectionStart + size;
    }

    /** Walks the sections, validating flags, section kinds, lengths and the checksum. */
    private static int walk(Frame frame, SectionVisitor visitor) {
        ByteBuf buf = frame.content();
        int start = buf.readerIndex();
        int end = start + frame.length();
        WireReader reader = WireReader.afterHeader(frame);
        int flags = reader.int32("OP_MSG flagBits");
        if ((flags & UNKNOWN_REQUIRED_BITS) != 0) {
            throw new WireProtocolException("OP_MSG has unknown required flag bits 0x"
                    + Integer.toHexString(flags & UNKNOWN_REQUIRED_BITS));
        }
        int sectionsEnd = end;
        if ((flags & CHECKSUM_PRESENT) != 0) {
            if (end - reader.position() < 4) {
                throw new WireProtocolException("OP_MSG too short for its checksum");
            }
            sectionsEnd = end - 4;
            int expected = buf.getIntLE(sectionsEnd);
            int actual = crc32c(buf, start, sectionsEnd - start);
            if (expected != actual) {
                throw new WireProtocolException("OP_MSG checksum mismatch");
            }
        }
        WireReader sections = new WireReader(buf, reader.position(), sectionsEnd);
        int bodies = 0;
        while (sections.hasRemaining()) {
            int kind = sections.uint8("section kind");
            if (kind == 0) {
                bodies++;
                if (bodies > 1) {
                    throw new WireProtocolException("OP_MSG has more than one kind-0 section");
                }
            } else if (kind != 1) {
                throw new WireProtocolException("OP_MSG has unknown section kind " + kind);
            }
            visitor.section(sections, kind);
        }
        if (bodies == 0) {
            throw new WireProtocolException("OP_MSG has no kind-0 (body) section");
        }
        return flags;
    }

    static int crc32c(ByteBuf buf, int index, int length) {
        CRC32C crc = new CRC32C();
        crc.update(buf.nioBuffer(index, length));
        return (int) crc.getValue();
    }

    @Override
    public ByteBuf encode(ByteBufAllocator alloc, int requestId, int responseTo) {
        ByteBuffer bodyBytes = BsonBytes.encode(body);
        List<byte[]> ids = new ArrayList<>(sequences.size());
        List<List<ByteBuffer>> docs = new ArrayList<>(sequences.size());
        long size = MsgHeader.SIZE + 4L + 1 + bodyBytes.remaining();
        for (DocumentSequence seq : sequences) {
            byte[] id = seq.identifier().getBytes(StandardCharsets.UTF_8);
            List<ByteBuffer> encoded = new ArrayList<>(seq.documents().size());
            long seqSize = 4L + id.length + 1;
            for (BsonDocument d : seq.documents()) {
                ByteBuffer b = BsonBytes.encode(d);
                encoded.add(b);
                seqSize += b.remaining();
            }
            ids.add(id);
            docs.add(encoded);
            size += 1 + seqSize;
        }
        boolean checksum = has(CHECKSUM_PRESENT);
        if (checksum) {
            size += 4;
        }
        if (size > Integer.MAX_VALUE) {
            throw new WireProtocolException("encoded OP_MSG would be " + size + " bytes");
        }
        ByteBuf out = alloc.buffer((int) size);
        int start = out.writerIndex();
        new MsgHeader((int) size, requestId, responseTo, OpCode.OP_MSG).writeTo(out);
        out.writeIntLE(flagBits);
        out.writeByte(0);
        BsonBytes.write(out, bodyBytes);
        for (int i = 0; i < ids.size(); i++) {
            out.writeByte(1);
            int sizeAt = out.writerIndex();
            out.writeIntLE(0);
            out.writeBytes(ids.get(i)).writeByte(0);
            for (ByteBuffer b : docs.get(i)) {
                BsonBytes.write(out, b);
            }
            out.setIntLE(sizeAt, out.writerIndex() - sizeAt);
        }
        if (checksum) {
            out.writeIntLE(crc32c(out, start, out.writerIndex() - start));
        }
        return out;
    }
}
