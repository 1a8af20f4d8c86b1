package dev.fleproxy.crypto;

/** A suite's {@link NonceAead} with its nonces chosen inside: nonce ‖ ciphertext ‖ tag. */
final class SuiteAead implements Aead {
    private final CipherSuite suite;
    private final NonceAead inner;
    private final NonceSource nonces;

    SuiteAead(CipherSuite suite, NonceAead inner, NonceSource nonces) {
        this.suite = suite;
        this.inner = inner;
        this.nonces = nonces;
    }

    @Override
    public int sealedLength(int plaintextLength) {
        return suite.sealedLength(plaintextLength);
    }

    @Override
    public void seal(byte[] pt, int ptOff, int ptLen, byte[] aad, int aadOff, int aadLen, byte[] out, int outOff) {
        int n = suite.nonceLength();
        nonces.nonce(aad, aadOff, aadLen, pt, ptOff, ptLen, out, outOff, n);
        inner.seal(out, outOff, aad, aadOff, aadLen, pt, ptOff, ptLen, out, outOff + n);
    }

    @Override
    public byte[] open(byte[] sealed, int off, int len, byte[] aad, int aadOff, int aadLen) {
        int n = suite.nonceLength();
        if (len < n + CipherSuite.TAG_LENGTH) {
            throw new DecryptionFailedException();
        }
        return inner.open(sealed, off, aad, aadOff, aadLen, sealed, off + n, len - n);
    }
}
