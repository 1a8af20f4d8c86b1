package dev.fleproxy.audit;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/** The files of a trail: FILE.000001, FILE.000002, … (oldest first) and FILE, the one being written. */
final class AuditFiles {
    private AuditFiles() {
    }

    static Path rotatedName(Path file, int n) {
        return file.resolveSibling(file.getFileName() + "." + String.format("%06d", n));
    }

    /** The number of a rotated file of this trail, or -1 if it is not one. */
    static int number(Path p, Path file) {
        String prefix = file.getFileName() + ".";
        String name = p.getFileName().toString();
        if (!name.startsWith(prefix) || !name.substring(prefix.length()).matches("\\d{6,}")) {
            return -1;
        }
        return Integer.parseInt(name.substring(prefix.length()));
    }

    static List<Path> rotated(Path file) throws IOException {
        List<Path> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(file.getParent())) {
            s.filter(p -> number(p, file) > 0).forEach(out::add);
        }
        out.sort((a, b) -> Integer.compare(number(a, file), number(b, file)));
        return out;
    }

    /**
     * The end of a file as the chain resumes from it: its last whole line (null if it has none),
     * and the bytes after that line's '\n' (empty when the file ends in a whole line; else a
     * fragment: the writer stopped in the middle of a line), which is line {@code fragmentLine}.
     */
    record Tail(byte[] lastLine, byte[] fragment, long fragmentLine, long length) {
    }

    static Tail tail(Path p) throws IOException {
        try (FileChannel f = FileChannel.open(p, StandardOpenOption.READ)) {
            long end = f.size();
            long lastNewline = previousNewline(f, end);
            byte[] fragment = read(f, lastNewline + 1, end);
            byte[] lastLine = null;
            if (lastNewline >= 0) {
                long before = previousNewline(f, lastNewline);
                lastLine = read(f, before + 1, lastNewline);
            }
            long fragmentLine = fragment.length == 0 ? 0 : newlines(f, lastNewline + 1) + 1;
            return new Tail(lastLine, fragment, fragmentLine, end);
        }
    }

    /** The position of the last '\n' before {@code end}, or -1. */
    private static long previousNewline(FileChannel f, long end) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(8192);
        for (long to = end; to > 0; ) {
            long from = Math.max(0, to - b.capacity());
            b.clear().limit((int) (to - from));
            readFully(f, b, from);
            for (int i = (int) (to - from) - 1; i >= 0; i--) {
                if (b.get(i) == '\n') {
                    return from + i;
                }
            }
            to = from;
        }
        return -1;
    }

    /** How many '\n' the first {@code end} bytes hold. */
    private static long newlines(FileChannel f, long end) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(64 * 1024);
        long n = 0;
        for (long from = 0; from < end; from += b.limit()) {
            b.clear().limit((int) Math.min(b.capacity(), end - from));
            readFully(f, b, from);
            for (int i = 0; i < b.limit(); i++) {
                if (b.get(i) == '\n') {
                    n++;
                }
            }
        }
        return n;
    }

    private static byte[] read(FileChannel f, long from, long to) throws IOException {
        if (to - from > Integer.MAX_VALUE - 8) {
            throw new IOException("a line of " + (to - from) + " bytes");
        }
        ByteBuffer b = ByteBuffer.allocate((int) (to - from));
        readFully(f, b, from);
        return b.array();
    }

    private static void readFully(FileChannel f, ByteBuffer b, long at) throws IOException {
        while (b.hasRemaining()) {
            int n = f.read(b, at + b.position());
            if (n < 0) {
                throw new IOException("the file shrank while it was read");
            }
        }
    }
}
