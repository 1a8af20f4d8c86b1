package dev.fleproxy.audit;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * One line of the audit trail: a JSON object whose last member is {@code "mac"}, the chain MAC of
 * the line as it reads without that member (its bytes up to the last member, then '}'):
 * <pre>{"seq":1,"t":"2026-11-26T06:30:00.123Z",…,"instance":"proxy-a","mac":"64 hex digits"}</pre>
 * Parsed from its bytes as they are on file, byte for byte: the MAC covers every byte but those of
 * the {@code mac} member, and that member must read exactly as the writer writes it (lower-case
 * hex, then {@code "}} and nothing after), so no byte of a line can change unnoticed.
 */
public final class AuditLine {
    private static final byte[] MAC = ",\"mac\":\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SEQ = "{\"seq\":".getBytes(StandardCharsets.US_ASCII);
    /** The bytes after the covered part: the mac member, its 64 hex digits and the closing {@code "}}. */
    private static final int TAIL = MAC.length + 2 * 32 + 2;

    private AuditLine() {
    }

    /** What the MAC covers and the MAC itself, from a line as read; null if it has no MAC member. */
    public record Parsed(byte[] covered, byte[] mac, long seq) {
    }

    public static Parsed parse(String line) {
        return parse(line.getBytes(StandardCharsets.UTF_8));
    }

    /** A line's bytes, without its '\n'; null unless it is shaped exactly as the writer writes lines. */
    public static Parsed parse(byte[] line) {
        int at = line.length - TAIL;
        if (at <= SEQ.length || !Arrays.equals(line, 0, SEQ.length, SEQ, 0, SEQ.length)
                || !Arrays.equals(line, at, at + MAC.length, MAC, 0, MAC.length)
                || line[line.length - 2] != '"' || line[line.length - 1] != '}') {
            return null;
        }
        for (int i = at + MAC.length; i < line.length - 2; i++) {
            byte b = line[i];
            if (!(b >= '0' && b <= '9' || b >= 'a' && b <= 'f')) {
                return null; // upper case would parse to the same MAC: not the bytes the writer wrote
            }
        }
        long seq = 0;
        int i = SEQ.length;
        for (; i < at && line[i] >= '0' && line[i] <= '9' && i - SEQ.length < 18; i++) {
            seq = seq * 10 + (line[i] - '0');
        }
        if (i == SEQ.length || i < at && line[i] != ',') {
            return null;
        }
        byte[] covered = Arrays.copyOf(line, at + 1);
        covered[at] = '}';
        byte[] mac = HexFormat.of().parseHex(new String(line, at + MAC.length, 64, StandardCharsets.US_ASCII));
        return new Parsed(covered, mac, seq);
    }

    private static final byte[] INSTANCE = ",\"instance\":\"".getBytes(StandardCharsets.US_ASCII);

    /**
     * The members that name the writing instance, last before the MAC ({@code ,"instance":"NAME"}):
     * a name holds no character a JSON string escapes (config.InstanceName).
     */
    static byte[] instanceMember(String instance) {
        return instance == null ? new byte[0]
                : (",\"instance\":\"" + instance + "\"").getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * The instance a line names, from the bytes its MAC covers ({@link Parsed#covered}); null for a
     * line written before lines named their instance. Unambiguous: inside a JSON string a quote is
     * escaped, so {@code ,"instance":"} can only be the member itself.
     */
    public static String instance(byte[] covered) {
        int end = covered.length - 2; // the name's closing quote, before the object's '}'
        if (end < INSTANCE.length || covered[end] != '"') {
            return null;
        }
        int start = end;
        while (start > 0 && name(covered[start - 1])) {
            start--;
        }
        int member = start - INSTANCE.length;
        return start == end || member < 0 || !Arrays.equals(covered, member, start, INSTANCE, 0, INSTANCE.length)
                ? null : new String(covered, start, end - start, StandardCharsets.US_ASCII);
    }

    private static boolean name(byte b) {
        return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '.' || b == '_' || b == '-';
    }

    /** A JSON string literal: quotes, backslashes and control characters escaped. */
    public static String quote(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
