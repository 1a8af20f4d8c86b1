package dev.fleproxy.crypto;

/**
 * Encrypts one field's value into an envelope and back, for one key, suite and variant. Thread
 * safe; cheap to call (no cipher lookups, key schedules computed once per thread).
 */
public final class FieldCipher {
    private final DataKey key;
    private final CipherSuite suite;
    private final boolean deterministic;
    private final Aead aead;
    /** Bytes 0–17 of every envelope this cipher writes (format, suite, key id). */
    private final byte[] headerPrefix = new byte[Envelope.HEADER_LENGTH];

    private FieldCipher(DataKey key, CipherSuite suite, boolean deterministic) {
        this.key = key;
        this.suite = suite;
        this.deterministic = deterministic;
        this.aead = Ciphers.aead(key, suite, deterministic);
        Envelope.writeHeader(headerPrefix, suite, deterministic, key.id(), (byte) 0);
    }

    /** Fails with a {@link CryptoException} if the key's algorithm is not the suite's. */
    public static FieldCipher create(DataKey key, CipherSuite suite, boolean deterministic) {
        return new FieldCipher(key, suite, deterministic);
    }

    public DataKey key() {
        return key;
    }

    public CipherSuite suite() {
        return suite;
    }

    public boolean deterministic() {
        return deterministic;
    }

    /** The envelope of a value: its BSON type byte and its BSON value bytes. */
    public byte[] encrypt(byte bsonType, byte[] value) {
        return encrypt(bsonType, value, 0, value.length);
    }

    public byte[] encrypt(byte bsonType, byte[] value, int off, int len) {
        byte[] out = new byte[Envelope.HEADER_LENGTH + suite.sealedLength(len)];
        System.arraycopy(headerPrefix, 0, out, 0, Envelope.HEADER_LENGTH - 1);
        out[Envelope.HEADER_LENGTH - 1] = bsonType;
        aead.seal(value, off, len, out, 0, Envelope.HEADER_LENGTH, out, Envelope.HEADER_LENGTH);
        return out;
    }

    /** A decrypted value: the original BSON type byte and value bytes. */
    public record Plaintext(byte bsonType, byte[] value) {
    }

    /**
     * Decrypts an envelope made under this cipher's key and suite (either variant). Any failure,
     * including an envelope for another key or suite, is a {@link DecryptionFailedException}.
     */
    public Plaintext decrypt(byte[] envelope) {
        if (envelope.length < Envelope.HEADER_LENGTH + suite.sealedLength(0)
                || envelope[0] != headerPrefix[0]
                || (envelope[1] & ~CipherSuite.DETERMINISTIC_FLAG) != suite.id()
                || !java.util.Arrays.equals(envelope, 2, 18, headerPrefix, 2, 18)) {
            throw new DecryptionFailedException();
        }
        return open(envelope, 0, envelope.length);
    }

    /**
     * Decrypts the envelope at buf[off, off+len) whose header {@link Envelopes} has already read
     * and matched to this cipher: the header is not parsed again.
     */
    Plaintext open(byte[] buf, int off, int len) {
        byte[] value = aead.open(buf, off + Envelope.HEADER_LENGTH, len - Envelope.HEADER_LENGTH,
                buf, off, Envelope.HEADER_LENGTH);
        return new Plaintext(buf[off + Envelope.HEADER_LENGTH - 1], value);
    }
}
