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
        KmipConfig.Identity id = c.identity();
        SSLContext tls;
        if (id.clientPkcs12() != null) {
            tls = KmipTls.fromPkcs12(id.ca(), id.clientPkcs12(), id.clientPkcs12Password().toCharArray());
        } else {
            tls = KmipTls.fromPem(id.ca(), id.clientCert(), id.clientKey());
        }
        KmipConfig.Server kms = c.server();
        return new KmipClient(new KmipClient.Endpoint(kms.host(), kms.port(), kms.serverName()), tls,
                c.pool().connectTimeoutMs(), c.pool().readTimeoutMs(), c.pool().connections(), KmipMessages.Version.V1_2);
    }

    public static KeyResolver resolver(KmipConfig c, KmipClient client) {
        // a refusal is remembered no longer than a key would be
        KmipConfig.Cache k = c.cache();
        KeyResolver.Settings s = new KeyResolver.Settings(k.ttl(), k.outageWindow(), min(k.negativeCache(), k.ttl()),
                min(Duration.ofSeconds(5), k.ttl()), c.pool().connections());
        return new KeyResolver(new KmipKeySource(client, Clock.systemUTC()), s);
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }
}
