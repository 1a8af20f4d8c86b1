package dev.fleproxy.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.fleproxy.config.HostPort;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Upstream names are looked up on a thread of their own (never a connecting event loop); literals need none. */
class UpstreamResolverTest {

    @Test
    void aLiteralIsAnAddressAtOnceAndANameIsLookedUpOffTheCallersThread() throws Exception {
        try (UpstreamResolver r = new UpstreamResolver()) {
            CompletableFuture<InetSocketAddress> v4 = r.resolve(new HostPort("127.0.0.1", 27017));
            assertTrue(v4.isDone());
            assertEquals(new InetSocketAddress("127.0.0.1", 27017), v4.get());
            assertTrue(r.resolve(new HostPort("::1", 1)).get().getAddress().isLoopbackAddress());

            CompletableFuture<InetSocketAddress> name = r.resolve(new HostPort("localhost", 27018));
            InetSocketAddress a = name.get(30, TimeUnit.SECONDS);
            assertTrue(a.getAddress().isLoopbackAddress() && !a.isUnresolved() && a.getPort() == 27018, a.toString());
            assertSame(name, r.resolve(new HostPort("localhost", 27018)), "kept for a while: one lookup");
        }
    }
}
