package dev.fleproxy.crypto;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Key selection, in one place: an envelope's header is read once (format, suite, variant, key
 * id), the key it names is asked of a {@link KeyLookup}, and the value is opened with that key's
 * cipher for that suite. Ciphers are built once per fetched key (a key fetched again gets new
 * ones), for sealing as for opening. Callers hand over bytes and get bytes back; they need not
 * know how a header is laid out. Knows nothing of BSON or of where keys come from.
 */
public final class Envelopes {

    /** Where keys come from, as far as opening envelopes is concerned. */
    public interface KeyLookup {
        /**
         * The key to decrypt with; null if it is not known yet (the caller waits for it and asks
         * again). Throws the lookup's own exception if the key cannot be used.
         */
        DataKey decryptionKey(UUID id);
    }

    private record Slot(UUID id, CipherSuite suite, boolean deterministic) {
    }

    private record Held(DataKey key, FieldCipher cipher) {
    }

    private final Map<Slot, Held> ciphers = new ConcurrentHashMap<>();

    /** True if buf[off, off+len) starts like one of our envelopes, v1 or v2 (anything else is not ours to open). */
    public static boolean isEnvelope(byte[] buf, int off, int len) {
        if (len < Envelope.HEADER_LENGTH) {
            return false;
        }
        int format = buf[off] & 0xff;
        return format == Envelope.FORMAT_V2 || format == Envelope.FORMAT_V1;
    }

    /** True if buf[off, off+len) starts with an envelope's format byte, whatever its length. */
    public static boolean hasFormatByte(byte[] buf, int off, int len) {
        int format = len > 0 ? buf[off] & 0xff : 0;
        return format == Envelope.FORMAT_V2 || format == Envelope.FORMAT_V1;
    }

    /** True if the envelope at buf[off] names this key (bytes 2–17 of its header). */
    public static boolean namesKey(byte[] buf, int off, UUID id) {
        return BigEndian.getLong(buf, off + 2) == id.getMostSignificantBits()
                && BigEndian.getLong(buf, off + 10) == id.getLeastSignificantBits();
    }

    /** The key id an envelope names (bytes 2–17 of its header). */
    public static UUID keyId(byte[] buf, int off) {
        return new UUID(BigEndian.getLong(buf, off + 2), BigEndian.getLong(buf, off + 10));
    }

    /** The cipher that seals (and opens) values under this key, suite and variant. */
    public FieldCipher cipher(DataKey key, CipherSuite suite, boolean deterministic) {
        Slot slot = new Slot(key.id(), suite, deterministic);
        Held held = ciphers.get(slot);
        if (held != null && held.key() == key) {
            return held.cipher();
        }
        FieldCipher fc = FieldCipher.create(key, suite, deterministic);
        ciphers.put(slot, new Held(key, fc));
        return fc;
    }

    /**
     * Opens the envelope at buf[off, off+len), found in this context, under the key its header
     * names. Returns null if the lookup does not know that key yet. A header that is not ours,
     * names an unknown suite, or names a key of another algorithm, and a value that fails
     * authentication (in this context, for v2), are all a {@link DecryptionFailedException}.
     */
    public FieldCipher.Plaintext open(byte[] buf, int off, int len, byte[] context, KeyLookup keys) {
        return opener(keys).open(buf, off, len, context, 0, context.length);
    }

    /** An opener for the envelopes of one message: it remembers the last key and suite it met. */
    public Opener opener(KeyLookup keys) {
        return new Opener(keys);
    }

    /**
     * Opens the envelopes of one message. Most of a message's envelopes name the same key and
     * suite, so the last header's key id and suite are compared as numbers and their cipher reused:
     * no lookup, no allocation per envelope.
     */
    public final class Opener {
        private final KeyLookup keys;
        private long msb;
        private long lsb;
        private int suiteByte = -1;
        private FieldCipher last;

        private Opener(KeyLookup keys) {
            this.keys = keys;
        }

        /** As {@link Envelopes#open}, the context given as context[ctxOff, ctxOff+ctxLen). */
        public FieldCipher.Plaintext open(byte[] buf, int off, int len, byte[] context, int ctxOff, int ctxLen) {
            if (!isEnvelope(buf, off, len)) {
                throw new DecryptionFailedException();
            }
            int sb = buf[off + 1] & 0xff & ~CipherSuite.DETERMINISTIC_FLAG;
            long m = BigEndian.getLong(buf, off + 2);
            long l = BigEndian.getLong(buf, off + 10);
            FieldCipher fc = last;
            if (fc == null || sb != suiteByte || m != msb || l != lsb) {
                CipherSuite suite = CipherSuite.byId(sb);
                if (suite == null || (buf[off + 1] & 0x80) != 0) {
                    throw new DecryptionFailedException();
                }
                DataKey key = keys.decryptionKey(new UUID(m, l));
                if (key == null) {
                    return null;
                }
                if (key.algorithm() != suite.algorithm()) {
                    throw new DecryptionFailedException();
                }
                fc = cipher(key, suite, false);
                last = fc;
                suiteByte = sb;
                msb = m;
                lsb = l;
            }
            if (len < Envelope.HEADER_LENGTH + fc.suite().sealedLength(0)) {
                throw new DecryptionFailedException();
            }
            return fc.open(buf, off, len, context, ctxOff, ctxLen);
        }
    }
}
