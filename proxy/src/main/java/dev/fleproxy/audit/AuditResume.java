package dev.fleproxy.audit;

import dev.fleproxy.crypto.ChainMac;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a trail's chain goes on from at start: the last whole line of the newest file (its MAC
 * and number) and the next rotated file's number. A newest file that ends in a line cut short
 * (the process stopped mid-write, the disk filled) does not stop the start: the cut is recorded
 * ({@link AuditCut}) and the chain goes on after the record. A newest file whose last whole line
 * is not an audit line does: {@link IllegalStateException}, one line saying which file; so does a
 * trail whose last line names another instance (each instance's trail is a chain of its own).
 */
final class AuditResume {
    private static final Logger log = LoggerFactory.getLogger(AuditResume.class);

    /** The chain's end: the MAC and number of its last line (32 zero bytes and 0 for none). */
    record End(byte[] mac, long seq, int nextRotated) {
    }

    private AuditResume() {
    }

    /** @param instance the name this proxy writes in its lines (null: none, as before lines named one) */
    static End of(Path file, ChainMac mac, boolean fsync, String instance) throws IOException {
        List<Path> files = new ArrayList<>(AuditFiles.rotated(file));
        int nextRotated = files.isEmpty() ? 1 : AuditFiles.number(files.get(files.size() - 1), file) + 1;
        if (Files.exists(file) && Files.size(file) > 0) {
            files.add(file);
        }
        if (files.isEmpty()) {
            return new End(new byte[ChainMac.LENGTH], 0, nextRotated);
        }
        Path newest = files.get(files.size() - 1);
        AuditFiles.Tail tail = AuditFiles.tail(newest);
        AuditLine.Parsed last = null;
        if (tail.lastLine() != null) {
            last = lastLine(newest, tail.lastLine());
        } else if (files.size() > 1) {
            // nothing whole in it (cut in its first line): the chain ends in the file before
            Path before = files.get(files.size() - 2);
            AuditFiles.Tail earlier = AuditFiles.tail(before);
            if (earlier.lastLine() == null || earlier.fragment().length > 0) {
                throw new IllegalStateException(before + " does not end in a whole audit line; the chain cannot go "
                        + "on from it (check the trail with audit verify)");
            }
            last = lastLine(before, earlier.lastLine());
        }
        String writer = last == null ? null : AuditLine.instance(last.covered());
        if (writer != null && !writer.equals(instance)) {
            throw new IllegalStateException(file + " is the trail of instance " + writer + ", and this proxy is "
                    + (instance == null ? "unnamed" : instance) + ": give each instance an audit.file of its own (or "
                    + "this one instance: " + writer + " if it is the same proxy renamed)");
        }
        End end = last == null ? new End(new byte[ChainMac.LENGTH], 0, nextRotated)
                : new End(last.mac(), last.seq(), nextRotated);
        return tail.fragment().length > 0 ? recordCut(newest, tail, end, mac, fsync, instance) : end;
    }

    private static AuditLine.Parsed lastLine(Path p, byte[] bytes) {
        AuditLine.Parsed last = AuditLine.parse(bytes);
        if (last == null) {
            throw new IllegalStateException(p + " ends in a line that is not an audit line; the chain cannot go on "
                    + "from it (check the trail with audit verify, then move the file aside)");
        }
        return last;
    }

    /**
     * Ends the fragment with a newline (its bytes kept, as evidence) and writes the cut record
     * after it, chained to the last whole line, in one write; if that fails (the disk still full)
     * the file is put back as it was, so that a later start finds the same fragment.
     */
    private static End recordCut(Path p, AuditFiles.Tail tail, End end, ChainMac mac, boolean fsync, String instance)
            throws IOException {
        LineBuffer line = new LineBuffer();
        line.ascii("{\"seq\":").number(end.seq() + 1).ascii(",");
        AuditCut.appendMembers(line, System.currentTimeMillis(), p.getFileName().toString(), tail.fragmentLine(),
                tail.fragment());
        line.bytes(AuditLine.instanceMember(instance)).ascii("}");
        byte[] recordMac = new byte[ChainMac.LENGTH];
        mac.next(end.mac(), line.array(), line.length(), recordMac);
        line.truncate(line.length() - 1).ascii(",\"mac\":\"").hex(recordMac, ChainMac.LENGTH).ascii("\"}\n");
        ByteBuffer b = ByteBuffer.allocate(1 + line.length()).put((byte) '\n').put(line.array(), 0, line.length()).flip();
        try (FileChannel f = FileChannel.open(p, StandardOpenOption.WRITE)) {
            try {
                while (b.hasRemaining()) {
                    f.write(b, tail.length() + b.position());
                }
                if (fsync) {
                    f.force(false);
                }
            } catch (IOException e) {
                f.truncate(tail.length());
                throw new IOException("cannot record the line cut short at its end (" + e.getMessage() + ")", e);
            }
        }
        log.warn("audit trail: {} ended in a line cut short (line {}, {} bytes: the proxy stopped, or the disk filled, "
                + "while writing it; its request was not answered); the bytes are kept, and the cut recorded at seq {}",
                p, tail.fragmentLine(), tail.fragment().length, end.seq() + 1);
        return new End(recordMac, end.seq() + 1, end.nextRotated());
    }
}
