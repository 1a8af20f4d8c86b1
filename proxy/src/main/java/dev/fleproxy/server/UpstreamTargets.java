package dev.fleproxy.server;

import dev.fleproxy.config.HostPort;
import io.netty.channel.EventLoop;
import java.util.List;
import java.util.function.Consumer;

/**
 * Where each new session's upstream connection goes (issue 30): one server, one of several mongos
 * ({@link MongosTargets}), or a replica set's current primary ({@link ReplicaSetTargets}). It
 * also hears how connections went, so it can skip a mongos that failed and close the sessions
 * bound to a primary that stepped down.
 */
interface UpstreamTargets extends AutoCloseable {

    /**
     * On the session's loop: {@code use} gets the addresses to try, in order, or {@code none}
     * why there is none. May answer later (a replica set between primaries), never blocking the loop.
     */
    void choose(EventLoop loop, Consumer<List<HostPort>> use, Consumer<String> none);

    /** A connection to the address failed (refused, timed out, TLS, its name not found): why. */
    default void failed(HostPort address, String why) {
    }

    /** A session is now bound to the address. */
    default void bound(HostPort address, ProxySession session) {
    }

    /** A bound session ended. */
    default void unbound(HostPort address, ProxySession session) {
    }

    /** Whether replies are watched for "not primary" (a replica set): see {@link #notPrimary}. */
    default boolean followsPrimary() {
        return false;
    }

    /** The address answered "not primary": it is no longer used, and its sessions are closed. */
    default void notPrimary(HostPort address, String why) {
    }

    /** What readiness reports: each address and how it is. */
    List<String> describe();

    @Override
    default void close() {
    }
}
