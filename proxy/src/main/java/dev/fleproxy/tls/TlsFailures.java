package dev.fleproxy.tls;

import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;

/** A failed handshake in a few words a person can act on: untrusted, wrong host, expired, or the TLS message. */
public final class TlsFailures {
    private TlsFailures() {
    }

    public static String describe(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof io.netty.handler.ssl.NotSslRecordException) {
                // its message holds a hex dump of what arrived: a plaintext client's credentials, maybe
                return "the peer does not speak TLS (a client without tls=true?)";
            }
        }
        String all = "";
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof CertificateExpiredException) {
                return "its certificate has expired (" + c.getMessage() + ")";
            }
            if (c instanceof CertificateNotYetValidException) {
                return "its certificate is not valid yet (" + c.getMessage() + ")";
            }
            if (c instanceof CertPathValidatorException cp && cp.getReason() != null
                    && cp.getReason().toString().equals("EXPIRED")) {
                return "its certificate has expired";
            }
            String m = String.valueOf(c.getMessage());
            all += " " + m;
            if (m.contains("No subject alternative") || m.contains("doesn't match") || m.contains("not match")) {
                return "its certificate does not name this host (" + m + ")";
            }
        }
        if (all.contains("PEER_DID_NOT_RETURN_A_CERTIFICATE") || all.contains("Empty client certificate chain")
                || all.contains("certificate_required")) {
            return "the peer presented no certificate, and one is required";
        }
        if (all.contains("expired")) {
            return "its certificate has expired";
        }
        if (all.contains("unable to find valid certification path") || all.contains("PKIX path")
                || all.contains("certificate_unknown") || all.contains("unknown ca") || all.contains("CERTIFICATE_VERIFY_FAILED")) {
            return "its certificate is not trusted (not issued by the configured CA)";
        }
        return "TLS handshake failed: " + t.getMessage();
    }
}
