package dev.fleproxy.crypto;

/**
 * Encrypts one field's value into an envelope and back, for one key, suite and variant. Writes
 * format v2, bound to a context ({@link Envelope#context}: the namespace and policy field the
 * value belongs to); opens v2 and, for data written before v2, v1. Thread safe; cheap to call
 * (no cipher lookups, key schedules computed once per thread).
 */
public final class FieldCipher {
    private final DataKey key;
    private final CipherSuite suite;
    private final boolean deterministic;
    private final Aead aead;
    /** v1's subkeys differ (HKDF infos), so legacy envelopes get their own AEAD, built when first met. */
    private volatile Aead legacy;
    /** Bytes 0–17 of every envelope this cipher writes (format v2, suite, key id). */
    private final byte[] headerPrefix = new byte[Envelope.HEADER_LENGTH];

    private FieldCipher(DataKey key, CipherSuite suite, boolean deterministic) {
        this.key = key;
        this.suite = suite;
        this.deterministic = deterministic;
        this.aead = Ciphers.aead(key, suite, deterministic, Envelope.FORMAT_V2);
        Envelope.writeHeader(headerPrefix, Envelope.FORMAT_V2, suite, deterministic, key.id(), (byte) 0);
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

    /** The v2 envelope of a value (its BSON type byte and value bytes) for this context. */
    public byte[] encrypt(byte bsonType, byte[] value, byte[] context) {
        return encrypt(bsonType, value, 0, value.length, context, 0, context.length);
    }

    /** As {@link #encrypt(byte, byte[], byte[])}, for value[off, off+len) and context[ctxOff, ctxOff+ctxLen). */
    public byte[] encrypt(byte bsonType, byte[] value, int off, int len, byte[] context, int ctxOff, int ctxLen) {
        if (!CryptoStats.enabled()) {
            return seal(bsonType, value, off, len, context, ctxOff, ctxLen);
        }
        boolean timed = CryptoStats.timeNext();
        long t0 = timed ? System.nanoTime() : 0;
        byte[] out = seal(bsonType, value, off, len, context, ctxOff, ctxLen);
        if (timed) {
            CryptoStats.countSealed(suite, System.nanoTime() - t0);
        } else {
            CryptoStats.countSealed(suite);
        }
        return out;
    }

    private byte[] seal(byte bsonType, byte[] value, int off, int len, byte[] context, int ctxOff, int ctxLen) {
        byte[] out = new byte[Envelope.HEADER_LENGTH + suite.sealedLength(len)];
        System.arraycopy(headerPrefix, 0, out, 0, Envelope.HEADER_LENGTH - 1);
        out[Envelope.HEADER_LENGTH - 1] = bsonType;
        byte[] aad = associatedData(out, 0, context, ctxOff, ctxLen);
        aead.seal(value, off, len, aad, 0, Envelope.HEADER_LENGTH + ctxLen, out, Envelope.HEADER_LENGTH);
        return out;
    }

    /**
     * A v1 envelope, as versions before v2 wrote them: for tests and migration tools that must
     * make legacy data. The proxy never writes v1.
     */
    public byte[] encryptLegacyV1(byte bsonType, byte[] value) {
        byte[] out = new byte[Envelope.HEADER_LENGTH + suite.sealedLength(value.length)];
        Envelope.writeHeader(out, Envelope.FORMAT_V1, suite, deterministic, key.id(), bsonType);
        legacy().seal(value, 0, value.length, out, 0, Envelope.HEADER_LENGTH, out, Envelope.HEADER_LENGTH);
        return out;
    }

    /** A decrypted value: the original BSON type byte and value bytes. */
    public record Plaintext(byte bsonType, byte[] value) {
    }

    /**
     * Decrypts an envelope made under this cipher's key and suite (either variant, either format)
     * found in this context (ignored for v1, which has none). Any failure, including an envelope
     * for another key, suite or context, is a {@link DecryptionFailedException}.
     */
    public Plaintext decrypt(byte[] envelope, byte[] context) {
        if (envelope.length < Envelope.HEADER_LENGTH + suite.sealedLength(0)
                || !Envelopes.isEnvelope(envelope, 0, envelope.length)
                || (envelope[1] & ~CipherSuite.DETERMINISTIC_FLAG) != suite.id()
                || !java.util.Arrays.equals(envelope, 2, 18, headerPrefix, 2, 18)) {
            if (CryptoStats.enabled()) {
                CryptoStats.failed(suite);
            }
            throw new DecryptionFailedException();
        }
        return open(envelope, 0, envelope.length, context, 0, context.length);
    }

    /**
     * Decrypts the envelope at buf[off, off+len) whose header {@link Envelopes} has already read
     * and matched to this cipher: the header is not parsed again. v2 authenticates the context.
     */
    Plaintext open(byte[] buf, int off, int len, byte[] context, int ctxOff, int ctxLen) {
        if (!CryptoStats.enabled()) {
            return openUncounted(buf, off, len, context, ctxOff, ctxLen);
        }
        boolean timed = CryptoStats.timeNext();
        long t0 = timed ? System.nanoTime() : 0;
        Plaintext p;
        try {
            p = openUncounted(buf, off, len, context, ctxOff, ctxLen);
        } catch (DecryptionFailedException e) {
            CryptoStats.failed(suite);
            throw e;
        }
        if (timed) {
            CryptoStats.countOpened(suite, System.nanoTime() - t0);
        } else {
            CryptoStats.countOpened(suite);
        }
        return p;
    }

    private Plaintext openUncounted(byte[] buf, int off, int len, byte[] context, int ctxOff, int ctxLen) {
        byte[] value;
        if ((buf[off] & 0xff) == Envelope.FORMAT_V2) {
            byte[] aad = associatedData(buf, off, context, ctxOff, ctxLen);
            value = aead.open(buf, off + Envelope.HEADER_LENGTH, len - Envelope.HEADER_LENGTH, aad, 0,
                    Envelope.HEADER_LENGTH + ctxLen);
        } else {
            value = legacy().open(buf, off + Envelope.HEADER_LENGTH, len - Envelope.HEADER_LENGTH,
                    buf, off, Envelope.HEADER_LENGTH);
        }
        return new Plaintext(buf[off + Envelope.HEADER_LENGTH - 1], value);
    }

    /**
     * Per thread, room for v2's associated data: a seal or open uses it only during the call (every
     * AEAD here reads its associated data before it returns), so a field allocates none for it.
     */
    private static final ThreadLocal<byte[]> AAD = ThreadLocal.withInitial(() -> new byte[256]);

    /**
     * v2's associated data, the 19-byte header at header[off] ‖ the context, in this thread's
     * scratch array: its first HEADER_LENGTH + ctxLen bytes.
     */
    private static byte[] associatedData(byte[] header, int off, byte[] context, int ctxOff, int ctxLen) {
        byte[] aad = AAD.get();
        if (aad.length < Envelope.HEADER_LENGTH + ctxLen) {
            aad = new byte[Math.max(Envelope.HEADER_LENGTH + ctxLen, 2 * aad.length)];
            AAD.set(aad);
        }
        System.arraycopy(header, off, aad, 0, Envelope.HEADER_LENGTH);
        System.arraycopy(context, ctxOff, aad, Envelope.HEADER_LENGTH, ctxLen);
        return aad;
    }

    private Aead legacy() {
        Aead a = legacy;
        if (a == null) {
            a = Ciphers.aead(key, suite, deterministic, Envelope.FORMAT_V1);
            legacy = a;
        }
        return a;
    }
}
