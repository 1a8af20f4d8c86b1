package dev.fleproxy.crypto;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The pseudonym and the audit chain's MAC against values computed apart from this code (Python's
 * `cryptography`: HKDF-SHA-256 with an empty salt, then HMAC-SHA-256), as docs/access.md states
 * them, for a key of 32 zero bytes.
 */
class DerivedMacVectorsTest {
    private static final DataKey ZERO = new DataKey(UUID.fromString("89d6d529-a2fe-31dd-ae60-3cb35458dcc0"),
            CipherAlgorithm.AES, new byte[32]);

    @Test
    void thePseudonymOfTheStringXInFieldSsnOfAB() {
        byte[] value = {2, 0, 0, 0, 'x', 0}; // a BSON string's value bytes: length, "x", NUL
        assertEquals("pn1:7xdbf39Po7LPC7tI0ptJdv34", Pseudonyms.of(ZERO, "a.b", "ssn").of((byte) 0x02, value));
    }

    @Test
    void theChainMacOfAFirstLine() {
        byte[] mac = ChainMac.of(ZERO).next(new byte[32], "{\"seq\":1}".getBytes(StandardCharsets.UTF_8));
        assertEquals("497f956b3e037f67bdfeb27a2b3aa1f665982c0c65d275bd047898c97f608719", HexFormat.of().formatHex(mac));
    }
}
