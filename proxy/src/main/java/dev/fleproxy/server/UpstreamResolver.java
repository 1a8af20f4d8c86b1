package dev.fleproxy.server;

import dev.fleproxy.config.HostPort;
import io.netty.util.NetUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Where an upstream's name points, looked up on a thread of its own: a DNS lookup can wait, and
 * must never do so on an event loop (Netty's default resolver would look the name up on the loop
 * that connects). A literal address needs no lookup. An answer is kept for {@link #TTL_SECONDS}
 * s, so a mongos or member whose address changes is found again, and a failed lookup is not kept.
 */
final class UpstreamResolver implements AutoCloseable {
    static final long TTL_SECONDS = 30;

    private record Entry(CompletableFuture<InetSocketAddress> address, long at) {
    }

    private final ExecutorService lookups = Executors.newSingleThreadExecutor(new DefaultThreadFactory("upstream-dns", true));
    private final Map<HostPort, Entry> cache = new ConcurrentHashMap<>();

    /** The address, at once for a literal one or one looked up lately; else when the lookup ends. */
    CompletableFuture<InetSocketAddress> resolve(HostPort a) {
        byte[] literal = NetUtil.createByteArrayFromIpAddressString(a.host());
        if (literal != null) {
            try {
                return CompletableFuture.completedFuture(new InetSocketAddress(InetAddress.getByAddress(a.host(), literal),
                        a.port()));
            } catch (UnknownHostException e) {
                return CompletableFuture.failedFuture(e); // not for a 4- or 16-byte address
            }
        }
        long now = System.nanoTime();
        Entry e = cache.get(a);
        if (e != null && now - e.at() < TimeUnit.SECONDS.toNanos(TTL_SECONDS)
                && !e.address().isCompletedExceptionally()) {
            return e.address();
        }
        CompletableFuture<InetSocketAddress> looked = CompletableFuture.supplyAsync(() -> {
            try {
                return new InetSocketAddress(InetAddress.getByName(a.host()), a.port());
            } catch (UnknownHostException x) {
                throw new CompletionException(x);
            }
        }, lookups);
        cache.put(a, new Entry(looked, now));
        return looked;
    }

    @Override
    public void close() {
        lookups.shutdownNow();
    }
}
