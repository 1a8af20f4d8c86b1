package dev.fleproxy.crypto;

/**
 * The suites of the ciphertext format (docs/envelope-format.md, "Suites"), by the id stored in byte 1 of every
 * envelope. Bit 0x40 of that byte marks the deterministic variant of a suite.
 */
public enum CipherSuite {
    AES_GCM(0x01, CipherAlgorithm.AES, Construction.GCM),
    ARIA_GCM(0x02, CipherAlgorithm.ARIA, Construction.GCM),
    LEA_GCM(0x03, CipherAlgorithm.LEA, Construction.GCM),
    AES_CBC_HMAC(0x11, CipherAlgorithm.AES, Construction.CBC_HMAC),
    ARIA_CBC_HMAC(0x12, CipherAlgorithm.ARIA, Construction.CBC_HMAC),
    SEED_CBC_HMAC(0x14, CipherAlgorithm.SEED, Construction.CBC_HMAC),
    TDES_CBC_HMAC(0x15, CipherAlgorithm.TRIPLE_DES, Construction.CBC_HMAC);

    /** Set in the suite byte for the deterministic variant. */
    public static final int DETERMINISTIC_FLAG = 0x40;
    /** Both constructions end in a 16-byte tag. */
    public static final int TAG_LENGTH = 16;

    /** How a suite turns a block cipher into authenticated encryption. */
    public enum Construction {
        /** GCM, 12-byte nonce, 128-bit tag. */
        GCM,
        /** CBC with PKCS#7 padding under the key itself, then HMAC-SHA-256/128 under an HKDF-derived key. */
        CBC_HMAC
    }

    private final int id;
    private final CipherAlgorithm algorithm;
    private final Construction construction;

    CipherSuite(int id, CipherAlgorithm algorithm, Construction construction) {
        this.id = id;
        this.algorithm = algorithm;
        this.construction = construction;
    }

    public int id() {
        return id;
    }

    public CipherAlgorithm algorithm() {
        return algorithm;
    }

    public Construction construction() {
        return construction;
    }

    /** Nonce (GCM) or IV (CBC) length: 12 for GCM, the block size for CBC. */
    public int nonceLength() {
        return construction == Construction.GCM ? 12 : algorithm.blockSize();
    }

    /** Length of nonce ‖ ciphertext ‖ tag for a plaintext of the given length. */
    public int sealedLength(int plaintextLength) {
        int body = plaintextLength;
        if (construction == Construction.CBC_HMAC) {
            int bs = algorithm.blockSize();
            body = plaintextLength + (bs - plaintextLength % bs);
        }
        return nonceLength() + body + TAG_LENGTH;
    }

    /** The suite with this id (deterministic flag ignored), or null. */
    public static CipherSuite byId(int suiteByte) {
        int id = suiteByte & ~DETERMINISTIC_FLAG;
        for (CipherSuite s : values()) {
            if (s.id == id) {
                return s;
            }
        }
        return null;
    }

    /** GCM for 128-bit block ciphers; CBC-HMAC for 3DES, for which no 64-bit-block AEAD mode exists. */
    public static CipherSuite defaultFor(CipherAlgorithm algorithm) {
        return switch (algorithm) {
            case AES -> AES_GCM;
            case ARIA -> ARIA_GCM;
            case LEA -> LEA_GCM;
            case SEED -> SEED_CBC_HMAC;
            case TRIPLE_DES -> TDES_CBC_HMAC;
        };
    }
}
