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

    private FieldCipher(DataKey key, CipherSuite suite, boolean deterministic) {
        this.key = key;
        this.suite = suite;
        this.deterministic = deterministic;
        this.aead = Ciphers.aead(key, suite, deterministic);
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
        Envelope.writeHeader(out, suite, deterministic, key.id(), bsonType);
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
        Envelope.Header h = Envelope.parse(envelope);
        if (h.suite() != suite || !h.keyId().equals(key.id())) {
            throw new DecryptionFailedException();
        }
        byte[] value = aead.open(envelope, Envelope.HEADER_LENGTH, envelope.length - Envelope.HEADER_LENGTH,
                envelope, 0, Envelope.HEADER_LENGTH);
        return new Plaintext(h.bsonType(), value);
    }
}
