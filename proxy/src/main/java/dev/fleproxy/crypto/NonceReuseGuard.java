package dev.fleproxy.crypto;

import java.util.Arrays;

/**
 * The JDK refuses to initialise GCM encryption with the nonce of the previous encryption (a
 * guard against accidental reuse). The deterministic variants reuse a nonce on
 * purpose, exactly when the plaintext, AAD and key repeat (then the output repeats too, which is
 * what makes equality queries possible), so before such an init the cipher is first initialised
 * with a different throwaway nonce. One instance per thread, next to the cipher it guards.
 */
final class NonceReuseGuard {
    private final byte[] last;
    private boolean used;

    NonceReuseGuard(int nonceLength) {
        last = new byte[nonceLength];
    }

    /** True if this nonce equals the one of the previous init; records it either way. */
    boolean repeats(byte[] nonce, int off) {
        boolean same = used && Arrays.equals(last, 0, last.length, nonce, off, off + last.length);
        System.arraycopy(nonce, off, last, 0, last.length);
        used = true;
        return same;
    }

    /** A nonce that differs from the given one (its first byte flipped). */
    static byte[] other(byte[] nonce, int off, int len) {
        byte[] x = Arrays.copyOfRange(nonce, off, off + len);
        x[0] ^= (byte) 0xff;
        return x;
    }
}
