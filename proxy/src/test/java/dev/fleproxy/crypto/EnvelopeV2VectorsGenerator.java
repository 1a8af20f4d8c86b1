package dev.fleproxy.crypto;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import org.bson.RawBsonDocument;

/**
 * Writes src/test/resources/vectors/envelope-v2.json: v2 envelopes (docs/envelope-format.md) made by the
 * code under test ({@link FieldCipher}) with fixed, public test keys, for the independent checks
 * in EnvelopeV2VectorsTest (Bouncy Castle's low-level API) and proxy/tests/test_envelope_vectors.py
 * (pyca/cryptography). Not a test; run it by hand when the vector set itself must change:
 *
 * <pre>
 * cd proxy
 * mvn -B -ntp -o -q test-compile dependency:build-classpath -Dmdep.includeScope=test \
 *     -Dmdep.outputFile=target/test.classpath
 * java -cp "target/test-classes:target/classes:$(cat target/test.classpath)" \
 *     dev.fleproxy.crypto.EnvelopeV2VectorsGenerator
 * </pre>
 *
 * (an optional argument, a path, writes elsewhere; exec:java is not used because its own
 * dependencies are not in the offline repository). Deterministic entries come out the same on
 * every run; random ones get new nonces, so regenerating rewrites them.
 */
public final class EnvelopeV2VectorsGenerator {
    static final String DEFAULT_OUT = "src/test/resources/vectors/envelope-v2.json";

    private EnvelopeV2VectorsGenerator() {
    }

    /** One vector to make. */
    record Spec(String comment, CipherSuite suite, boolean deterministic, int keyBytes, String namespace,
                String field, int bsonType, byte[] value) {
    }

    /** docs/envelope-format.md's names for the suites, which the checkers map to ciphers on their own. */
    static String designName(CipherSuite s) {
        return switch (s) {
            case AES_GCM -> "AES-GCM";
            case ARIA_GCM -> "ARIA-GCM";
            case LEA_GCM -> "LEA-GCM";
            case AES_CBC_HMAC -> "AES-CBC-HMAC";
            case ARIA_CBC_HMAC -> "ARIA-CBC-HMAC";
            case SEED_CBC_HMAC -> "SEED-CBC-HMAC";
            case TDES_CBC_HMAC -> "3DES-CBC-HMAC";
        };
    }

    /** The test key: bytes 0x00, 0x01, … truncated to the key length. Public; never use it for data. */
    static byte[] testKey(int length) {
        byte[] k = new byte[length];
        for (int i = 0; i < length; i++) {
            k[i] = (byte) i;
        }
        return k;
    }

    /** A fixed key id per algorithm and length (name-based UUID, so it is the same on every run). */
    static UUID testKeyId(CipherAlgorithm alg, int length) {
        return UUID.nameUUIDFromBytes(("mongo-fle-proxy test key " + alg + "-" + length * 8)
                .getBytes(StandardCharsets.UTF_8));
    }

    // BSON value bytes (as they follow the element name), written out by hand.
    static final int DOUBLE = 0x01;
    static final int STRING = 0x02;
    static final int DOCUMENT = 0x03;
    static final int ARRAY = 0x04;
    static final int BOOLEAN = 0x08;
    static final int NULL = 0x0a;
    static final int INT32 = 0x10;
    static final int INT64 = 0x12;

    static byte[] string(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(4 + utf8.length + 1).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        b.putInt(utf8.length + 1).put(utf8).put((byte) 0);
        return b.array();
    }

