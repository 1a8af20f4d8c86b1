package dev.fleproxy.testing;

import java.util.ArrayDeque;
import java.util.Deque;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Closes what a test opened (proxies, upstreams, client sockets) after it, the last opened first,
 * so clients go before the proxy and the proxy before its upstream. Register it with
 * {@code @RegisterExtension}.
 */
public final class Cleanup implements AfterEachCallback {
    private final Deque<AutoCloseable> open = new ArrayDeque<>();

    /** Closes c after the test; returns it. */
    public <T extends AutoCloseable> T add(T c) {
        open.push(c);
        return c;
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        Exception first = null;
        while (!open.isEmpty()) {
            try {
                open.pop().close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
