package dev.fleproxy.audit;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The record of a line cut short (docs/access.md, "The audit trail"): when the proxy stopped in
 * the middle of writing a line (a crash, a full disk), the next start keeps the fragment's bytes
 * as evidence, ends them with a newline, and writes right after them a line of the chain saying
 * which line of which file was cut, how long the fragment is and its SHA-256:
 * <pre>{"seq":236,"t":"…","event":"cut","file":"audit.log","line":236,"bytes":37,"sha256":"…","instance":"…","mac":"…"}</pre>
 * {@code audit verify} accepts a fragment only when its cut record follows it and matches it. The
 * fragment's own request was never answered: its answer waited for the whole batch to be on file.
 */
public final class AuditCut {
    private static final Pattern RECORD = Pattern.compile("\\{\"seq\":(\\d+),\"t\":\"[^\"]*\",\"event\":\"cut\","
            + "\"file\":(\"(?:[^\"\\\\]|\\\\.)*\"),\"line\":(\\d{1,18}),\"bytes\":(\\d{1,18}),\"sha256\":\"([0-9a-f]{64})\""
            + "(?:,\"instance\":\"[A-Za-z0-9._-]{1,64}\")?}");

    private AuditCut() {
    }

    /** What a cut record says, read from the bytes its MAC covers. */
    record Record(String file, long line, long bytes, String sha256) {
        boolean matches(long lineNo, byte[] fragment) {
            return line == lineNo && bytes == fragment.length && sha256.equals(AuditCut.sha256(fragment));
        }
    }

    /** The members of a cut record after {@code "seq"} (written by the writer's buffer, as any line's). */
    static void appendMembers(LineBuffer b, long epochMilli, String file, long line, byte[] fragment) {
        b.ascii("\"t\":\"").time(epochMilli).ascii("\",\"event\":\"cut\",\"file\":")
                .bytes(AuditLine.quote(file).getBytes(StandardCharsets.UTF_8))
                .ascii(",\"line\":").number(line).ascii(",\"bytes\":").number(fragment.length)
                .ascii(",\"sha256\":\"").ascii(sha256(fragment)).ascii("\"");
    }

    /** The cut record these covered bytes are ({@link AuditLine.Parsed#covered}), or null if they are another line. */
    static Record read(byte[] covered) {
        Matcher m = RECORD.matcher(new String(covered, StandardCharsets.UTF_8));
        if (!m.matches()) {
            return null;
        }
        return new Record(m.group(2), Long.parseLong(m.group(3)), Long.parseLong(m.group(4)), m.group(5));
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }
}