    static byte[] int32(int v) {
        return ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN).putInt(v).array();
    }

    static byte[] int64(long v) {
        return ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    static byte[] document(String json) {
        RawBsonDocument raw = RawBsonDocument.parse(json);
        ByteBuffer b = raw.getByteBuffer().asNIO();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    static List<Spec> specs() {
        List<Spec> s = new ArrayList<>();
        String ssn = "123-45-6789";
        // One per suite and variant, with the largest key of each algorithm.
        s.add(new Spec("AES-256-GCM, random, a string", CipherSuite.AES_GCM, false, 32,
                "hr.people", "ssn", STRING, string(ssn)));
        s.add(new Spec("AES-256-GCM, deterministic, a string", CipherSuite.AES_GCM, true, 32,
                "hr.people", "ssn", STRING, string(ssn)));
        s.add(new Spec("ARIA-256-GCM, random, a nested policy path", CipherSuite.ARIA_GCM, false, 32,
                "hr.people", "address.street", STRING, string("Main St 1")));
        s.add(new Spec("ARIA-256-GCM, deterministic, a string", CipherSuite.ARIA_GCM, true, 32,
                "hr.people", "ssn", STRING, string("987-65-4321")));
        s.add(new Spec("LEA-256-GCM, random, a 40-character string", CipherSuite.LEA_GCM, false, 32,
                "ycsb.usertable_lea", "field0", STRING, string("abcdefghijklmnopqrstuvwxyz0123456789ABCD")));
        s.add(new Spec("LEA-256-GCM, deterministic, an int32", CipherSuite.LEA_GCM, true, 32,
                "ycsb.usertable_lea", "field1", INT32, int32(42)));
        s.add(new Spec("AES-256-CBC-HMAC, random, an array (whole array as one value)", CipherSuite.AES_CBC_HMAC,
                false, 32, "hr.people", "phones", ARRAY, document("{\"0\": \"+82 2 123\", \"1\": 2}")));
        s.add(new Spec("AES-256-CBC-HMAC, deterministic, a string", CipherSuite.AES_CBC_HMAC, true, 32,
                "hr.people", "ssn", STRING, string(ssn)));
        s.add(new Spec("ARIA-256-CBC-HMAC, random, a string", CipherSuite.ARIA_CBC_HMAC, false, 32,
                "ycsb.usertable_aria", "field0", STRING, string("the quick brown fox jumps over the lazy dog")));
        s.add(new Spec("ARIA-256-CBC-HMAC, deterministic, an int64", CipherSuite.ARIA_CBC_HMAC, true, 32,
                "hr.people", "employeeNo", INT64, int64(1L << 40)));
        s.add(new Spec("SEED-128-CBC-HMAC, random, a 16-byte value (a whole block of padding)",
                CipherSuite.SEED_CBC_HMAC, false, 16, "hr.people", "ssn", STRING, string("12345678901")));
        s.add(new Spec("SEED-128-CBC-HMAC, deterministic, a string", CipherSuite.SEED_CBC_HMAC, true, 16,
                "hr.people", "ssn", STRING, string(ssn)));
        s.add(new Spec("3DES-CBC-HMAC, random, a string", CipherSuite.TDES_CBC_HMAC, false, 24,
                "ycsb.usertable_3des", "field0", STRING, string("legacy value")));
        s.add(new Spec("3DES-CBC-HMAC, deterministic, a string", CipherSuite.TDES_CBC_HMAC, true, 24,
                "hr.people", "ssn", STRING, string(ssn)));
        // 128-bit keys for the algorithms that take several lengths.
        s.add(new Spec("AES-128-GCM, deterministic, a string", CipherSuite.AES_GCM, true, 16,
                "hr.people", "ssn", STRING, string(ssn)));
        s.add(new Spec("AES-128-GCM, random, an embedded document", CipherSuite.AES_GCM, false, 16,
                "hr.people", "address", DOCUMENT, document("{\"street\": \"Main St 1\", \"zip\": 12345}")));
        s.add(new Spec("ARIA-128-GCM, random, a string", CipherSuite.ARIA_GCM, false, 16,
                "hr.people", "ssn", STRING, string(ssn)));
        s.add(new Spec("LEA-128-GCM, deterministic, null (empty plaintext)", CipherSuite.LEA_GCM, true, 16,
                "hr.people", "middleName", NULL, new byte[0]));
        s.add(new Spec("AES-128-CBC-HMAC, random, a boolean", CipherSuite.AES_CBC_HMAC, false, 16,
                "hr.people", "active", BOOLEAN, new byte[] {1}));
        s.add(new Spec("ARIA-128-CBC-HMAC, deterministic, a double", CipherSuite.ARIA_CBC_HMAC, true, 16,
                "hr.people", "salary", DOUBLE,
                ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putDouble(1234.5).array()));
        // Other contexts: the same key and value as the AES-256-GCM deterministic entry, elsewhere.
        s.add(new Spec("AES-256-GCM, deterministic, the same value as vector 2 in another field",
                CipherSuite.AES_GCM, true, 32, "hr.people", "taxId", STRING, string(ssn)));
        s.add(new Spec("AES-256-GCM, deterministic, the same value as vector 2 in another namespace",
                CipherSuite.AES_GCM, true, 32, "hr.staff", "ssn", STRING, string(ssn)));
        s.add(new Spec("AES-256-GCM, deterministic, non-ASCII namespace and path (UTF-8 in the context)",
                CipherSuite.AES_GCM, true, 32, "인사.직원", "주소.도로", STRING, string("서울")));
        s.add(new Spec("3DES-CBC-HMAC, deterministic, null (empty plaintext: one block of padding)",
                CipherSuite.TDES_CBC_HMAC, true, 24, "hr.people", "middleName", NULL, new byte[0]));
        return s;
    }

    public static void main(String[] args) throws IOException {
        Path out = Path.of(args.length > 0 ? args[0] : DEFAULT_OUT);
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, json(), StandardCharsets.UTF_8);
        System.out.println("wrote " + specs().size() + " vectors to " + out.toAbsolutePath());
    }

    static String json() {
        HexFormat hex = HexFormat.of();
        StringBuilder j = new StringBuilder();
        j.append("{\n");
        j.append("  \"description\": \"Envelope format v2 (docs/envelope-format.md, format byte 0x82) test vectors, "
                + "made by FieldCipher with fixed public test keys (bytes 00 01 02 ... truncated to the key "
                + "length). Checked independently by EnvelopeV2VectorsTest (Bouncy Castle low-level API) and "
                + "proxy/tests/test_envelope_vectors.py (pyca/cryptography). See README.md here.\",\n");
        j.append("  \"generator\": \"proxy/src/test/java/dev/fleproxy/crypto/EnvelopeV2VectorsGenerator.java\",\n");
        j.append("  \"regenerate\": \"cd proxy && mvn -B -ntp -o -q test-compile dependency:build-classpath "
                + "-Dmdep.includeScope=test -Dmdep.outputFile=target/test.classpath && java -cp "
                + "\\\"target/test-classes:target/classes:$(cat target/test.classpath)\\\" "
                + "dev.fleproxy.crypto.EnvelopeV2VectorsGenerator\",\n");
        j.append("  \"notes\": \"contextHex = UTF-8(namespace) 00 UTF-8(field) 00; bsonType is the original BSON "
                + "type byte; valueHex the BSON value bytes (the plaintext); envelopeHex = header(19) nonce "
                + "ciphertext tag(16). Random entries have random nonces, fixed when the file was generated; "
                + "deterministic entries are reproducible byte for byte.\",\n");
        j.append("  \"vectors\": [\n");
        List<Spec> specs = specs();
        for (int i = 0; i < specs.size(); i++) {
            Spec s = specs.get(i);
            byte[] k = testKey(s.keyBytes());
            UUID id = testKeyId(s.suite().algorithm(), s.keyBytes());
            DataKey key = new DataKey(id, s.suite().algorithm(), k);
            FieldCipher fc = FieldCipher.create(key, s.suite(), s.deterministic());
            byte[] context = Envelope.context(s.namespace(), s.field());
            byte[] env = fc.encrypt((byte) s.bsonType(), s.value(), context);
            // Self-check before writing anything: it opens, in its context only; deterministic repeats.
            FieldCipher.Plaintext back = fc.decrypt(env, context);
            if (back.bsonType() != (byte) s.bsonType() || !Arrays.equals(back.value(), s.value())
                    || (s.deterministic() && !Arrays.equals(env, fc.encrypt((byte) s.bsonType(), s.value(), context)))) {
                throw new IllegalStateException("vector " + (i + 1) + " does not round-trip");
            }
            j.append("    {\n");
            field(j, "id", Integer.toString(i + 1));
            field(j, "comment", quote(s.comment()));
            field(j, "suite", quote(designName(s.suite())));
            field(j, "deterministic", Boolean.toString(s.deterministic()));
            field(j, "keyHex", quote(hex.formatHex(k)));
            field(j, "keyId", quote(id.toString()));
            field(j, "namespace", quote(s.namespace()));
            field(j, "field", quote(s.field()));
            field(j, "contextHex", quote(hex.formatHex(context)));
            field(j, "bsonType", Integer.toString(s.bsonType()));
            field(j, "valueHex", quote(hex.formatHex(s.value())));
            j.append("      \"envelopeHex\": ").append(quote(hex.formatHex(env))).append('\n');
            j.append(i + 1 < specs.size() ? "    },\n" : "    }\n");
        }
        j.append("  ]\n}\n");
        return j.toString();
    }

    private static void field(StringBuilder j, String name, String value) {
        j.append("      \"").append(name).append("\": ").append(value).append(",\n");
    }

    private static String quote(String s) {
        StringBuilder q = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                q.append('\\').append(c);
            } else if (c < 0x20) {
                q.append(String.format("\\u%04x", (int) c));
            } else {
                q.append(c);
            }
        }
        return q.append('"').toString();
    }
}
