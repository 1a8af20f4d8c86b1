package dev.fleproxy.bench.relay;

import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

@Command(name = "relay",
        mixinStandardHelpOptions = true,
        description = "A minimal byte relay: the floor the proxy's cost is compared with.",
        footer = {
            "",
            "Each client connection gets its own upstream connection on the same event",
            "loop, as in the proxy; bytes are forwarded as they arrive, both ways, with no",
            "framing and no parsing. AUTO_READ off and read-after-write backpressure (a",
            "side is read again once the writes of its previous read completed), flush",
            "when a read batch completes, TCP_NODELAY; when either side closes, both do.",
            "Runs in the foreground until SIGTERM or SIGINT. An unavailable transport is",
            "one line and exit code 2; an address in use, one line and exit code 1.",
            "",
            "Example: java -jar fle-bench.jar relay --listen 127.0.0.1:27019 \\",
            "           --upstream 127.0.0.1:27017 --transport epoll"})
public final class RelayCommand implements Callable<Integer> {
    private static final Logger log = LoggerFactory.getLogger(RelayCommand.class);

    @Option(names = "--listen", required = true, paramLabel = "HOST:PORT", description = "where clients connect")
    String listen;

    @Option(names = "--upstream", required = true, paramLabel = "HOST:PORT",
            description = "where to relay to (the backend, mongod, mongos)")
    String upstream;

    @Option(names = "--transport", defaultValue = "auto", paramLabel = "NAME",
            description = "nio, epoll, io_uring, or auto (epoll where it loads, else nio); default ${DEFAULT-VALUE}")
    String transport;

    @Option(names = "--connect-timeout-ms", defaultValue = "5000", paramLabel = "MS",
            description = "upstream connect timeout per client connection; default ${DEFAULT-VALUE}")
    int connectTimeoutMs;

    @Override
    public Integer call() throws Exception {
        HostPort listenAt;
        HostPort upstreamAt;
        RelayTransport t;
        try {
            listenAt = HostPort.parse(listen);
            upstreamAt = HostPort.parse(upstream);
            t = RelayTransport.choose(transport);
        } catch (IllegalArgumentException e) {
            System.err.println("fle-bench relay: " + e.getMessage());
            return 2;
        }
        String unavailable = t.unavailabilityCause();
        if (unavailable != null) {
            System.err.println("fle-bench relay: transport " + t.configName() + " is not available here: " + unavailable);
            return 2;
        }
        Relay relay;
        try {
            relay = Relay.start(listenAt, upstreamAt, t, connectTimeoutMs);
        } catch (Exception e) {
            // Netty rethrows the bind failure undeclared: a BindException on NIO, a NativeIoException
            // ("bind(..) failed with error(-98): Address already in use") on epoll and io_uring.
            if (e instanceof java.io.IOException || e.getCause() instanceof java.io.IOException) {
                String why = e instanceof java.io.IOException ? e.getMessage() : e.getCause().getMessage();
                System.err.println("fle-bench relay: cannot listen on " + listenAt + ": "
                        + (why != null && why.contains("Address already in use") ? "Address already in use" : why));
                return 1;
            }
            throw e;
        }
        log.info("fle-bench relay listening on {}, upstream {}, transport {}", HostPort.parse(
                relay.address().getHostString() + ":" + relay.address().getPort()), upstreamAt, t.configName());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                relay.close();
            } finally {
                stopped.countDown();
            }
        }, "shutdown"));
        stopped.await();
        return 0;
    }
}
