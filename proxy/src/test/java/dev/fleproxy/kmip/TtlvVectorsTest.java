package dev.fleproxy.kmip;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The TTLV codec and the three operations against real request/response bytes captured from
 * PyKMIP 0.11.0 (src/test/resources/kmip/kmip-ttlv-vectors.txt; the key in it is a throwaway).
 */
class TtlvVectorsTest {
    static final String AES_NAME = "89d6d529-a2fe-31dd-ae60-3cb35458dcc0";

    /** Section title → the REQ and RESP messages of that section, in order. */
    static Map<String, List<byte[]>> requests = new LinkedHashMap<>();
    static Map<String, List<byte[]>> responses = new LinkedHashMap<>();

    @BeforeAll
    static void load() throws IOException {
        try (InputStream in = TtlvVectorsTest.class.getResourceAsStream("/kmip/kmip-ttlv-vectors.txt")) {
            String[] lines = new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n");
            String section = null;
            for (int i = 0; i < lines.length; i++) {
                String l = lines[i];
                if (l.startsWith("## ")) {
                    section = l.substring(3).trim();
                    requests.put(section, new ArrayList<>());
                    responses.put(section, new ArrayList<>());
                } else if (l.startsWith("REQ hex")) {
                    requests.get(section).add(HexFormat.of().parseHex(lines[i + 1].trim()));
                } else if (l.startsWith("RESP hex")) {
                    responses.get(section).add(HexFormat.of().parseHex(lines[i + 1].trim()));
                }
            }
        }
        assertEquals(7, requests.size());
    }

    private static String section(String prefix) {
        return requests.keySet().stream().filter(s -> s.startsWith(prefix)).findFirst().orElseThrow();
    }

    @Test
    void everyCapturedMessageDecodesAndReencodesByteForByte() {
        int n = 0;
        for (Map<String, List<byte[]>> m : List.of(requests, responses)) {
            for (List<byte[]> msgs : m.values()) {
                for (byte[] b : msgs) {
                    assertArrayEquals(b, Ttlv.decode(b).encode());
                    n++;
                }
            }
        }
        assertTrue(n >= 14, n + " messages");
    }

    @Test
    void locateAndGetRequestsEqualPyKmipsAtVersion12And14() {
        for (String v : List.of("1.2", "1.4")) {
            KmipMessages.Version version = v.equals("1.2") ? KmipMessages.Version.V1_2 : KmipMessages.Version.V1_4;
            String s = section("client kmip_version=" + v);
            assertArrayEquals(requests.get(s).get(0), KmipMessages.locateByName(version, AES_NAME, null).encode(), v);
            assertArrayEquals(requests.get(s).get(1), KmipMessages.get(version, "1").encode(), v);

            assertEquals(List.of("1"), KmipMessages.locatedIds(Ttlv.decode(responses.get(s).get(0))));
            KmipMessages.KeyBlock key = KmipMessages.symmetricKey(Ttlv.decode(responses.get(s).get(1)));
            assertEquals(3, key.algorithm(), "AES");
            assertEquals(256, key.length());
            assertArrayEquals(HexFormat.of().parseHex("dc668392a536cfbddacf9b6b1d229c4716d4cc2d4bff530bd68f088f2d4db168"),
                    key.material());
            assertTrue(!key.toString().contains("dc6683"), "key blocks never print their material");
        }
    }

    @Test
    void getAttributesRequestAndResponse() {
        String s = section("kmip 1.2: GetAttributes");
        assertArrayEquals(requests.get(s).get(0), KmipMessages.getAttributes(KmipMessages.Version.V1_2, "1",
                KmipMessages.ATTR_ALGORITHM, KmipMessages.ATTR_LENGTH, KmipMessages.ATTR_STATE,
                KmipMessages.ATTR_NAME).encode());
        Map<String, List<Ttlv>> attrs = KmipMessages.attributes(Ttlv.decode(responses.get(s).get(0)));
        assertEquals(KmipEnum.STATE_ACTIVE, attrs.get("State").get(0).intValue());
        assertEquals(3, attrs.get("Cryptographic Algorithm").get(0).intValue());
        assertEquals(256, attrs.get("Cryptographic Length").get(0).intValue());
        assertEquals(AES_NAME, attrs.get("Name").get(0).get(Tag.NAME_VALUE).textValue());
    }

    @Test
    void serverErrorsBecomeKmipExceptionsWithStatusReasonAndMessage() {
        String s = section("kmip 1.2: Get(uid=999)");
        assertArrayEquals(requests.get(s).get(0), KmipMessages.get(KmipMessages.Version.V1_2, "999").encode());
        KmipException e = assertThrows(KmipException.class,
                () -> KmipMessages.symmetricKey(Ttlv.decode(responses.get(s).get(0))));
        assertEquals("OPERATION_FAILED", e.resultStatus());
        assertEquals("ITEM_NOT_FOUND", e.resultReason());
        assertTrue(e.getMessage().contains("Could not locate object: 999"), e.getMessage());

        String unknown = section("kmip 1.2: Locate(Name=unknown)");
        assertEquals(List.of(), KmipMessages.locatedIds(Ttlv.decode(responses.get(unknown).get(0))));
    }

    @Test
    void malformedTtlvIsAClearError() {
        byte[] ok = responses.get(section("kmip 1.2: Get(uid=999)")).get(0);
        assertThrows(KmipException.class, () -> Ttlv.decode(java.util.Arrays.copyOf(ok, ok.length - 3)));
        byte[] badType = ok.clone();
        badType[3] = 0x0F;
        KmipException e = assertThrows(KmipException.class, () -> Ttlv.decode(badType));
        assertTrue(e.getMessage().contains("unknown TTLV item type"), e.getMessage());
        assertThrows(KmipException.class, () -> Ttlv.decode(new byte[5]));
    }

    @Test
    void everyItemTypeRoundTrips() {
        Ttlv all = Ttlv.structure(0x420001,
                Ttlv.integer(0x420002, -5),
                Ttlv.longInteger(0x420003, 1L << 40),
                Ttlv.bigInteger(0x420004, new java.math.BigInteger("-123456789012345678901234567890")),
                Ttlv.enumeration(0x420005, 7),
                Ttlv.bool(0x420006, true),
                Ttlv.text(0x420007, "héllo"),
                Ttlv.bytes(0x420008, new byte[] {1, 2, 3}),
                Ttlv.dateTime(0x420009, 1_700_000_000L),
                Ttlv.interval(0x42000A, 86400));
        byte[] b = all.encode();
        assertEquals(0, b.length % 8);
        assertEquals(all, Ttlv.decode(b));
        assertEquals(new java.math.BigInteger("-123456789012345678901234567890"),
                Ttlv.decode(b).find(0x420004).bigIntegerValue());
    }
}
