package dev.fleproxy.crypto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The search index tags of docs/envelope-format.md ("Range index tags", "Text index tags"): every vector of their tables, made by RangeTags and TextTags. */
class RangeTagsVectorsTest {
    private static final Path DOC = Path.of("..", "docs", "envelope-format.md");

    @Test
    void everyVectorOfTheSpecificationIsWhatTheProxyMakes() throws IOException {
        String doc = Files.readString(DOC);
        String section = doc.substring(doc.indexOf("## Range index tags"));
        section = section.substring(section.indexOf("| K bytes |"));
        int checked = 0;
        for (String line : section.split("\n")) {
            if (!line.startsWith("| 16 ") && !line.startsWith("| 32 ")) {
                if (checked > 0) {
                    break;
                }
                continue;
            }
            String[] c = line.substring(1, line.length() - 1).split("\\|");
            int keyBytes = Integer.parseInt(c[0].trim());
            String ns = unquote(c[1]);
            String field = unquote(c[2]);
            String what = c[3].trim();
            String expected = unquote(c[5]);
            byte[] material = new byte[keyBytes];
            for (int i = 0; i < keyBytes; i++) {
                material[i] = (byte) i;
            }
            DataKey key = new DataKey(UUID.randomUUID(), CipherAlgorithm.AES, material);
            RangeTags tags = RangeTags.derive(key, ns, field);
            byte[] tag;
            if (what.startsWith("node ")) {
                String[] n = what.split(" ");
                tag = tags.node(Integer.parseInt(n[1]), Long.parseLong(n[2]));
            } else {
                tag = what.equals("other") ? tags.other() : tags.none();
            }
            assertEquals(expected, HexFormat.of().formatHex(tag), line);
            checked++;
        }
        assertTrue(checked >= 12, "the table's rows were read: " + checked);
    }

    @Test
    void everyPrefixVectorOfTheSpecificationIsWhatTheProxyMakes() throws IOException {
        String doc = Files.readString(DOC);
        String section = doc.substring(doc.indexOf("## Text index tags"));
        section = section.substring(section.indexOf("| K bytes |"));
        int checked = 0;
        for (String line : section.split("\n")) {
            if (!line.startsWith("| 32 ")) {
                if (checked > 0) {
                    break;
                }
                continue;
            }
            String[] c = line.substring(1, line.length() - 1).split("\\|");
            byte[] material = new byte[32];
            for (int i = 0; i < 32; i++) {
                material[i] = (byte) i;
            }
            String what = c[3].trim();
            TextTags.Kind kind = TextTags.Kind.valueOf(what.split(" ")[0].toUpperCase(java.util.Locale.ROOT));
            TextTags tags = TextTags.derive(new DataKey(UUID.randomUUID(), CipherAlgorithm.AES, material),
                    unquote(c[1]), unquote(c[2]), kind);
            String piece = what.substring(what.indexOf(' ') + 1).trim();
            byte[] tag = piece.equals("other") ? tags.other() : piece.equals("none") ? tags.none() : tags.text(unquote(piece));
            assertEquals(unquote(c[5]), HexFormat.of().formatHex(tag), line);
            checked++;
        }
        assertTrue(checked >= 18, "the table's rows were read: " + checked);
    }

    @Test
    void theDerivedKeyIsPerKeyNamespaceAndField() {
        byte[] m = new byte[32];
        DataKey a = new DataKey(UUID.randomUUID(), CipherAlgorithm.AES, m);
        m[0] = 1;
        DataKey b = new DataKey(UUID.randomUUID(), CipherAlgorithm.AES, m);
        String t = HexFormat.of().formatHex(RangeTags.of(a, "db.c", "x").node(0, 7));
        assertEquals(t, HexFormat.of().formatHex(RangeTags.of(a, "db.c", "x").node(0, 7)));
        assertTrue(!t.equals(HexFormat.of().formatHex(RangeTags.of(b, "db.c", "x").node(0, 7))));
        assertTrue(!t.equals(HexFormat.of().formatHex(RangeTags.of(a, "db.d", "x").node(0, 7))));
        assertTrue(!t.equals(HexFormat.of().formatHex(RangeTags.of(a, "db.c", "y").node(0, 7))));
    }

    private static String unquote(String s) {
        return s.trim().replace("`", "");
    }
}
