package dev.fleproxy.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code java -jar fle-proxy.jar <subcommand>}: the proxy, the embedded backend, keys, rewrap, check. */
@Command(name = "fle-proxy",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = "mongo-fle-proxy: a MongoDB wire-protocol proxy with per-collection field encryption.",
        subcommands = {ProxyCommand.class, BackendCommand.class, KeysCommand.class, RewrapCommand.class, CheckCommand.class,
                CommandLine.HelpCommand.class})
public final class Main implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(new CommandLine(new Main()).execute(args));
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
