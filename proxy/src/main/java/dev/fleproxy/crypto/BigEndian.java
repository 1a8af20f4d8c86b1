package dev.fleproxy.crypto;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/** Big-endian int and long access to byte arrays: one load or store each, not eight. */
final class BigEndian {
    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private BigEndian() {
    }

    static int getInt(byte[] b, int off) {
        return (int) INT.get(b, off);
    }

    static void putInt(byte[] b, int off, int v) {
        INT.set(b, off, v);
    }

    static long getLong(byte[] b, int off) {
        return (long) LONG.get(b, off);
    }

    static void putLong(byte[] b, int off, long v) {
        LONG.set(b, off, v);
    }
}
