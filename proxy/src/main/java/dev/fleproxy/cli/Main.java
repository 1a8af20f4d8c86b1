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

    /**
     * Netty's pooled allocator rather than 4.2's adaptive one, unless the operator chose: after
     * 200 peers each sent half of a 16 MB message and left, RSS was back within 2 MB of before a
     * minute later with it (with {@code MemoryReturn}), and still 126 MB above with the adaptive
     * one, whose chunks stay with it.
     */
    static final String ALLOCATOR = "io.netty.allocator.type";

    public static void main(String[] args) {
        if (System.getProperty(ALLOCATOR) == null) {
            System.setProperty(ALLOCATOR, "pooled"); // before any Netty class reads it
        }
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
