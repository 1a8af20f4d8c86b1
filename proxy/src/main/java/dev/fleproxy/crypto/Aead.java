package dev.fleproxy.crypto;

/**
 * Authenticated encryption with associated data, in the spirit of Tink's Aead: two methods, no
 * knobs, the nonce chosen inside. The output is nonce ‖ ciphertext ‖ tag. The offset forms let
 * callers write straight into a larger buffer (an envelope) without intermediate copies.
 */
public interface Aead {

    /** Length of nonce ‖ ciphertext ‖ tag for a plaintext of this length. */
    int sealedLength(int plaintextLength);

    /** Encrypts pt[ptOff, ptOff+ptLen) into out[outOff, outOff+sealedLength(ptLen)). */
    void seal(byte[] pt, int ptOff, int ptLen, byte[] aad, int aadOff, int aadLen, byte[] out, int outOff);

    /** Decrypts nonce ‖ ciphertext ‖ tag; any failure is a {@link DecryptionFailedException}. */
    byte[] open(byte[] sealed, int off, int len, byte[] aad, int aadOff, int aadLen);

    default byte[] encrypt(byte[] plaintext, byte[] associatedData) {
        byte[] out = new byte[sealedLength(plaintext.length)];
        seal(plaintext, 0, plaintext.length, associatedData, 0, associatedData.length, out, 0);
        return out;
    }

    default byte[] decrypt(byte[] ciphertext, byte[] associatedData) {
        return open(ciphertext, 0, ciphertext.length, associatedData, 0, associatedData.length);
    }
}
