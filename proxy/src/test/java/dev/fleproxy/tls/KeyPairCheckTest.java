package dev.fleproxy.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.testing.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The key-belongs-to-certificate probe and the validity checks, on RSA and EC certificates made here. */
class KeyPairCheckTest {
    @TempDir
    static Path dir;
    private static TestPki pki;
    private static final Instant NOW = Instant.now();

    @BeforeAll
    static void pki() throws Exception {
        pki = new TestPki(dir, "check");
    }

    private static TestPki.Issued valid(String file, String algorithm) throws Exception {
        return pki.issue(file, algorithm, NOW.minus(Duration.ofDays(1)), NOW.plus(Duration.ofDays(90)));
    }

    private static String refused(TestPki.Issued cert, Path key, Instant now) {
        return assertThrows(ConfigException.class, () -> KeyPairCheck.check("tls", cert.certFile(), key, now))
                .getMessage();
    }

    @ParameterizedTest
    @ValueSource(strings = {"RSA", "EC"})
    void aCertificateAndItsOwnKeyPass(String algorithm) throws Exception {
        TestPki.Issued own = valid("own-" + algorithm, algorithm);
        assertEquals(own.cert(), KeyPairCheck.check("tls", own.certFile(), own.keyFile(), NOW));
    }

    @ParameterizedTest
    @ValueSource(strings = {"RSA", "EC"})
    void anotherKeyOfTheSameAlgorithmIsRefusedWithoutShowingIt(String algorithm) throws Exception {
        TestPki.Issued a = valid("a-" + algorithm, algorithm);
        TestPki.Issued b = valid("b-" + algorithm, algorithm);
        String why = refused(a, b.keyFile(), NOW);
        assertEquals("tls: the key " + b.keyFile() + " does not belong to the certificate " + a.certFile()
                + ": a signature made with the key does not verify with the certificate's public key", why);
        String keyText = Files.readString(b.keyFile());
        assertFalse(why.contains(keyText.substring(40, 80)), why); // no key material in the message
    }

    @Test
    void aKeyOfAnotherAlgorithmIsRefused() throws Exception {
        TestPki.Issued rsa = valid("rsa", "RSA");
        TestPki.Issued ec = valid("ec", "EC");
        assertTrue(refused(rsa, ec.keyFile(), NOW).endsWith("does not belong to the certificate " + rsa.certFile()
                + ": it is not an RSA key, as the certificate's is"));
        assertTrue(refused(ec, rsa.keyFile(), NOW).endsWith(": it is not an EC key, as the certificate's is"));
    }

    @Test
    void anExpiredCertificateIsRefused() throws Exception {
        TestPki.Issued old = pki.issue("expired", "EC", NOW.minus(Duration.ofDays(30)), NOW.minus(Duration.ofDays(1)));
        String why = refused(old, old.keyFile(), NOW);
        assertTrue(why.startsWith("tls: the certificate " + old.certFile() + " has expired: valid until "), why);
    }

    @Test
    void aCertificateNotValidYetIsRefused() throws Exception {
        TestPki.Issued early = pki.issue("early", "RSA", NOW.plus(Duration.ofDays(1)), NOW.plus(Duration.ofDays(30)));
        String why = refused(early, early.keyFile(), NOW);
        assertTrue(why.startsWith("tls: the certificate " + early.certFile() + " is not valid yet: valid from "), why);
    }

    @Test
    void aCertificateExpiringWithinFourteenDaysIsWarnedAbout() throws Exception {
        TestPki.Issued soon = pki.issue("soon", "EC", NOW.minus(Duration.ofDays(80)),
                NOW.plus(Duration.ofDays(9)).plus(Duration.ofHours(1)));
        // still good enough to serve
        assertEquals(soon.cert(), KeyPairCheck.check("tls", soon.certFile(), soon.keyFile(), NOW));
        String warning = ExpiryWarnings.warning("listener", soon.cert(), NOW);
        assertTrue(warning.startsWith("the listener TLS certificate (CN=server) expires in 9 days, on "), warning);
        assertTrue(ExpiryWarnings.warning("listener", soon.cert(), NOW.plus(Duration.ofDays(9)))
                .contains("expires in less than a day"));
        assertTrue(ExpiryWarnings.warning("listener", soon.cert(), NOW.plus(Duration.ofDays(10)))
                .contains(" expired on "));
        assertNull(ExpiryWarnings.warning("listener", valid("later", "RSA").cert(), NOW));
    }
}
