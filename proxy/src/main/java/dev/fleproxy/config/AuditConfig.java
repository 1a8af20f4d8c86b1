package dev.fleproxy.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;

/**
 * The audit trail ({@code audit:}; docs/access.md, "The audit trail"):
 *
 * <pre>
 * audit:
 *   file: /var/log/fle-proxy/audit.log   # rotated to audit.log.000001, .000002, …
 *   key: 3b9c…                           # the KMIP key the chain's MAC is derived from
 *   rotateBytes: 104857600               # optional
 *   rotateSeconds: 86400                 # optional; 0: by size only
 *   queue: 10000                         # optional: lines waiting for the writer at most
 *   onFull: refuse                       # optional: refuse (requests wait for no line) or drop (counted)
 *   stdout: false                        # optional: every line on standard output too
 *   fsync: false                         # optional: each batch forced to the disk before its answers go
 *   syslog: 127.0.0.1:514                # optional: every line to syslog over UDP (RFC 5424) too
 * </pre>
 */
public record AuditConfig(Path file, UUID key, long rotateBytes, Duration rotateEvery, int queue, boolean dropWhenFull,
                          boolean stdout, HostPort syslog, boolean fsync) {
    static AuditConfig parse(YamlMap m) {
        m.allowOnlySection("audit");
        UUID key;
        try {
            key = UUID.fromString(m.string("key"));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(m.where("key") + " must be a key UUID");
        }
        ConfigSchema.Setting bytes = ConfigSchema.AUDIT_ROTATE_BYTES;
        Object rb = m.raw("rotateBytes");
        long rotateBytes = bytes.longDefault();
        if (rb != null) {
            if (!(rb instanceof Number n) || n.longValue() < bytes.min() || n.longValue() > bytes.max()) {
                throw new ConfigException(m.where("rotateBytes") + " must be an integer " + bytes.min() + "-" + bytes.max());
            }
            rotateBytes = n.longValue();
        }
        String onFull = m.string("onFull", ConfigSchema.AUDIT_ON_FULL.dflt());
        if (!onFull.equals("refuse") && !onFull.equals("drop")) {
            throw new ConfigException(m.where("onFull") + " must be refuse or drop, not " + onFull);
        }
        Object stdout = m.raw("stdout");
        if (stdout != null && !(stdout instanceof Boolean)) {
            throw new ConfigException(m.where("stdout") + " must be true or false");
        }
        Object fsync = m.raw("fsync");
        if (fsync != null && !(fsync instanceof Boolean)) {
            throw new ConfigException(m.where("fsync") + " must be true or false");
        }
        return new AuditConfig(m.path("file"), key, rotateBytes,
                Duration.ofSeconds(m.integer(ConfigSchema.AUDIT_ROTATE_SECONDS)), m.integer(ConfigSchema.AUDIT_QUEUE),
                onFull.equals("drop"), Boolean.TRUE.equals(stdout),
                m.has("syslog") ? HostPort.parse(m.string("syslog"), m.where("syslog")) : null, Boolean.TRUE.equals(fsync));
    }
}
