package dev.fleproxy.cli;

import dev.fleproxy.audit.AuditVerifier;
import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.crypto.ChainMac;
import dev.fleproxy.keys.KeyAccessException;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.KeyResolvers;
import dev.fleproxy.kmip.KmipClient;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code fle-proxy audit verify}: checks an audit trail's chain (docs/access.md, "The audit trail"). */
@Command(name = "audit", mixinStandardHelpOptions = true, description = "The audit trail.",
        subcommands = {AuditCommand.Verify.class})
final class AuditCommand implements Runnable {
    @Override
    public void run() {
        new picocli.CommandLine(this).usage(System.out);
    }

    @Command(name = "verify", mixinStandardHelpOptions = true,
            description = "Checks the chain of an audit trail: its files in order, oldest first; several proxies' "
                    + "trails at once, each instance's as a chain of its own.",
            footer = {"", "Prints, per instance, 'ok N lines' (and each line cut short that a restart recorded: 'cut: "
                + "FILE line N (B bytes), recorded at seq S'),", "or the first broken line (file and line number) and "
                + "why.", "Exit code 0 if every chain holds, 1 if one is broken, 2 if they cannot be checked."})
    static final class Verify implements Callable<Integer> {
        @Option(names = "--config", required = true, paramLabel = "FILE",
                description = "the proxy's YAML config (its kmip: and audit: sections)")
        Path config;

        @Parameters(arity = "1..*", paramLabel = "FILE", description = "the trail's files, oldest first (FILE.000001 … "
                + "FILE); with several instances, each one's in that order")
        List<Path> files;

        @Override
        public Integer call() {
            ProxyConfig c;
            try {
                c = ProxyConfig.load(config);
            } catch (ConfigException e) {
                System.err.println("fle-proxy: " + e.getMessage());
                return 2;
            }
            if (c.audit() == null || c.kmip() == null) {
                System.err.println("fle-proxy: " + config + " has no audit: (or no kmip:) section");
                return 2;
            }
            try (KmipClient client = KeyResolvers.client(c.kmip()); KeyResolver resolver = KeyResolvers.resolver(c.kmip(), client)) {
                ChainMac mac = ChainMac.of(resolver.resolve(c.audit().key()).key());
                int code = 0;
                for (AuditVerifier.Checked chain : AuditVerifier.verifyChains(files, mac)) {
                    AuditVerifier.Result r = chain.result();
                    String whose = chain.instance() == null ? "" : " (instance " + chain.instance() + ")";
                    if (r.ok()) {
                        // a line cut short and recorded at the next start holds; named, so that it is looked at
                        System.out.println("ok " + r.lines() + " lines" + whose
                                + r.cuts().stream().map(cut -> "; cut: " + cut).reduce("", String::concat));
                    } else {
                        System.out.println("broken" + whose + ": " + r.problem() + " (" + r.lines()
                                + " lines before it hold)");
                        code = 1;
                    }
                }
                return code;
            } catch (KeyAccessException e) {
                System.err.println("fle-proxy: audit.key " + c.audit().key() + ": " + e.getMessage());
                return 2;
            } catch (java.io.IOException e) {
                System.err.println("fle-proxy: cannot read the trail: " + e.getMessage());
                return 2;
            }
        }
    }
}
