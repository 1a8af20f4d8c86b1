package dev.fleproxy.keys;

import dev.fleproxy.config.KmipConfig;
import dev.fleproxy.kmip.KmipClient;
import dev.fleproxy.kmip.KmipMessages;
import dev.fleproxy.kmip.KmipTls;
import java.time.Clock;
import java.time.Duration;
import javax.net.ssl.SSLContext;

/** Builds the KMS client and key resolver the proxy's {@code kmip:} configuration describes. */
public final class KeyResolvers {
    private KeyResolvers() {
    }

    public static KmipClient client(KmipConfig c) {
        SSLContext tls;
        if (c.clientPkcs12() != null) {
            tls = KmipTls.fromPkcs12(c.ca(), c.clientPkcs12(), c.clientPkcs12Password().toCharArray());
        } else {
            tls = KmipTls.fromPem(c.ca(), c.clientCert(), c.clientKey());
        }
        return new KmipClient(c.host(), c.port(), c.serverName(), tls, c.connectTimeoutMs(), c.readTimeoutMs(),
                c.connections(), KmipMessages.Version.V1_2);
    }

    public static KeyResolver resolver(KmipConfig c, KmipClient client) {
        // a refusal is remembered no longer than a key would be
        KeyResolver.Settings s = new KeyResolver.Settings(c.cacheTtl(), c.outageWindow(), min(c.negativeCache(), c.cacheTtl()),
                min(Duration.ofSeconds(5), c.cacheTtl()), c.connections());
        return new KeyResolver(new KmipKeySource(client, Clock.systemUTC()), s);
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
