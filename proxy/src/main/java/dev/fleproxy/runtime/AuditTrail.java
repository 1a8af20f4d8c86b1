package dev.fleproxy.runtime;

import dev.fleproxy.audit.AuditLog;
import dev.fleproxy.config.AuditConfig;
import dev.fleproxy.config.ConfigException;
import dev.fleproxy.crypto.ChainMac;
import dev.fleproxy.keys.KeyAccessException;
import dev.fleproxy.keys.KeyResolver;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens the audit trail at start: its key fetched from the KMS (the start fails without it: a
 * proxy told to audit does not serve unaudited), the chain resumed from the newest file.
 */
final class AuditTrail {
    private static final Logger log = LoggerFactory.getLogger(AuditTrail.class);

    private AuditTrail() {
    }

    /** @param instance the proxy's name, in every line */
    static AuditLog open(AuditConfig c, KeyResolver resolver, Path configFile, String instance) {
        if (c == null) {
            return null;
        }
        ChainMac mac;
        try {
            mac = ChainMac.of(resolver.resolve(c.key()).key());
        } catch (KeyAccessException e) {
            throw new ConfigException(configFile + ": audit.key " + c.key() + " cannot be fetched from the KMS ("
                    + e.getMessage() + "); the proxy does not serve without its audit trail");
        }
        // resolved here, at start, never on the writer's way to an event loop
        java.net.InetSocketAddress syslog = c.syslog() == null ? null
                : new java.net.InetSocketAddress(c.syslog().host(), c.syslog().port());
        AuditLog audit;
        try {
            audit = new AuditLog(c.file(), mac, c.rotateBytes(), c.rotateEvery(), c.queue(),
                    c.dropWhenFull() ? AuditLog.OnFull.DROP : AuditLog.OnFull.REFUSE, c.stdout(), syslog, c.fsync(),
                    instance);
        } catch (IllegalStateException | java.io.UncheckedIOException e) {
            // expected conditions (a trail it cannot go on from, a file it cannot write): one line, no trace
            throw new ConfigException(configFile + ": audit.file: " + e.getMessage(), e);
        }
        log.info("audit trail: {} of instance {} (rotated past {} bytes{}; when {} lines wait: {}{})", c.file(), instance,
                c.rotateBytes(),
                c.rotateEvery().isZero() ? "" : " or " + c.rotateEvery().toSeconds() + " s", c.queue(),
                c.dropWhenFull() ? "drop, counted" : "refuse requests", c.fsync() ? "; fsync per batch" : "");
        return audit;
    }
}
