package dev.fleproxy.runtime;

import dev.fleproxy.admin.AdminServer;
import dev.fleproxy.access.AccessFilter;
import dev.fleproxy.rewrite.write.DuplicateKeyFilter;
import dev.fleproxy.access.AuditFilter;
import dev.fleproxy.admission.AdmissionGate;
import dev.fleproxy.audit.AuditLog;
import dev.fleproxy.admin.PrometheusLint;
import dev.fleproxy.admin.ProxyGauges;
import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.crypto.CryptoStats;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.KeyResolvers;
import dev.fleproxy.keys.PolicyKeyCheck;
import dev.fleproxy.keys.PolicyValidator;
import dev.fleproxy.kmip.KmipClient;
import dev.fleproxy.metrics.ProxyMetrics;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.policy.PolicyHolder;
import dev.fleproxy.policy.PolicyParser;
import dev.fleproxy.rewrite.EncryptionFilter;
import dev.fleproxy.rewrite.read.EvaluationMemory;
import dev.fleproxy.rewrite.read.EvaluationPool;
import dev.fleproxy.server.AuthenticationWatch;
import dev.fleproxy.server.HandshakeFilter;
import dev.fleproxy.server.MessageFilter;
import dev.fleproxy.server.ProxyServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole proxy, assembled from its config file: the KMS client and key resolver (if the file
 * has {@code kmip:}), the policy (validated against the KMS, keys warmed into the cache, reloaded
 * on SIGHUP or file change), the handshake and encryption filters, the server, and (with {@code
 * admin:}) the metrics and the admin listener.
 */
