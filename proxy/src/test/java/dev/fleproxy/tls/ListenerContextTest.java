package dev.fleproxy.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.config.ListenerTls;
import dev.fleproxy.testing.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A reload applies a good pair and keeps the certificate in force when the new key is not the new certificate's. */
class ListenerContextTest {
    @TempDir
    Path dir;

    @Test
    void aReloadOfAMismatchedPairKeepsTheCertificateInForce() throws Exception {
        TestPki pki = new TestPki(dir, "reload");
        Instant now = Instant.now();
        TestPki.Issued first = pki.issue("first", "EC", now.minus(Duration.ofDays(1)), now.plus(Duration.ofDays(90)));
        TestPki.Issued second = pki.issue("second", "EC", now.minus(Duration.ofDays(1)), now.plus(Duration.ofDays(90)));
        TestPki.Issued stranger = pki.issue("stranger", "EC", now.minus(Duration.ofDays(1)), now.plus(Duration.ofDays(90)));
        Path cert = dir.resolve("live.pem");
        Path key = dir.resolve("live.key");
        Files.copy(first.certFile(), cert);
        Files.copy(first.keyFile(), key);
        try (ListenerContext tls = ListenerContext.start(new ListenerTls(cert, key, null, ListenerTls.ClientAuth.NONE))) {
            assertEquals(first.cert(), tls.certificate());
            Files.copy(second.certFile(), cert, StandardCopyOption.REPLACE_EXISTING);
            Files.copy(stranger.keyFile(), key, StandardCopyOption.REPLACE_EXISTING);
            assertFalse(tls.reload("test"));
            assertEquals(first.cert(), tls.certificate());
            Files.copy(second.keyFile(), key, StandardCopyOption.REPLACE_EXISTING);
            assertTrue(tls.reload("test"));
            assertEquals(second.cert(), tls.certificate());
        }
    }
}
