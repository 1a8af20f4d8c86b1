package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;
import org.bson.BsonDocument;
import org.bson.RawBsonDocument;

/**
 * An OP_MSG frame as the proxy first reads it, once: flags checked, checksum verified, sections
 * located, the command name (the body's first key) read in place. The body and the document
 * sequences are copied out of the frame only when somebody asks, and only once; every filter
 * and the rewriters share this one view. Valid while its frame is.
 */
public final class OpMsgView {
    /** Bits 0–15 are "required": a receiver must reject any it does not know. */
    private static final int UNKNOWN_REQUIRED_BITS = 0xFFFF & ~(OpMsg.CHECKSUM_PRESENT | OpMsg.MORE_TO_COME);

    /** Where a kind-1 section's identifier and documents lie in the frame. */
    private record SequenceAt(String identifier, int sectionStart, int docsStart, int end) {
    }

    private final Frame frame;
    private final int flags;
    private final int bodyStart;
    private final int bodyLength;
    private final List<SequenceAt> sequenceSections;
    private String commandName;
    private byte[] bodyBytes;
    private byte[][] sequenceBytes;
    private RawBsonDocument body;
    private List<DocumentSequence> sequences;
    private OpMsg decoded;
    /** Whether the body, and each sequence's documents, were checked well-formed (see {@link #wellFormed}). */
    private boolean bodyChecked;
    private boolean[] sequenceChecked;

    private OpMsgView(Frame frame, int flags, int bodyStart, int bodyLength, List<SequenceAt> sequenceSections) {
        this.frame = frame;
        this.flags = flags;
        this.bodyStart = bodyStart;
        this.bodyLength = bodyLength;
        this.sequenceSections = sequenceSections;
    }

    /** Reads and validates a whole OP_MSG frame: flags, section kinds and lengths, the checksum. */
    public static OpMsgView of(Frame frame) {
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
        if ((flags & OpMsg.CHECKSUM_PRESENT) != 0) {
            if (end - reader.position() < 4) {
                throw new WireProtocolException("OP_MSG too short for its checksum");
            }
            sectionsEnd = end - 4;
            if (buf.getIntLE(sectionsEnd) != crc32c(buf, start, sectionsEnd - start)) {
                throw new WireProtocolException("OP_MSG checksum mismatch");
            }
        }
        WireReader sections = new WireReader(buf, reader.position(), sectionsEnd);
        int bodyStart = -1;
        int bodyLength = 0;
        List<SequenceAt> seqs = List.of();
        while (sections.hasRemaining()) {
            int kind = sections.uint8("section kind");
            if (kind == 0) {
                if (bodyStart >= 0) {
                    throw new WireProtocolException("OP_MSG has more than one kind-0 section");
                }
                bodyStart = sections.position();
                bodyLength = sections.skipDocument("OP_MSG body");
            } else if (kind == 1) {
                if (seqs.isEmpty()) {
                    seqs = new ArrayList<>(2);
                }
                seqs.add(sequence(buf, sections));
            } else {
                throw new WireProtocolException("OP_MSG has unknown section kind " + kind);
            }
        }
        if (bodyStart < 0) {
            throw new WireProtocolException("OP_MSG has no kind-0 (body) section");
        }
        // the command name is read on first use: the body ends with a NUL, so it always ends
        return new OpMsgView(frame, flags, bodyStart, bodyLength, seqs);
    }

    /** A kind-1 section (its kind byte read): identifier and documents checked, the reader moved past it. */
    private static SequenceAt sequence(ByteBuf buf, WireReader sections) {
        int sectionStart = sections.position();
        int available = sections.remaining();
        int size = sections.int32("document sequence size");
        if (size < 5 || size > available) {
            throw new WireProtocolException("document sequence declares " + size + " bytes but "
                    + available + " remain in the message");
        }
        int sectionEnd = sectionStart + size;
        WireReader seq = new WireReader(buf, sections.position(), sectionEnd);
        String id = seq.cstring("document sequence identifier");
        int docsStart = seq.position();
        while (seq.hasRemaining()) {
            seq.skipDocument("document in sequence '" + id + "'");
        }
        sections.skip(sectionEnd - sections.position(), "document sequence");
        return new SequenceAt(id, sectionStart - 1, docsStart, sectionEnd);
    }

    static int crc32c(ByteBuf buf, int index, int length) {
        CRC32C crc = new CRC32C();
        crc.update(buf.nioBuffer(index, length));
        return (int) crc.getValue();
    }

    public Frame frame() {
        return frame;
    }

    public int flagBits() {
        return flags;
    }

    public boolean has(int flag) {
        return (flags & flag) != 0;
    }

    /** The body's first key ("" for an empty body): the command's name, for requests. */
    public String commandName() {
        if (commandName == null) {
            commandName = bodyLength > 5
                    ? new WireReader(frame.content(), bodyStart + 5, bodyStart + bodyLength).cstring("command name") : "";
        }
        return commandName;
    }

