package dev.fleproxy.cli;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.KmipConfig;
import dev.fleproxy.config.ListenerTls;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.config.UpstreamTls;
import dev.fleproxy.crypto.PemFiles;
import dev.fleproxy.kmip.KmipException;
import dev.fleproxy.kmip.KmipTls;
import dev.fleproxy.tls.ExpiryWarnings;
import dev.fleproxy.tls.KeyPairCheck;
import dev.fleproxy.tls.ListenerContext;
import dev.fleproxy.tls.UpstreamContext;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Collections;
import java.util.List;

/**
 * The certificate files of {@code tls:}, {@code upstreamTls:} and {@code kmip:}: they load as the
 * proxy loads them ({@link ListenerContext}, {@link UpstreamContext}, {@link KmipTls}), each key
 * is its certificate's ({@link KeyPairCheck}), and every certificate, CAs included, is within its
 * validity period: FAIL outside it, WARN within {@link ExpiryWarnings#SOON} of its end, the
 * proxy's own warning. Messages name files and subjects, never key material.
 */
final class CertificateCheck {
    private final CheckReport report;
    private final Instant now;

    CertificateCheck(CheckReport report, Instant now) {
        this.report = report;
        this.now = now;
    }

    void run(ProxyConfig cfg) {
        if (cfg.listener().tls() == null && cfg.upstream().tls() == null && cfg.kmip() == null) {
            report.ok("certificates: none configured (no tls:, upstreamTls: or kmip:)");
            return;
        }
        if (cfg.listener().tls() != null) {
            listener(cfg.listener().tls());
        }
        if (cfg.upstream().tls() != null) {
            upstream(cfg.upstream().tls(), cfg);
        }
        if (cfg.kmip() != null) {
            kmip(cfg.kmip());
        }
    }

    private void listener(ListenerTls t) {
        if (!exist("tls.cert", t.cert()) | !exist("tls.key", t.key())
                | (t.clientCA() != null && !exist("tls.clientCA", t.clientCA()))) {
            return;
        }
        try {
            leaf("tls", "listener", t.cert(), ListenerContext.verify(t));
        } catch (RuntimeException e) {
            report.fail(message("tls", e));
            return;
        }
        if (t.clientCA() != null) {
            authority("tls.clientCA", "client CA", t.clientCA());
        }
    }

    private void upstream(UpstreamTls t, ProxyConfig cfg) {
        if (!exist("upstreamTls.ca", t.ca()) | (t.cert() != null && (!exist("upstreamTls.cert", t.cert())
                | !exist("upstreamTls.key", t.key())))) {
            return;
        }
        UpstreamContext context;
        try {
            context = UpstreamContext.of(t, cfg.upstream().address());
        } catch (RuntimeException e) {
            report.fail(message("upstreamTls", e));
            return;
        }
        if (context.clientCertificate() != null) {
            leaf("upstreamTls", "upstream_client", t.cert(), context.clientCertificate());
        }
        authority("upstreamTls.ca", "upstream CA", t.ca());
    }

    private void kmip(KmipConfig k) {
        boolean p12 = k.identity().clientPkcs12() != null;
        if (!exist("kmip.ca", k.identity().ca()) | (p12 ? !exist("kmip.clientPkcs12", k.identity().clientPkcs12())
                : !exist("kmip.clientCert", k.identity().clientCert()) | !exist("kmip.clientKey", k.identity().clientKey()))) {
            return;
        }
        try {
            if (p12) {
                char[] password = k.identity().clientPkcs12Password().toCharArray();
                KmipTls.fromPkcs12(k.identity().ca(), k.identity().clientPkcs12(), password);
                leaf("kmip", "KMIP client", k.identity().clientPkcs12(), pkcs12Leaf(k.identity().clientPkcs12(), password));
            } else {
                X509Certificate leaf = KeyPairCheck.check("kmip", k.identity().clientCert(), k.identity().clientKey(), now);
                KmipTls.fromPem(k.identity().ca(), k.identity().clientCert(), k.identity().clientKey());
                leaf("kmip", "KMIP client", k.identity().clientCert(), leaf);
            }
        } catch (ConfigException | KmipException e) {
            report.fail(message("kmip", e));
            return;
        }
        authority("kmip.ca", "KMIP CA", k.identity().ca());
    }

    /** False (and a FAIL) if the file named by this config key is missing or unreadable. */
    private boolean exist(String key, Path file) {
        if (!Files.exists(file)) {
            report.fail(key + ": " + file + " does not exist");
            return false;
        }
        if (!Files.isReadable(file) || Files.isDirectory(file)) {
            report.fail(key + ": " + file + " is not a readable file");
            return false;
        }
        return true;
    }

    /** A leaf certificate that loaded with its key: ok, or WARN/FAIL for its dates. */
    private void leaf(String section, String name, Path file, X509Certificate c) {
        if (dates(section, name, c)) {
            report.ok(section + ": certificate " + file + " (" + subject(c) + ") and its key load and belong together, "
                    + "valid until " + c.getNotAfter().toInstant());
        }
    }

    /** A CA file: every certificate in it parses and is within its dates. */
    private void authority(String key, String name, Path file) {
        List<X509Certificate> certs;
        try {
            certs = PemFiles.certificates(file);
        } catch (IOException | GeneralSecurityException e) {
            report.fail(key + ": cannot read " + file + ": " + e.getMessage());
            return;
        }
        boolean good = true;
        for (X509Certificate c : certs) {
            good &= dates(key, name, c);
        }
        if (good) {
            report.ok(key + ": " + file + ": " + certs.size() + " CA certificate(s), " + subject(certs.get(0))
                    + " valid until " + certs.get(0).getNotAfter().toInstant());
        }
    }

    /** FAIL if the certificate is not valid now, WARN if it ends within SOON; true if neither. */
    private boolean dates(String section, String name, X509Certificate c) {
        Instant from = c.getNotBefore().toInstant();
        if (now.isBefore(from)) {
            report.fail(section + ": the " + name + " TLS certificate (" + subject(c) + ") is not valid yet: valid from "
                    + from);
            return false;
        }
        String warning = ExpiryWarnings.warning(name, c, now);
        if (warning == null) {
            return true;
        }
        if (now.isAfter(c.getNotAfter().toInstant())) {
            report.fail(section + ": " + warning);
        } else {
            report.warn(section + ": " + warning);
        }
        return false;
    }

    /** The certificate of the PKCS#12 file's (first) key entry. */
    private static X509Certificate pkcs12Leaf(Path p12, char[] password) {
        try (InputStream in = Files.newInputStream(p12)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, password);
            for (String alias : Collections.list(ks.aliases())) {
                if (ks.isKeyEntry(alias) && ks.getCertificate(alias) instanceof X509Certificate c) {
                    return c;
                }
            }
            throw new ConfigException("kmip.clientPkcs12: " + p12 + " holds no key with a certificate");
        } catch (IOException | GeneralSecurityException e) {
            throw new ConfigException("kmip.clientPkcs12: cannot read " + p12 + ": " + e.getMessage(), e);
        }
    }

    private static String subject(X509Certificate c) {
        return c.getSubjectX500Principal().getName();
    }

    /** The exception's message, prefixed with the section unless it already starts with it. */
    private static String message(String section, RuntimeException e) {
        String m = String.valueOf(e.getMessage());
        return m.startsWith(section) ? m : section + ": " + m;
    }
}
