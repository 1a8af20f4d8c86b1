package dev.fleproxy.crypto;

/**
 * The layer under {@link Aead}: authenticated encryption with the nonce given by the caller.
 * Implementations keep one initialised cipher per thread, so key schedules are computed once
 * per key and thread, never per operation.
 */
interface NonceAead {

    /** Writes ciphertext ‖ tag at out[outOff]; returns the number of bytes written. */
    int seal(byte[] nonce, int nonceOff, byte[] aad, int aadOff, int aadLen,
             byte[] pt, int ptOff, int ptLen, byte[] out, int outOff);

    /** Returns the plaintext of ciphertext ‖ tag, or throws {@link DecryptionFailedException}. */
    byte[] open(byte[] nonce, int nonceOff, byte[] aad, int aadOff, int aadLen, byte[] ct, int ctOff, int ctLen);
}