    public int bodyLength() {
        return bodyLength;
    }

    /**
     * Copies the body into {@code into}[0, bodyLength), not kept by the view and not checked: for a
     * reader that reuses its own buffer (and checks what it reads).
     */
    public void copyBody(byte[] into) {
        frame.content().getBytes(bodyStart, into, 0, bodyLength);
    }

    /** The body's bytes, copied out of the frame once: [0, bodyLength). */
    public byte[] bodyBytes() {
        if (bodyBytes == null) {
            bodyBytes = new byte[bodyLength];
            frame.content().getBytes(bodyStart, bodyBytes);
        }
        return bodyBytes;
    }

    /** The body as a document (lazily decoded, over {@link #bodyBytes}), checked well-formed first. */
    public RawBsonDocument body() {
        if (body == null) {
            checkBody();
            body = new RawBsonDocument(bodyBytes());
        }
        return body;
    }

    /** How deep documents may nest before the proxy decodes them (the server's own limit is far lower). */
    static final int MAX_DEPTH = 1000;

    /**
     * Checks bytes[off, off + len) is one well-formed document all the way down, before any of it is
     * handed to the driver's lazy documents: they answer a lying length inside with
     * IllegalArgumentException or IndexOutOfBoundsException, not a BSON error. The framing check in
     * {@link #of} looks at the outer lengths only, so a message that is never decoded costs nothing.
     *
     * @throws org.bson.BSONException if it is not
     */
    private static void wellFormed(byte[] bytes, int off, int len) {
        BsonCursor.validate(BsonCursor.DOCUMENT, bytes, off, off + len, MAX_DEPTH);
    }

    private void checkBody() {
        if (!bodyChecked) {
            wellFormed(bodyBytes(), 0, bodyLength);
            bodyChecked = true;
        }
    }

    private void checkSequence(int i) {
        if (sequenceChecked == null) {
            sequenceChecked = new boolean[sequenceSections.size()];
        }
        if (!sequenceChecked[i]) {
            byte[] bytes = sequenceBytes(i);
            for (int at = 0; at < bytes.length; at += BsonCursor.int32(bytes, at)) {
                wellFormed(bytes, at, BsonCursor.int32(bytes, at));
            }
            sequenceChecked[i] = true;
        }
    }

    /** Whether the body has a top-level field of this name (UTF-8 bytes), looked for without decoding the body. */
    public boolean bodyHas(byte[] name) {
        return new BsonCursor(bodyBytes(), 0, bodyLength).find(name);
    }

    /** A top-level string field of the body ("$db", the collection), read without decoding the body; null if absent. */
    public String bodyString(String key) {
        BsonCursor c = new BsonCursor(bodyBytes(), 0, bodyLength);
        return c.find(key.getBytes(StandardCharsets.UTF_8)) ? c.stringValue() : null;
    }

    /** The document sequences, each document a view over one copy of its section. */
    public List<DocumentSequence> sequences() {
        if (sequences == null) {
            List<DocumentSequence> out = new ArrayList<>(sequenceSections.size());
            for (int i = 0; i < sequenceSections.size(); i++) {
                out.add(new DocumentSequence(sequenceSections.get(i).identifier(), sequenceDocuments(i)));
            }
            sequences = out;
        }
        return sequences;
    }

    public int sequenceCount() {
        return sequenceSections.size();
    }

    public String sequenceIdentifier(int i) {
        return sequenceSections.get(i).identifier();
    }

    /**
     * Sequence i's documents as bytes, documents back to back from index 0: copied out of the frame
     * once, shared by every reader (read only).
     */
    public byte[] sequenceBytes(int i) {
        if (sequenceBytes == null) {
            sequenceBytes = new byte[sequenceSections.size()][];
        }
        if (sequenceBytes[i] == null) {
            SequenceAt s = sequenceSections.get(i);
            sequenceBytes[i] = new byte[s.end() - s.docsStart()];
            frame.content().getBytes(s.docsStart(), sequenceBytes[i]);
        }
        return sequenceBytes[i];
    }

    private List<BsonDocument> sequenceDocuments(int i) {
        checkSequence(i);
        byte[] bytes = sequenceBytes(i);
        List<BsonDocument> docs = new ArrayList<>();
        for (int at = 0; at < bytes.length; ) {
            int len = BsonCursor.int32(bytes, at);
            docs.add(new RawBsonDocument(bytes, at, len));
            at += len;
        }
        return docs;
    }

    /** Copies section i (kind byte included) as it is into out. */
    public void copySequenceSection(int i, ByteBuf out) {
        SequenceAt s = sequenceSections.get(i);
        out.writeBytes(frame.content(), s.sectionStart(), s.end() - s.sectionStart());
    }

