package dev.fleproxy.tls;

import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which TLS implementation serves the proxy's connections: BoringSSL through netty-tcnative where
 * its native library loads (faster handshakes and records, and AES-GCM without the JDK's
 * per-record allocations), else the JDK's. Decided once, logged once.
 */
public final class TlsProvider {
    private static final Logger log = LoggerFactory.getLogger(TlsProvider.class);
    private static volatile SslProvider chosen;

    /** The protocols offered on every hop: TLS 1.3, and 1.2 for peers that lack it. */
    static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    private TlsProvider() {
    }

    public static SslProvider get() {
        SslProvider p = chosen;
        if (p == null) {
            synchronized (TlsProvider.class) {
                if (chosen == null) {
                    if (OpenSsl.isAvailable()) {
                        chosen = SslProvider.OPENSSL;
                        log.info("TLS by {} (netty-tcnative)", OpenSsl.versionString());
                    } else {
                        chosen = SslProvider.JDK;
                        log.info("TLS by the JDK (netty-tcnative does not load here: {})",
                                String.valueOf(OpenSsl.unavailabilityCause()));
                    }
                }
                p = chosen;
            }
        }
        return p;
    }

    /** A name for logs and reports: "BoringSSL …" or "JDK". */
    public static String describe() {
        return get() == SslProvider.OPENSSL ? OpenSsl.versionString() : "JDK";
    }
}