public final class ProxyRuntime implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ProxyRuntime.class);

    private final ProxyServer server;
    private final PolicyHolder policy;
    private final KeyResolver resolver;
    private final KmipClient kmip;
    /** The audit trail, or null without {@code audit:}. */
    private final AuditLog audit;
    private AdminServer admin;
    private ProxyGauges gauges;
    /** Memory given back to the system after bursts (native heap trimmed, heap uncommitted). */
    private final MemoryReturn memoryReturn = MemoryReturn.start();

    private ProxyRuntime(ProxyServer server, PolicyHolder policy, KeyResolver resolver, KmipClient kmip, AuditLog audit) {
        this.audit = audit;
        this.server = server;
        this.policy = policy;
        this.resolver = resolver;
        this.kmip = kmip;
    }

    /** Starts from a config file; a definitive policy error (unknown key, wrong suite) fails the start. */
    public static ProxyRuntime start(Path configFile) throws Exception {
        return start(configFile, ProxyConfig.load(configFile));
    }

    /** Starts from a config file already loaded (the file is still read again on every reload). */
    public static ProxyRuntime start(Path configFile, ProxyConfig config) throws Exception {
        String plaintext = config.plaintextListenProblem();
        if (plaintext != null) {
            throw new ConfigException(configFile + ": " + plaintext);
        }
        Policy startPolicy = PolicyParser.parse(config.policySection());
        PrometheusMeterRegistry registry = config.admin() != null ? PrometheusLint.newRegistry() : null;
        ProxyMetrics metrics = registry != null ? new ProxyMetrics(registry) : ProxyMetrics.DISABLED;
        if (registry != null) {
            CryptoStats.enable();
        }
        Opened opened = new Opened();
        try {
            if (config.kmip() != null) {
                opened.kmip = KeyResolvers.client(config.kmip());
                opened.resolver = KeyResolvers.resolver(config.kmip(), opened.kmip);
                metrics.observeKms(opened.resolver); // from the start-up fetches on
                PolicyValidator.validate(startPolicy, opened.resolver, configFile.toString()).forEach(log::warn);
            }
            KeyResolver resolver = opened.resolver;
            PolicyHolder holder = new PolicyHolder(configFile, config, startPolicy,
                    resolver != null ? PolicyKeyCheck.forReloads(resolver, configFile.toString()) : null);
            opened.policy = holder;
            // SIGHUP's handler is in place before the port opens: whoever sees the port may send one
            // (without a handler the JVM's default is to exit)
            holder.watch();
            opened.audit = AuditTrail.open(config.audit(), resolver, configFile, config.instanceName());
            // one per process: a driver in load-balanced mode clears its connections to a serviceId
            // that failed, and a restarted proxy holds none of the old one's cursors or transactions
            org.bson.types.ObjectId serviceId = new org.bson.types.ObjectId();
            ProxyServer server = ProxyServer.start(config, filters(config, holder, resolver, metrics, opened.audit,
                    serviceId), metrics);
            // after the start: a start that fails says so in its one line, and nothing else
            log.info("instance {}; load-balanced clients know it as serviceId {}", config.instanceName(),
                    serviceId.toHexString());
            metrics.instance(config.instanceName(), serviceId.toHexString());
            if (!startPolicy.isEmpty()) {
                log.info("encrypting {} collection(s): {}", startPolicy.collections().size(),
                        dev.fleproxy.policy.PolicyChanges.names(startPolicy.collections().keySet()));
            }
            warnIfTheHeapCannotHoldEvaluations(config.listener().limits().maxEvaluationBytes());
            ProxyRuntime runtime = new ProxyRuntime(server, holder, resolver, opened.kmip, opened.audit);
            if (registry != null) {
                runtime.startAdmin(configFile, config, registry, metrics);
            }
            return runtime;
        } catch (Exception | Error e) {
            opened.close();
            throw e;
        }
    }

    /**
     * The heap must hold what evaluated queries may keep (docs/operations.md, "Memory"): a limit
     * under it would end in OutOfMemoryError where the budget meant 9720013.
     */
    private static void warnIfTheHeapCannotHoldEvaluations(long maxEvaluationBytes) {
        long heap = Runtime.getRuntime().maxMemory();
        if (heap < maxEvaluationBytes + 128L * 1024 * 1024) {
            log.warn("the JVM's heap limit ({} MiB) is under maxEvaluationBytes ({} MiB) + 128 MiB: evaluated queries "
                    + "may exhaust it; raise -Xmx or lower maxEvaluationBytes", heap >> 20, maxEvaluationBytes >> 20);
        }
    }

    /** The admission gate, the handshake filter, then (with a KMS) the audit trail, the access rules and the encryption filter. */
    private static List<MessageFilter> filters(ProxyConfig config, PolicyHolder holder, KeyResolver resolver,
                                               ProxyMetrics metrics, AuditLog audit, org.bson.types.ObjectId serviceId) {
        List<MessageFilter> filters = new ArrayList<>();
        filters.add(new AdmissionGate(holder)); // first: while collections are encrypted, only what it reads whole goes on
        filters.add(new HandshakeFilter(() -> !holder.get().isEmpty(), config.upstream().form().isReplicaSet(),
                serviceId));
        filters.add(new AuthenticationWatch()); // the user the server confirms, for identities: (and no X.509 through TLS it cannot see)
        if (resolver != null) {
            filters.add(new AuditFilter(audit, metrics)); // in front: it sees every answer as the client will
            filters.add(new AccessFilter());
            filters.add(new DuplicateKeyFilter()); // sees the server's answers after decryption, before the client
            filters.add(new EncryptionFilter(holder, resolver, config.kmip().cache().kmsWait(), metrics,
                    new EvaluationMemory(config.listener().limits().maxEvaluationBytes()), EvaluationPool.sized()));
        }
        return filters;
    }

    private void startAdmin(Path configFile, ProxyConfig config, PrometheusMeterRegistry registry, ProxyMetrics metrics) {
        try {
            gauges = ProxyGauges.bind(metrics, server, resolver, policy);
            admin = AdminServer.start(config, registry, server, policy, resolver);
        } catch (Exception e) { // Netty throws a failed bind (BindException) undeclared
            server.close();
            throw new ConfigException(configFile + ": admin: cannot listen on " + config.admin() + ": " + e.getMessage());
        }
    }

    /** What a start opened before it failed, closed in reverse order. */
    private static final class Opened {
        KmipClient kmip;
        KeyResolver resolver;
        PolicyHolder policy;
        AuditLog audit;

        void close() {
            if (audit != null) {
                audit.close();
            }
            if (policy != null) {
                policy.close();
            }
            if (resolver != null) {
                resolver.close();
            }
            if (kmip != null) {
                kmip.close();
            }
        }
    }

    public InetSocketAddress address() {
        return server.address();
    }

    public ProxyServer server() {
        return server;
    }

    public PolicyHolder policy() {
        return policy;
    }

    /** The admin listener, or null without {@code admin:}. */
    public AdminServer admin() {
        return admin;
    }

    @Override
    public void close() {
        if (admin != null) {
            admin.close();
        }
        if (gauges != null) {
            gauges.close();
        }
        server.close();
        if (audit != null) {
            audit.close(); // after the server: the lines of the last requests are written
        }
        policy.close();
        if (resolver != null) {
            resolver.close();
        }
        if (kmip != null) {
            kmip.close();
        }
        memoryReturn.close();
    }
}