    /**
     * The message in its buildable form, read once for the filters that rewrite by document: the
     * top level of the body and of each sequence document as a map, sub-documents as raw views
     * ({@link ShallowDocuments}). A field given twice keeps its last value here: see {@link
     * #nameProblem}.
     */
    public OpMsg toOpMsg() {
        if (decoded == null) {
            checkBody();
            List<DocumentSequence> seqs = new ArrayList<>(sequenceSections.size());
            for (int i = 0; i < sequenceSections.size(); i++) {
                checkSequence(i);
                byte[] bytes = sequenceBytes(i);
                List<BsonDocument> docs = new ArrayList<>();
                for (int at = 0; at < bytes.length; at += BsonCursor.int32(bytes, at)) {
                    docs.add(ShallowDocuments.of(bytes, at, bytes.length));
                }
                seqs.add(new DocumentSequence(sequenceSections.get(i).identifier(), docs));
            }
            decoded = new OpMsg(flags, ShallowDocuments.of(bodyBytes(), 0, bodyLength), seqs);
        }
        return decoded;
    }

    /** The first field name given twice, or not valid UTF-8, in the body or a sequence document, or null. */
    public BsonCursor.NameProblem nameProblem() {
        BsonCursor.NameProblem problem = BsonCursor.nameProblem(bodyBytes(), 0, bodyLength, true);
        for (int i = 0; problem == null && i < sequenceSections.size(); i++) {
            byte[] docs = sequenceBytes(i);
            for (int at = 0; problem == null && at < docs.length; at += BsonCursor.int32(docs, at)) {
                problem = BsonCursor.nameProblem(docs, at, docs.length, true);
            }
        }
        return problem;
    }

    /**
     * The body's top level read for these names in one pass, every value in it checked well-formed all
     * the way down on the way (the body counts as checked from then on): for each name, whether the
     * body has it and its string value (null if absent or not a string).
     *
     * @throws org.bson.BSONException if the body is not well-formed
     */
    public TopLevel topLevel(String... names) {
        byte[][] wanted = new byte[names.length][];
        for (int i = 0; i < names.length; i++) {
            wanted[i] = names[i].getBytes(StandardCharsets.UTF_8);
        }
        String[] strings = new String[names.length];
        boolean[] present = new boolean[names.length];
        byte[] b = bodyBytes();
        BsonCursor c = new BsonCursor(b, 0, bodyLength);
        while (c.next()) {
            if (!bodyChecked) {
                BsonCursor.validate(c.type, b, c.valueStart, c.valueEnd, MAX_DEPTH - 1);
            }
            for (int i = 0; i < wanted.length; i++) {
                if (!present[i] && c.nameIs(wanted[i])) {
                    present[i] = true;
                    strings[i] = c.stringValue();
                }
            }
        }
        bodyChecked = true;
        return new TopLevel(strings, present);
    }

    /** What {@link #topLevel} read: per name asked for, its string value and whether it is there at all. */
    public record TopLevel(String[] strings, boolean[] present) {
    }

    /**
     * The documents of every document sequence checked well-formed all the way down (each checked
     * once, however often asked).
     *
     * @throws org.bson.BSONException naming what is malformed
     */
    public void checkSequencesWellFormed() {
        for (int i = 0; i < sequenceSections.size(); i++) {
            if (sequenceBytes != null && sequenceBytes[i] != null) {
                checkSequence(i);
                continue;
            }
            // a sequence nobody else reads (an insert forwarded as it is): checked in a scratch copy, so
            // checking it allocates nothing; read later, it is copied out and checked once more
            SequenceAt s = sequenceSections.get(i);
            int n = s.end() - s.docsStart();
            byte[] scratch = SCRATCH.get();
            if (scratch.length < n) {
                scratch = new byte[Math.max(n, scratch.length * 2)];
                if (n <= MAX_SCRATCH) {
                    SCRATCH.set(scratch);
                }
            }
            frame.content().getBytes(s.docsStart(), scratch, 0, n);
            for (int at = 0; at < n; at += BsonCursor.int32(scratch, at)) {
                wellFormed(scratch, at, BsonCursor.int32(scratch, at));
            }
        }
    }

    /**
     * Every document of the message checked well-formed all the way down: the body and each
     * sequence's documents (each checked once, however often asked).
     *
     * @throws org.bson.BSONException naming what is malformed
     */
    public void checkWellFormed() {
        checkBody();
        checkSequencesWellFormed();
    }

    /** Each event loop's buffer for checking sequences in place of a copy of their own; kept up to this size. */
    private static final int MAX_SCRATCH = 1 << 20;
    private static final ThreadLocal<byte[]> SCRATCH = ThreadLocal.withInitial(() -> new byte[16 * 1024]);

    /** A top-level name of the body given twice or not valid UTF-8 (a cheap look before the command is routed). */
    public BsonCursor.NameProblem topLevelNameProblem() {
        return BsonCursor.nameProblem(bodyBytes(), 0, bodyLength, false);
    }
}
