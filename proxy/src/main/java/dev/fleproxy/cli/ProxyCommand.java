package dev.fleproxy.cli;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.runtime.ProxyRuntime;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** The footer of its --help is the configuration reference, {@link dev.fleproxy.config.ConfigSchema#helpLines}. */
@Command(name = "proxy",
        mixinStandardHelpOptions = true,
        description = "Runs the proxy in the foreground until SIGTERM or SIGINT.")
final class ProxyCommand implements Callable<Integer> {

    @Option(names = "--config", required = true, paramLabel = "FILE", description = "YAML config file")
    Path config;

    @Override
    public Integer call() throws Exception {
        ProxyConfig cfg;
        try {
            cfg = ProxyConfig.load(config);
        } catch (ConfigException e) {
            System.err.println("fle-proxy: " + e.getMessage());
            return 2;
        }
        ProxyRuntime runtime;
        try {
            runtime = ProxyRuntime.start(config, cfg);
        } catch (ConfigException e) {
            System.err.println("fle-proxy: " + e.getMessage());
            return 2;
        } catch (Exception e) {
            // Netty rethrows the bind failure undeclared; say it in one line instead of a trace.
            String why = bindFailure(e);
            if (why != null) {
                System.err.println("fle-proxy: cannot listen on " + cfg.listener().address() + ": " + why);
                return 1;
            }
            throw e;
        }
        Foreground.runUntilStopped(runtime);
        return 0;
    }

    /** What a failed bind says (NIO raises BindException, the native transports their own IOException), or null. */
    private static String bindFailure(Exception e) {
        if (e instanceof java.net.BindException) {
            return e.getMessage();
        }
        String m = e.getMessage();
        if (e instanceof io.netty.channel.unix.Errors.NativeIoException && m != null && m.startsWith("bind(")) {
            return m.substring(m.lastIndexOf(": ") + 2);
        }
        return null;
    }
}
