package dev.fleproxy.cli;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.policy.ConfigFile;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.server.Transport;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "check",
        mixinStandardHelpOptions = true,
        description = "Checks a config file as the proxy would load it, offline and online, and prints the "
                + "effective policy (like nginx -t).",
        footer = {
            "",
            "One line per check, ok, WARN or FAIL: the file parses (unknown and duplicate",
            "keys, namespaces, the policy); the certificate files of tls:, upstreamTls:",
            "and kmip: load, each key is its certificate's, every certificate is valid",
            "(WARN within 14 days of its end); the KMS answers and every key of the policy",
            "(key, previousKeys) resolves, with its algorithm and state; the upstream",
            "accepts a connection (over upstreamTls:) and answers hello: mongos,",
            "replica-set member or standalone. Then the policy as a table. --offline",
            "skips the KMS and the upstream. Key material is never printed.",
            "Exit codes: 0 no FAIL (WARNs allowed); 2 a FAIL, as the proxy exits on a",
            "configuration error."})
final class CheckCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--config", required = true, paramLabel = "FILE", description = "the proxy's YAML config")
    Path config;

    @Option(names = "--offline", description = "the file and its certificates only: ask neither the KMS nor the upstream")
    boolean offline;

    @Override
    public Integer call() {
        try (QuietLog quiet = QuietLog.start()) {
            return check();
        }
    }

    private int check() {
        CheckReport report = new CheckReport(spec.commandLine().getOut());
        ConfigFile loaded;
        try {
            loaded = ConfigFile.load(config);
        } catch (ConfigException e) {
            report.fail("schema: " + e.getMessage());
            return summary(report);
        }
        ProxyConfig cfg = loaded.config();
        Policy policy = loaded.policy();
        schema(report, cfg, policy);
        new CertificateCheck(report, Instant.now()).run(cfg);
        KmsCheck.Keys keys = KmsCheck.Keys.NONE;
        if (offline) {
            report.print("--    kms, upstream: not asked (--offline)");
        } else {
            keys = new KmsCheck(report).run(cfg.kmip(), policy, config.toString());
            new UpstreamCheck(report).run(cfg);
        }
        report.print("");
        PolicyTable.lines(policy, keys).forEach(report::print);
        return summary(report);
    }

    /** The file parsed: what it says, and what the proxy would still refuse at start. */
    private void schema(CheckReport report, ProxyConfig cfg, Policy policy) {
        report.ok("schema: " + config + " parses: listen " + cfg.listener().address()
                + (cfg.listener().tls() != null ? " (TLS)" : "") + ", upstream " + cfg.upstream().form().describe()
                + (cfg.upstream().tls() != null ? " (TLS)" : "") + ", "
                + policy.collections().size() + " collection(s)" + (cfg.admin() != null ? ", admin " + cfg.admin() : ""));
        String plaintext = cfg.plaintextListenProblem();
        if (plaintext != null) {
            report.fail(plaintext);
        }
        Transport transport = Transport.choose(cfg.transport());
        String unavailable = transport.unavailabilityCause();
        if (unavailable != null) {
            report.fail("transport: " + transport.configName() + " is not available here: " + unavailable);
        } else {
            report.ok("transport: " + transport.configName() + (cfg.transport().equals("auto") ? " (auto)" : ""));
        }
    }

    /**
     * The lines of the check say what the log would: while it runs, the log keeps WARN and ERROR
     * only (unless FLE_PROXY_LOG_LEVEL says otherwise), and its level is restored after.
     */
    private record QuietLog(ch.qos.logback.classic.Logger root, ch.qos.logback.classic.Level before)
            implements AutoCloseable {
        static QuietLog start() {
            if (System.getenv("FLE_PROXY_LOG_LEVEL") == null
                    && LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME) instanceof ch.qos.logback.classic.Logger root) {
                QuietLog q = new QuietLog(root, root.getLevel());
                root.setLevel(ch.qos.logback.classic.Level.WARN);
                return q;
            }
            return new QuietLog(null, null);
        }

        @Override
        public void close() {
            if (root != null) {
                root.setLevel(before);
            }
        }
    }

    private static int summary(CheckReport report) {
        report.print("");
        if (report.failures() > 0) {
            report.print("check: " + report.failures() + " FAIL, " + report.warnings() + " WARN");
            return 2;
        }
        report.print("check: configuration ok" + (report.warnings() > 0 ? ", " + report.warnings() + " WARN" : ""));
        return 0;
    }
}
