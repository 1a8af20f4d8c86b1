package dev.fleproxy.audit;

import java.nio.charset.StandardCharsets;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;

/**
 * The bytes of the audit line being built, reused from line to line by the writer thread: the
 * line goes from here to the MAC and the file without a String in between. Time stamps are
 * written as {@code 2026-11-26T06:27:30.805Z} (UTC, milliseconds), the part up to
 * the seconds encoded once per second.
 */
final class LineBuffer {
    private static final DateTimeFormatter SECONDS = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss");
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    private byte[] bytes = new byte[1024];
    private int length;
    private long second = Long.MIN_VALUE;
    private byte[] secondText;

    byte[] array() {
        return bytes;
    }

    int length() {
        return length;
    }

    /** Back to {@code length} bytes (0: empty). */
    LineBuffer truncate(int to) {
        length = to;
        return this;
    }

    /** ASCII text (the line's own punctuation and member names). */
    LineBuffer ascii(String s) {
        room(s.length());
        for (int i = 0; i < s.length(); i++) {
            bytes[length++] = (byte) s.charAt(i);
        }
        return this;
    }

    LineBuffer bytes(byte[] b) {
        return bytes(b, b.length);
    }

    /** The first {@code count} bytes of {@code b}. */
    LineBuffer bytes(byte[] b, int count) {
        room(count);
        System.arraycopy(b, 0, bytes, length, count);
        length += count;
        return this;
    }

    LineBuffer number(long n) {
        if (n < 0) {
            room(1);
            bytes[length++] = '-';
            if (n == Long.MIN_VALUE) {
                return ascii("9223372036854775808");
            }
            n = -n;
        }
        int digits = 1;
        for (long v = n; v >= 10; v /= 10) {
            digits++;
        }
        room(digits);
        for (int i = length + digits - 1; i >= length; i--) {
            bytes[i] = (byte) ('0' + n % 10);
            n /= 10;
        }
        length += digits;
        return this;
    }

    LineBuffer time(long epochMilli) {
        long epochSecond = Math.floorDiv(epochMilli, 1000);
        int milli = (int) Math.floorMod(epochMilli, 1000);
        if (epochSecond != second) {
            second = epochSecond;
            secondText = SECONDS.format(LocalDateTime.ofEpochSecond(epochSecond, 0, ZoneOffset.UTC))
                    .getBytes(StandardCharsets.US_ASCII);
        }
        bytes(secondText);
        room(5);
        bytes[length++] = '.';
        bytes[length++] = (byte) ('0' + milli / 100);
        bytes[length++] = (byte) ('0' + milli / 10 % 10);
        bytes[length++] = (byte) ('0' + milli % 10);
        bytes[length++] = 'Z';
        return this;
    }

    LineBuffer hex(byte[] b, int count) {
        room(2 * count);
        for (int i = 0; i < count; i++) {
            bytes[length++] = HEX[(b[i] >> 4) & 0xf];
            bytes[length++] = HEX[b[i] & 0xf];
        }
        return this;
    }

    private void room(int more) {
        if (length + more > bytes.length) {
            bytes = Arrays.copyOf(bytes, Math.max(2 * bytes.length, length + more));
        }
    }
}
