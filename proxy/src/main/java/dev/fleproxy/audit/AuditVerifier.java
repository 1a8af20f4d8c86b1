package dev.fleproxy.audit;

import dev.fleproxy.crypto.ChainMac;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks a trail (its files in order, oldest first), byte for byte: every line is UTF-8 and
 * parses, numbers follow each other from 1, and each MAC is the chain MAC of its line after the
 * one before. The first line that fails is reported with its file and line number: a changed or
 * inserted line fails its own MAC, a removed one the number and MAC of the line after it. Without
 * the audit key nobody can write a line that passes.
 *
 * <p>A line cut short (the proxy stopped, or the disk filled, while writing it) passes only when
 * the cut record the next start wrote follows it and names it: its line number, length and
 * SHA-256 ({@link AuditCut}); each is reported. Lines cut off the end of the newest file, with no
 * start since, leave no trace in the chain: keep the count {@code audit verify} printed last, or
 * watch the proxy's audit lines metric.
 *
 * <p>Several proxies each write a trail of their own, and each line names its instance: {@link
 * #verifyChains} takes every instance's files at once and checks each instance's as one chain.
 * Within a chain, once a line names an instance every later line names the same one (lines from
 * before lines named their instance may only come first).
 */
public final class AuditVerifier {
    private AuditVerifier() {
    }

    /** ok: lines of the chain checked, and each cut found (file, line, bytes, the record's seq); else the first broken line. */
    public record Result(boolean ok, long lines, String problem, List<String> cuts) {
    }

    /** One instance's chain and how it fared; instance null for lines that name none. */
    public record Checked(String instance, List<Path> files, Result result) {
    }

    /**
     * The files of one or more instances, each instance's oldest first (their order among each
     * other does not matter): grouped by the instance their last whole line names, files whose lines
     * name none going in front of the next instance's (a proxy that began to name itself on an
     * upgrade), and each group checked as a chain.
     */
    public static List<Checked> verifyChains(List<Path> files, ChainMac mac) throws IOException {
        java.util.Map<String, List<Path>> groups = new java.util.LinkedHashMap<>();
        List<Path> unnamed = new ArrayList<>();
        for (Path p : files) {
            String instance = lastInstance(p);
            if (instance == null) {
                unnamed.add(p);
                continue;
            }
            List<Path> group = groups.get(instance);
            if (group == null) {
                group = new ArrayList<>(unnamed);
                groups.put(instance, group);
            } else {
                group.addAll(unnamed); // lines naming no instance after named ones: the chain check says so
            }
            unnamed.clear();
            group.add(p);
        }
        List<Checked> out = new ArrayList<>();
        for (java.util.Map.Entry<String, List<Path>> g : groups.entrySet()) {
            out.add(new Checked(g.getKey(), List.copyOf(g.getValue()), verify(g.getValue(), mac)));
        }
        if (!unnamed.isEmpty()) {
            out.add(new Checked(null, List.copyOf(unnamed), verify(unnamed, mac)));
        }
        return out;
    }

    /** The instance the file's last whole line names (null: none, or no whole line). */
    private static String lastInstance(Path p) throws IOException {
        byte[] last = AuditFiles.tail(p).lastLine();
        AuditLine.Parsed parsed = last == null ? null : AuditLine.parse(last);
        return parsed == null ? null : AuditLine.instance(parsed.covered());
    }

    public static Result verify(List<Path> files, ChainMac mac) throws IOException {
        Chain chain = new Chain(mac);
        List<String> cuts = new ArrayList<>();
        for (Path p : files) {
            try (TrailLines r = new TrailLines(p)) {
                long lineNo = 1;
                for (TrailLines.Line line = r.next(); line != null; lineNo++) {
                    TrailLines.Line next = r.next();
                    AuditCut.Record cut = next != null && next.terminated() ? cutRecord(next.bytes()) : null;
                    if (cut != null) {
                        // this line is a fragment, the next its cut record: a line of the chain as any other
                        if (!cut.matches(lineNo, line.bytes())) {
                            return broken(chain, p + " line " + lineNo + ": its cut record (line " + (lineNo + 1)
                                    + ") does not describe it: it names line " + cut.line() + " of " + cut.bytes()
                                    + " bytes, and their SHA-256 (" + line.bytes().length + " bytes here)");
                        }
                        String problem = chain.check(next.bytes());
                        if (problem != null) {
                            return broken(chain, p + " line " + (lineNo + 1) + ": " + problem);
                        }
                        cuts.add(p + " line " + lineNo + " (" + line.bytes().length + " bytes), recorded at seq "
                                + (chain.expected - 1));
                        line = r.next();
                        lineNo++;
                        continue;
                    }
                    String where = p + " line " + lineNo + ": ";
                    if (!line.terminated()) {
                        return broken(chain, where + "cut short (no newline at its end), and no cut record follows "
                                + "it: the proxy may still be writing it, or stopped while it did (its next start "
                                + "records the cut)");
                    }
                    String problem = chain.check(line.bytes());
                    if (problem == null && cutRecord(line.bytes()) != null) {
                        problem = "a cut record, but the line before it is not the fragment it names";
                    }
                    if (problem != null) {
                        return broken(chain, where + problem);
                    }
                    line = next;
                }
            }
        }
        return new Result(true, chain.expected - 1, null, List.copyOf(cuts));
    }

    private static Result broken(Chain chain, String problem) {
        return new Result(false, chain.expected - 1, problem, List.of());
    }

    /** What a cut record says, if these bytes are one (its MAC is checked as the chain's). */
    private static AuditCut.Record cutRecord(byte[] line) {
        AuditLine.Parsed parsed = AuditLine.parse(line);
        return parsed == null ? null : AuditCut.read(parsed.covered());
    }

    /** The chain as far as checked: the last MAC and the number due next. */
    private static final class Chain {
        private final ChainMac mac;
        private final CharsetDecoder utf8 = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
        byte[] previous = new byte[ChainMac.LENGTH];
        long expected = 1;
        /** The instance the chain's lines name, once one has (null before). */
        String instance;

        Chain(ChainMac mac) {
            this.mac = mac;
        }

        /** Checks the line as the next of the chain and takes it; null if it holds, else why not. */
        String check(byte[] line) {
            try {
                utf8.reset().decode(ByteBuffer.wrap(line));
            } catch (CharacterCodingException e) {
                return "not UTF-8: it was changed";
            }
            AuditLine.Parsed parsed = AuditLine.parse(line);
            if (parsed == null) {
                boolean cr = false;
                for (byte b : line) {
                    cr |= b == '\r';
                }
                return "not an audit line (no seq or mac" + (cr ? "; it holds a carriage return" : "") + ")";
            }
            if (!ChainMac.same(mac.next(previous, parsed.covered()), parsed.mac())) {
                return parsed.seq() != expected
                        ? "its number is " + parsed.seq() + " where " + expected + " was due: a line is missing "
                        + "before it, or it was inserted"
                        : "its MAC does not match: it was changed or inserted, or the line before it was";
            }
            if (parsed.seq() != expected) {
                return "numbered " + parsed.seq() + " where " + expected + " was due";
            }
            String named = AuditLine.instance(parsed.covered());
            if (instance != null && !instance.equals(named)) {
                return (named == null ? "names no instance" : "names instance " + named) + " in the chain of "
                        + instance + " (each instance writes a trail of its own)";
            }
            instance = named;
            previous = parsed.mac();
            expected++;
            return null;
        }
    }
}
