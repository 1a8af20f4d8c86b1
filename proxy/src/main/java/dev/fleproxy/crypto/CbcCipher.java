package dev.fleproxy.crypto;

/** CBC with PKCS#7 padding under a fixed key, the IV given per message: the inner half of CBC-HMAC. */
interface CbcCipher {

    /** Encrypts into out[outOff]; returns the ciphertext length (a whole number of blocks). */
    int encrypt(byte[] iv, int ivOff, byte[] pt, int ptOff, int ptLen, byte[] out, int outOff);

    /** Decrypts and removes the padding; a bad length or padding is a {@link DecryptionFailedException}. */
    byte[] decrypt(byte[] iv, int ivOff, byte[] ct, int ctOff, int ctLen);
}
