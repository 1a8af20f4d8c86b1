package dev.fleproxy.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code java -jar fle-bench.jar <subcommand>}: the overhead benchmark and the byte relay. */
@Command(name = "fle-bench",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description = "mongo-fle-proxy's benchmark tools (apart from the proxy's own jar).",
        subcommands = {OverheadCommand.class, dev.fleproxy.bench.relay.RelayCommand.class,
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

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {"fle-bench " + (v == null ? "(development build)" : v)};
        }
    }
}
