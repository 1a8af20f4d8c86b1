package dev.fleproxy.keys;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.config.KmipConfig;
import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.CipherSuite;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.crypto.FieldCipher;
import dev.fleproxy.kmip.KmipClient;
import dev.fleproxy.testing.Eventually;
import dev.fleproxy.testing.KmsFixture;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The resolver against a real PyKMIP server over mutual TLS, set up by the kms CLI. */
class KeyResolverKmsTest {
    private static final byte[] CONTEXT = dev.fleproxy.crypto.Envelope.context("db.coll", "field");

    private static KmsFixture kms;

    @BeforeAll
    static void start() throws Exception {
        kms = KmsFixture.start();
    }

    @AfterAll
    static void stop() throws Exception {
        kms.close();
    }

    private static UUID create(String alg, int bits, String... extra) throws Exception {
        String[] args = new String[7 + extra.length];
        String[] base = {"create", "--dir", kms.dir().toString(), "--alg", alg, "--bits", String.valueOf(bits)};
        System.arraycopy(base, 0, args, 0, base.length);
        System.arraycopy(extra, 0, args, base.length, extra.length);
        String out = kms.run(args).strip();
        String last = out.substring(out.lastIndexOf('\n') + 1);
        return UUID.fromString(last.split("\\|")[0].trim());
    }

    private static final class Setup implements AutoCloseable {
        final KmipClient client;
        final KeyResolver resolver;

        Setup(KmipConfig c) {
            client = KeyResolvers.client(c);
            resolver = KeyResolvers.resolver(c, client);
        }

        @Override
        public void close() {
            resolver.close();
            client.close();
        }
    }

    /** Whether the resolver refuses the key now. */
    private static boolean refused(Runnable use) {
        try {
            use.run();
            return false;
        } catch (KeyAccessException e) {
            return true;
        }
    }

    private static Setup setup(Duration ttl) {
        return new Setup(kms.config(ttl, Duration.ofSeconds(60)));
    }

    @Test
    void everyBootstrappedKeyResolvesWithItsAlgorithmAndEncrypts() throws Exception {
        Map<String, String> extra = kms.extraKeys();
        Object[][] expected = {
            {KmsFixture.AES_256, CipherAlgorithm.AES, 256},
            {KmsFixture.ARIA_256, CipherAlgorithm.ARIA, 256},
            {KmsFixture.TDES, CipherAlgorithm.TRIPLE_DES, 192},
            {extra.get("SEED-128"), CipherAlgorithm.SEED, 128},
            {extra.get("LEA-256"), CipherAlgorithm.LEA, 256},
            {extra.get("AES-128"), CipherAlgorithm.AES, 128},
            {extra.get("ARIA-128"), CipherAlgorithm.ARIA, 128},
        };
        try (Setup s = setup(Duration.ofMinutes(5))) {
            for (Object[] e : expected) {
                UUID id = UUID.fromString((String) e[0]);
                ResolvedKey k = s.resolver.resolve(id);
                assertEquals(e[1], k.key().algorithm(), id.toString());
                assertEquals(e[2], k.key().bits(), id.toString());
                assertEquals(KeyState.ACTIVE, k.state());
                DataKey key = s.resolver.forEncryption(id);
                FieldCipher fc = FieldCipher.create(key, CipherSuite.defaultFor(key.algorithm()), false);
                assertArrayEquals(new byte[] {1, 2, 3}, fc.decrypt(fc.encrypt((byte) 5, new byte[] {1, 2, 3}, CONTEXT), CONTEXT).value());
            }
        }
    }

    @Test
    void afterWarmUpTheDataPathMakesNoKmipRoundTrip() {
        try (Setup s = setup(Duration.ofMinutes(5))) {
            UUID id = UUID.fromString(KmsFixture.AES_256);
            s.resolver.forEncryption(id);
            long trips = s.client.roundTrips();
            long fetches = s.resolver.kmsFetches();
            for (int i = 0; i < 10_000; i++) {
                s.resolver.forEncryption(id);
                s.resolver.forDecryption(id);
            }
            assertEquals(trips, s.client.roundTrips());
            assertEquals(fetches, s.resolver.kmsFetches());
            assertEquals(3, trips, "Locate, Get, GetAttributes");
        }
    }

    @Test
    void aRevokedKeyDecryptsButNoLongerEncryptsAndADestroyedOneDoesNeither() throws Exception {
        UUID id = create("AES", 256, "--activate");
        try (Setup s = setup(Duration.ofSeconds(1))) {
            s.resolver.forEncryption(id);
            kms.run("revoke", "--dir", kms.dir().toString(), id.toString());
            // within about the TTL (1 s): a refresh begun before the revocation may still bring Active
            Eventually.await(() -> refused(() -> s.resolver.forEncryption(id)), "the revocation seen");
            KeyAccessException e = assertThrows(KeyAccessException.class, () -> s.resolver.forEncryption(id));
            assertEquals(KeyAccessException.Reason.WRONG_STATE, e.reason());
            assertTrue(e.getMessage().contains("is Deactivated; only Active keys encrypt"), e.getMessage());
            s.resolver.forDecryption(id);

            kms.run("destroy", "--dir", kms.dir().toString(), id.toString());
            Eventually.await(() -> refused(() -> s.resolver.forDecryption(id)), "the destruction seen");
            KeyAccessException enc = assertThrows(KeyAccessException.class, () -> s.resolver.forEncryption(id));
            KeyAccessException dec = assertThrows(KeyAccessException.class, () -> s.resolver.forDecryption(id));
            assertEquals(enc.reason(), dec.reason());
            assertTrue(enc.getMessage().contains(id.toString()), enc.getMessage());
        }
    }

