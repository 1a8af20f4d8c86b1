package dev.fleproxy.audit;

import dev.fleproxy.crypto.ChainMac;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Checks a trail (its files in order, oldest first): every line parses, numbers follow each other
 * from 1, and each MAC is the chain MAC of its line after the one before. The first line that
 * fails is reported with its file and line number: a changed or inserted line fails its own MAC,
 * a removed one the number and MAC of the line after it. Without the audit key nobody can write a
 * line that passes. (Lines cut off the end of the newest file leave no trace in the chain: keep
 * the count {@code audit verify} printed last, or the proxy's audit_lines_written metric.)
 */
public final class AuditVerifier {
    private AuditVerifier() {
    }

    /** ok: lines checked; else the first broken line. */
    public record Result(boolean ok, long lines, String problem) {
    }

    public static Result verify(List<Path> files, ChainMac mac) throws IOException {
        byte[] previous = new byte[ChainMac.LENGTH];
        long expected = 1;
        for (Path p : files) {
            try (BufferedReader r = Files.newBufferedReader(p, StandardCharsets.UTF_8)) {
                long lineNo = 0;
                for (String line; (line = r.readLine()) != null; ) {
                    lineNo++;
                    String where = p + " line " + lineNo;
                    AuditLine.Parsed parsed = AuditLine.parse(line);
                    if (parsed == null) {
                        return new Result(false, expected - 1, where + ": not an audit line (no seq or mac)");
                    }
                    if (!ChainMac.same(mac.next(previous, parsed.covered()), parsed.mac())) {
                        String why = parsed.seq() != expected
                                ? "its number is " + parsed.seq() + " where " + expected + " was due: a line is missing "
                                + "before it, or it was inserted"
                                : "its MAC does not match: it was changed or inserted, or the line before it was";
                        return new Result(false, expected - 1, where + ": " + why);
                    }
                    if (parsed.seq() != expected) {
                        return new Result(false, expected - 1, where + ": numbered " + parsed.seq() + " where "
                                + expected + " was due");
                    }
                    previous = parsed.mac();
                    expected++;
                }
            }
        }
        return new Result(true, expected - 1, null);
    }
}
