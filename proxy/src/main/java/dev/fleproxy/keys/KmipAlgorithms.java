package dev.fleproxy.keys;

import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.kmip.Tag;
import dev.fleproxy.kmip.Ttlv;
import java.util.List;
import java.util.UUID;

/**
 * KMIP's Cryptographic Algorithm → our cipher. AES (0x03), 3DES (0x02), ARIA (0x29) and SEED
 * (0x2A) have KMIP values. LEA has none: an LEA key is a Symmetric Key whose Cryptographic
 * Algorithm is AES (so that any KMS stores, backs up and replicates it) and which carries the
 * attribute Application Specific Information {namespace "mongo-fle-proxy", data "cipher=LEA"};
 * that marking is authoritative here. The kms CLI (kms/) registers LEA keys this way.
 */
final class KmipAlgorithms {
    static final int KMIP_TRIPLE_DES = 0x02;
    static final int KMIP_AES = 0x03;
    static final int KMIP_ARIA = 0x29;
    static final int KMIP_SEED = 0x2A;

    static final String MARKER_ATTRIBUTE = "Application Specific Information";
    static final String MARKER_NAMESPACE = "mongo-fle-proxy";
    static final String LEA_MARKER = "cipher=LEA";

    private KmipAlgorithms() {
    }

    static CipherAlgorithm algorithmOf(UUID id, int kmipAlgorithm, List<Ttlv> markers) {
        String marked = marking(markers);
        if (marked != null) {
            if (!marked.equals(LEA_MARKER)) {
                throw unsupported(id, "is marked '" + marked + "' (namespace " + MARKER_NAMESPACE
                        + "), which this proxy does not know");
            }
            if (kmipAlgorithm != KMIP_AES) {
                throw unsupported(id, "is marked as an LEA key but its Cryptographic Algorithm is " + name(kmipAlgorithm)
                        + ", not AES as LEA keys must be registered; refusing an ambiguous key");
            }
            return CipherAlgorithm.LEA;
        }
        return switch (kmipAlgorithm) {
            case KMIP_AES -> CipherAlgorithm.AES;
            case KMIP_ARIA -> CipherAlgorithm.ARIA;
            case KMIP_SEED -> CipherAlgorithm.SEED;
            case KMIP_TRIPLE_DES -> CipherAlgorithm.TRIPLE_DES;
            default -> throw unsupported(id, "uses KMIP algorithm " + name(kmipAlgorithm)
                    + ", which no suite supports (AES, ARIA, SEED, TRIPLE_DES, or LEA as marked by the kms CLI)");
        };
    }

    private static String marking(List<Ttlv> markers) {
        if (markers == null) {
            return null;
        }
        for (Ttlv asi : markers) {
            Ttlv ns = asi.find(Tag.APPLICATION_NAMESPACE);
            Ttlv data = asi.find(Tag.APPLICATION_DATA);
            if (ns != null && data != null && ns.textValue().equals(MARKER_NAMESPACE)) {
                return data.textValue();
            }
        }
        return null;
    }

    static String name(int kmipAlgorithm) {
        return switch (kmipAlgorithm) {
            case -1 -> "(none)";
            case 0x01 -> "DES";
            case KMIP_TRIPLE_DES -> "TRIPLE_DES";
            case KMIP_AES -> "AES";
            case 0x04 -> "RSA";
            case 0x11 -> "CAMELLIA";
            case KMIP_ARIA -> "ARIA";
            case KMIP_SEED -> "SEED";
            default -> "0x" + Integer.toHexString(kmipAlgorithm);
        };
    }

    private static KeyAccessException unsupported(UUID id, String what) {
        return new KeyAccessException(id, KeyAccessException.Reason.UNSUPPORTED_KEY, "key " + id + " " + what);
    }
}
