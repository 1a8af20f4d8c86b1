package dev.fleproxy.cli;

import dev.fleproxy.config.ConfigSchema;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code java -jar fle-proxy.jar <subcommand>}: the proxy, the embedded backend, keys, rewrap, check, audit, commands. */
@Command(name = "fle-proxy",
        mixinStandardHelpOptions = true,
        versionProvider = VersionProvider.class,
        description = "mongo-fle-proxy: a MongoDB wire-protocol proxy with per-collection field encryption.",
        subcommands = {ProxyCommand.class, BackendCommand.class, KeysCommand.class, RewrapCommand.class, CheckCommand.class,
                AuditCommand.class, CommandsCommand.class,
                CommandLine.HelpCommand.class})
public final class Main implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    /** The command line, with the proxy's --help ending in the configuration reference. */
    static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Main());
        // wide enough that no line of the reference wraps (picocli wraps at 80 columns by default)
        cl.getSubcommands().get("proxy").getCommandSpec().usageMessage().footer(ConfigSchema.helpLines()).width(140);
        return cl;
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
