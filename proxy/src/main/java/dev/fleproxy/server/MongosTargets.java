package dev.fleproxy.server;

import dev.fleproxy.config.HostPort;
import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * One server, or several mongos of one cluster: new sessions are spread over them in turn, and an
 * address whose connection failed in the last {@link #SKIP_SECONDS} s is tried only after the
 * others (still tried, so that when all have failed the next connection finds the first back).
 * A session whose mongos goes away closes with it (the client's driver retries on a new
 * connection, which goes to another).
 */
final class MongosTargets implements UpstreamTargets {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(MongosTargets.class);
    static final long SKIP_SECONDS = 10;

    private final List<HostPort> addresses;
    private final AtomicInteger turn = new AtomicInteger();
    private final Map<HostPort, Long> failedAt = new ConcurrentHashMap<>();

    MongosTargets(List<HostPort> addresses) {
        this.addresses = List.copyOf(addresses);
    }

    @Override
    public void choose(EventLoop loop, Consumer<List<HostPort>> use, Consumer<String> none) {
        use.accept(order(System.nanoTime()));
    }

    /** The addresses from this session's turn on, those that failed recently last. */
    List<HostPort> order(long now) {
        int n = addresses.size();
        if (n == 1) {
            return addresses;
        }
        int start = Math.floorMod(turn.getAndIncrement(), n);
        List<HostPort> fresh = new ArrayList<>(n);
        List<HostPort> failed = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            HostPort a = addresses.get((start + i) % n);
            Long at = failedAt.get(a);
            (at != null && now - at < TimeUnit.SECONDS.toNanos(SKIP_SECONDS) ? failed : fresh).add(a);
        }
        fresh.addAll(failed);
        return fresh;
    }

    @Override
    public void failed(HostPort address, String why) {
        Long before = failedAt.put(address, System.nanoTime());
        if (addresses.size() > 1 && (before == null
                || System.nanoTime() - before >= TimeUnit.SECONDS.toNanos(SKIP_SECONDS))) {
            // once per address per window: new connections go to the others meanwhile
            log.warn("{}; for {} s it is tried only after the others", why, SKIP_SECONDS);
        }
    }

    @Override
    public void bound(HostPort address, ProxySession session) {
        failedAt.remove(address);
    }

    @Override
    public List<String> describe() {
        long now = System.nanoTime();
        List<String> out = new ArrayList<>();
        for (HostPort a : addresses) {
            Long at = failedAt.get(a);
            out.add(a + (at != null && now - at < TimeUnit.SECONDS.toNanos(SKIP_SECONDS)
                    ? ": a connection failed " + TimeUnit.NANOSECONDS.toSeconds(now - at) + " s ago, tried after the others"
                    : ": in turn"));
        }
        return out;
    }
}
