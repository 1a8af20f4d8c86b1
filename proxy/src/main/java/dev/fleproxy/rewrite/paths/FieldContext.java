package dev.fleproxy.rewrite.paths;

import java.nio.charset.StandardCharsets;

/**
 * The v2 context of a top-level field under {@code fields: "*"}, whose name is only known from the
 * document: UTF-8(namespace) ‖ 0x00 ‖ name ‖ 0x00 (docs/envelope-format.md), written into one buffer reused
 * for every field of a message, so no field costs an allocation. Names come from BSON, which
 * cannot hold 0x00 in a name.
 */
public final class FieldContext {
    private final int prefix;
    private byte[] bytes;

    public FieldContext(String namespace) {
        byte[] ns = namespace.getBytes(StandardCharsets.UTF_8);
        prefix = ns.length + 1;
        bytes = new byte[prefix + 64];
        System.arraycopy(ns, 0, bytes, 0, ns.length);
    }

    /** Fills the buffer for the name buf[start, end); returns the context's length. */
    public int of(byte[] buf, int start, int end) {
        int len = prefix + (end - start) + 1;
        if (len > bytes.length) {
            bytes = java.util.Arrays.copyOf(bytes, len * 2);
        }
        System.arraycopy(buf, start, bytes, prefix, end - start);
        bytes[len - 1] = 0;
        return len;
    }

    public byte[] bytes() {
        return bytes;
    }
}
