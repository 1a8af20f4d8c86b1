package dev.fleproxy.crypto;

/** Comparisons whose running time does not depend on where the inputs differ. */
final class ConstantTime {
    private ConstantTime() {
    }

    static boolean equals(byte[] a, int aOff, byte[] b, int bOff, int len) {
        int diff = 0;
        for (int i = 0; i < len; i++) {
            diff |= a[aOff + i] ^ b[bOff + i];
        }
        return diff == 0;
    }
}
