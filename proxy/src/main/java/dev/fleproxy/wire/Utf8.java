package dev.fleproxy.wire;

/**
 * Whether bytes are well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past
 * U+10FFFF), as BSON requires of names and strings. Java's decoder replaces bad bytes with U+FFFD
 * instead of failing, so a name that is not UTF-8 would be read as another name than the server
 * sees: the proxy refuses such names where it decides by them.
 */
public final class Utf8 {
    private Utf8() {
    }

    public static boolean isValid(byte[] b, int from, int to) {
        int i = from;
        while (i < to) {
            int c = b[i] & 0xFF;
            if (c < 0x80) {
                i++;
                continue;
            }
            int n;
            int min;
            if (c >= 0xC2 && c <= 0xDF) {
                n = 1;
                min = 0x80;
            } else if (c >= 0xE0 && c <= 0xEF) {
                n = 2;
                min = 0x800;
            } else if (c >= 0xF0 && c <= 0xF4) {
                n = 3;
                min = 0x10000;
            } else {
                return false; // a continuation byte first, an overlong lead (C0, C1), or past F4
            }
            if (i + n >= to) {
                return false; // cut short
            }
            int cp = c & (0x3F >> n);
            for (int k = 1; k <= n; k++) {
                int cc = b[i + k] & 0xFF;
                if ((cc & 0xC0) != 0x80) {
                    return false;
                }
                cp = (cp << 6) | (cc & 0x3F);
            }
            if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                return false;
            }
            i += n + 1;
        }
        return true;
    }
}
