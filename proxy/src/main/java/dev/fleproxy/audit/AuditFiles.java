package dev.fleproxy.audit;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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

    /** The last line of a file, parsed; null if it does not end in a whole audit line. */
    static AuditLine.Parsed lastLine(Path p) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(p.toFile(), "r")) {
            long end = f.length();
            if (end == 0) {
                return null;
            }
            f.seek(end - 1);
            if (f.read() != '\n') {
                return null; // cut short: the writer died mid-line
            }
            long start = end - 1;
            while (start > 0) {
                f.seek(start - 1);
                if (f.read() == '\n') {
                    break;
                }
                start--;
            }
            byte[] line = new byte[(int) (end - 1 - start)];
            f.seek(start);
            f.readFully(line);
            return AuditLine.parse(new String(line, StandardCharsets.UTF_8));
        }
    }
}
