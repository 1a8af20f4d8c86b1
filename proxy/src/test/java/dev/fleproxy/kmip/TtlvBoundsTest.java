package dev.fleproxy.kmip;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** Lengths a hostile or broken KMS may declare: each is a KmipException, never another exception. */
class TtlvBoundsTest {

    /** An item header (tag 0x420001) declaring this length, followed by `body` bytes. */
    private static byte[] item(int type, int declaredLength, int body) {
        return ByteBuffer.allocate(8 + body).put((byte) 0x42).put((byte) 0x00).put((byte) 0x01).put((byte) type)
                .putInt(declaredLength).array();
    }

    @Test
    void lengthsNear2To31AndAbove2To32MinusOneAreRefusedNotOverflowed() {
        for (int declared : new int[] {0x7FFFFFFF, 0x7FFFFFF9, 0x7FFFFFF8, 0x80000000, 0xFFFFFFF9, 0xFFFFFFF8, 0xFFFFFFFF}) {
            for (int type : new int[] {0x01, 0x04, 0x07, 0x08}) {
                byte[] b = item(type, declared, 16);
                KmipException e = assertThrows(KmipException.class, () -> Ttlv.decode(b),
                        "type " + type + " length 0x" + Integer.toHexString(declared));
                assertTrue(e.getMessage().contains("declares " + Integer.toUnsignedString(declared) + " bytes but 16 remain"),
                        e.getMessage());
            }
        }
    }

    @Test
    void aHugeLengthInsideAStructureIsRefusedToo() {
        byte[] inner = item(0x08, 0x7FFFFFFF, 8);
        byte[] outer = ByteBuffer.allocate(8 + inner.length).put(item(0x01, inner.length, 0)).put(inner).array();
        KmipException e = assertThrows(KmipException.class, () -> Ttlv.decode(outer));
        assertTrue(e.getMessage().contains("declares 2147483647 bytes but 8 remain"), e.getMessage());
    }

    @Test
    void aLengthWhosePaddingRunsPastTheEndIsRefused() {
        // 13 bytes declared, padded to 16, only 13 present
        assertThrows(KmipException.class, () -> Ttlv.decode(item(0x08, 13, 13)));
        assertEquals(13, Ttlv.decode(item(0x08, 13, 16)).bytesValue().length);
    }

    @Test
    void anEmptyBigIntegerIsAKmipException() {
        KmipException e = assertThrows(KmipException.class, () -> Ttlv.decode(item(0x04, 0, 0)));
        assertTrue(e.getMessage().contains("Big Integer"), e.getMessage());
    }

    @Test
    void structuresNestedTooDeeplyAreAKmipExceptionNotAStackOverflow() {
        int depth = 100_000;
        ByteBuffer b = ByteBuffer.allocate(8 * depth);
        for (int d = 0; d < depth; d++) {
            b.put((byte) 0x42).put((byte) 0x00).put((byte) 0x01).put((byte) 0x01).putInt(8 * (depth - d - 1));
        }
        KmipException e = assertThrows(KmipException.class, () -> Ttlv.decode(b.array()));
        assertTrue(e.getMessage().contains("nested"), e.getMessage());
    }
}
