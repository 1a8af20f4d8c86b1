package dev.fleproxy.audit;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * One line of the audit trail: a JSON object whose last member is {@code "mac"}, the chain MAC of
 * the line as it reads without that member (its bytes up to the last member, then '}'):
 * <pre>{"seq":1,"t":"2026-11-26T06:30:00.123Z",…,"mac":"64 hex digits"}</pre>
 */
public final class AuditLine {
    private static final String MAC = ",\"mac\":\"";

    private AuditLine() {
    }

    /** What the MAC covers and the MAC itself, from a line as read; null if it has no MAC member. */
    public record Parsed(byte[] covered, byte[] mac, long seq) {
    }

    public static Parsed parse(String line) {
        int at = line.lastIndexOf(MAC);
        if (at < 0 || !line.startsWith("{\"seq\":") || !line.endsWith("\"}") || line.length() - at - MAC.length() - 2 != 64) {
            return null;
        }
        byte[] mac;
        long seq;
        try {
            mac = HexFormat.of().parseHex(line, at + MAC.length(), line.length() - 2);
            int comma = line.indexOf(',');
            seq = Long.parseLong(line.substring("{\"seq\":".length(), comma < 0 ? at : comma));
        } catch (IllegalArgumentException e) {
            return null;
        }
        return new Parsed((line.substring(0, at) + "}").getBytes(StandardCharsets.UTF_8), mac, seq);
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