    @Test
    void aKmsOutageIsBridgedForTheWindowThenFailsClosedAndRecovers() throws Exception {
        UUID id = UUID.fromString(KmsFixture.ARIA_256);
        KmipConfig c = kms.config(Duration.ofSeconds(1), Duration.ofSeconds(3));
        try (Setup s = new Setup(c)) {
            s.resolver.forEncryption(id);
            kms.killServer();
            try {
                Thread.sleep(1500); // past the TTL, inside the window
                s.resolver.forEncryption(id);
                assertTrue(s.resolver.staleServes() >= 1);
                Thread.sleep(3000); // past TTL + window
                KeyAccessException e = assertThrows(KeyAccessException.class, () -> s.resolver.forDecryption(id));
                assertEquals(KeyAccessException.Reason.KMS_UNAVAILABLE, e.reason());
                assertTrue(e.getMessage().contains("unreachable"), e.getMessage());
            } finally {
                kms.startServer();
            }
            Thread.sleep(5500); // the retry interval (5 s at most) passes
            s.resolver.forEncryption(id);
        }
    }

    @Test
    void unknownUuidsAndDuplicateNamesAreRefusedPrecisely() throws Exception {
        try (Setup s = setup(Duration.ofMinutes(5))) {
            UUID unknown = UUID.randomUUID();
            KeyAccessException e = assertThrows(KeyAccessException.class, () -> s.resolver.forEncryption(unknown));
            assertEquals(KeyAccessException.Reason.UNKNOWN_KEY, e.reason());
            assertTrue(e.getMessage().contains("no key named " + unknown), e.getMessage());

            UUID twice = UUID.randomUUID();
            create("AES", 128, "--name", twice.toString());
            create("AES", 128, "--name", twice.toString());
            KeyAccessException dup = assertThrows(KeyAccessException.class, () -> s.resolver.forEncryption(twice));
            assertEquals(KeyAccessException.Reason.DUPLICATE_NAME, dup.reason());
            assertTrue(dup.getMessage().contains("2 keys in KMS 127.0.0.1:" + kms.port() + " are named " + twice
                    + " (0 of them Active"), dup.getMessage());
        }
    }

    @Test
    void theWrongClientCertificateIsAClearError() throws Exception {
        // The KMS's own server certificate: signed by the right CA, but not for clientAuth. The
        // server's OpenSSL 3 rejects its purpose after the handshake (older ones let it through and
        // PyKMIP answered AUTHENTICATION_NOT_SUCCESSFUL).
        KmipConfig serverCert = kms.config(Duration.ofMinutes(5), Duration.ofSeconds(60),
                kms.dir().resolve("server.pem"), kms.dir().resolve("server.key"));
        try (Setup s = new Setup(serverCert)) {
            KeyAccessException e = assertThrows(KeyAccessException.class,
                    () -> s.resolver.forEncryption(UUID.fromString(KmsFixture.AES_256)));
            assertTrue(e.getMessage().contains("rejected this client's certificate")
                    || e.getMessage().contains("AUTHENTICATION_NOT_SUCCESSFUL"), e.getMessage());
        }
        // A certificate from another CA: rejected by the server the same way.
        java.nio.file.Path other = java.nio.file.Files.createTempDirectory("other-ca");
        kms.run("init", "--dir", other.toString(), "--port", "1");
        KmipConfig foreign = kms.config(Duration.ofMinutes(5), Duration.ofSeconds(60), other.resolve("proxy.pem"),
                other.resolve("proxy.key"));
        try (Setup s = new Setup(foreign)) {
            KeyAccessException e = assertThrows(KeyAccessException.class,
                    () -> s.resolver.forEncryption(UUID.fromString(KmsFixture.AES_256)));
            assertTrue(e.getMessage().contains("rejected this client's certificate")
                    || e.getMessage().contains("TLS with the KMS at 127.0.0.1:" + kms.port() + " failed"), e.getMessage());
        }
    }

    @Test
    void aKmsCertificateFromAnotherCaIsRefusedByTheProxy() throws Exception {
        java.nio.file.Path other = java.nio.file.Files.createTempDirectory("other-ca");
        kms.run("init", "--dir", other.toString(), "--port", "1");
        KmipConfig c = new KmipConfig(new KmipConfig.Server("127.0.0.1", kms.port(), null),
                KmipConfig.Identity.pem(other.resolve("ca.pem"), kms.dir().resolve("proxy.pem"), kms.dir().resolve("proxy.key")),
                KmipConfig.Cache.of(Duration.ofMinutes(5), Duration.ofSeconds(60)), KmipConfig.Pool.of(2000, 10_000));
        try (Setup s = new Setup(c)) {
            KeyAccessException e = assertThrows(KeyAccessException.class,
                    () -> s.resolver.forEncryption(UUID.fromString(KmsFixture.AES_256)));
            assertTrue(e.getMessage().contains("TLS with the KMS at 127.0.0.1:" + kms.port() + " failed"), e.getMessage());
        }
    }

    @Test
    void aPkcs12ClientIdentityWorksToo() throws Exception {
        KmipConfig c = kms.pkcs12Config(Duration.ofMinutes(5));
        try (Setup s = new Setup(c)) {
            assertEquals(CipherAlgorithm.TRIPLE_DES, s.resolver.forEncryption(UUID.fromString(KmsFixture.TDES)).algorithm());
        }
    }
}
