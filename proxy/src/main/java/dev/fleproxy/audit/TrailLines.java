package dev.fleproxy.audit;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * A trail file's lines as bytes, split on '\n' alone: a '\r' (or any other byte) stays in its
 * line, so that the verifier checks exactly the bytes on file (a reader that took "\r\n" for a
 * line end would let a '\r' be added unnoticed).
 */
final class TrailLines implements AutoCloseable {
    /** A line's bytes without its '\n'; {@code terminated} false for bytes after the file's last '\n'. */
    record Line(byte[] bytes, boolean terminated) {
    }

    private final InputStream in;
    private byte[] buffer = new byte[512];

    TrailLines(Path file) throws IOException {
        this.in = new BufferedInputStream(Files.newInputStream(file), 64 * 1024);
    }

    /** The next line, or null at the end of the file (a file ending in '\n' has no empty last line). */
    Line next() throws IOException {
        int length = 0;
        for (int b = in.read(); b >= 0; b = in.read()) {
            if (b == '\n') {
                return new Line(Arrays.copyOf(buffer, length), true);
            }
            if (length == buffer.length) {
                buffer = Arrays.copyOf(buffer, 2 * buffer.length);
            }
            buffer[length++] = (byte) b;
        }
        return length == 0 ? null : new Line(Arrays.copyOf(buffer, length), false);
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
