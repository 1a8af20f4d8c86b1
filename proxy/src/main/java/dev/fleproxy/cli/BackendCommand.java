package dev.fleproxy.cli;

import dev.fleproxy.backend.EmbeddedBackend;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "backend",
        mixinStandardHelpOptions = true,
        description = "Runs the embedded MongoDB-compatible backend in the foreground.",
        footer = {
            "",
            "mongo-java-server 1.47.0, reporting MongoDB 5.0 (wire version 13). It cannot",
            "store BSON binary subtype 6, has no sessions or transactions, closes the",
            "connection on w:0 writes and on exhaust requests, and scans whole collections",
            "for range queries: a stand-in for mongod where none can run, not a database."})
final class BackendCommand implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(BackendCommand.class);

    @Option(names = "--port", required = true, paramLabel = "N", description = "TCP port to listen on")
    int port;

    @Option(names = "--host", defaultValue = "127.0.0.1", paramLabel = "HOST",
            description = "address to bind; default ${DEFAULT-VALUE}")
    String host;

    @Option(names = "--data", paramLabel = "DIR",
            description = "keep data in DIR (H2 file store, survives restarts); default: in memory")
    Path data;

    @Override
    public Integer call() throws Exception {
        EmbeddedBackend backend;
        try {
            backend = EmbeddedBackend.start(host, port, data);
        } catch (Exception e) {
            if (e instanceof java.net.BindException || e.getCause() instanceof java.net.BindException) {
                System.err.println("fle-proxy backend: cannot listen on " + host + ":" + port + ": " + e.getMessage());
                return 1;
            }
            throw e;
        }
        log.info("embedded backend listening on {} ({}), reporting MongoDB {}", backend.address(),
                data == null ? "in memory" : "data in " + backend.dataFile(), EmbeddedBackend.REPORTED_VERSION.toVersionString());
        Foreground.runUntilStopped(backend);
        return 0;
    }
}
