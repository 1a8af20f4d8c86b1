package dev.fleproxy.server;

import dev.fleproxy.config.HostPort;
import dev.fleproxy.config.UpstreamForm;
import dev.fleproxy.tls.UpstreamContext;
import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A replica set: each new session goes to its current primary ({@link ReplicaSetMonitor}); while
 * there is none (an election) a new session waits for one, parked (it is answered when the
 * monitor finds one, on its loop, or when the form's serverSelectionTimeoutMS is over). When the primary changes, or a session's server answers "not
 * primary", every session bound to the old one is closed: drivers reconnect, to the new primary,
 * and retry their retryable writes.
 */
final class ReplicaSetTargets implements UpstreamTargets {
    private static final Logger log = LoggerFactory.getLogger(ReplicaSetTargets.class);

    private final UpstreamForm form;
    private final AtomicReference<HostPort> primary = new AtomicReference<>();
    private final Map<HostPort, Set<ProxySession>> bound = new ConcurrentHashMap<>();
    /** New sessions waiting for a primary (during an election). */
    private final Queue<Waiter> waiters = new ConcurrentLinkedQueue<>();
    private final ReplicaSetMonitor monitor;

    ReplicaSetTargets(UpstreamForm form, Transport transport, UpstreamResolver resolver, UpstreamContext tls,
                      int connectTimeoutMs) {
        this.form = form;
        this.monitor = new ReplicaSetMonitor(form, transport, resolver, tls, connectTimeoutMs, this::primaryIs);
    }

    @Override
    public void choose(EventLoop loop, Consumer<List<HostPort>> use, Consumer<String> none) {
        HostPort p = primary.get();
        if (p != null) {
            use.accept(List.of(p));
            return;
        }
        // no primary (an election): the session waits, parked, until the monitor finds one or time is up
        Waiter w = new Waiter(loop, use, none);
        waiters.add(w);
        loop.schedule(() -> w.give(null), form.selectionTimeoutMs(), TimeUnit.MILLISECONDS);
        monitor.checkNow();
        HostPort now = primary.get();
        if (now != null) {
            release(now); // found between the first look and the wait
        }
    }

    /** A new session waiting for a primary; answered once, on its own loop. */
    private final class Waiter {
        private final EventLoop loop;
        private final Consumer<List<HostPort>> use;
        private final Consumer<String> none;
        private final AtomicBoolean answered = new AtomicBoolean();

        Waiter(EventLoop loop, Consumer<List<HostPort>> use, Consumer<String> none) {
            this.loop = loop;
            this.use = use;
            this.none = none;
        }

        /** The primary found, or null when the wait is over without one. */
        void give(HostPort p) {
            if (!answered.compareAndSet(false, true)) {
                return;
            }
            waiters.remove(this);
            loop.execute(() -> {
                if (p != null) {
                    use.accept(List.of(p));
                } else {
                    none.accept("replica set " + form.replicaSet() + " has no primary (waited " + form.selectionTimeoutMs()
                            + " ms): " + String.join(", ", monitor.describe()));
                }
            });
        }
    }

    private void release(HostPort p) {
        for (Waiter w : waiters) {
            w.give(p);
        }
    }

    @Override
    public void failed(HostPort address, String why) {
        monitor.checkNow();
    }

    @Override
    public void bound(HostPort address, ProxySession session) {
        bound.computeIfAbsent(address, a -> ConcurrentHashMap.newKeySet()).add(session);
        if (!address.equals(primary.get())) {
            // the primary changed while it connected (the sweep may have missed it)
            session.loop().execute(() -> session.failover("upstream " + address + " stopped being the primary of "
                    + form.replicaSet() + " as the connection was made"));
        }
    }

    @Override
    public void unbound(HostPort address, ProxySession session) {
        Set<ProxySession> s = bound.get(address);
        if (s != null) {
            s.remove(session);
        }
    }

    @Override
    public boolean followsPrimary() {
        return true;
    }

    @Override
    public void notPrimary(HostPort address, String why) {
        if (primary.compareAndSet(address, null)) {
            log.info("replica set {}: {} answered \"{}\"; asking the members who is primary", form.replicaSet(), address,
                    why);
        }
        monitor.suspect(address);
        closeBound(address, "upstream " + address + " answered \"" + why + "\"");
    }

    /** The monitor's news: the primary is now this (null: none). */
    private void primaryIs(HostPort now) {
        HostPort before = primary.getAndSet(now);
        if (before != null && !Objects.equals(before, now)) {
            closeBound(before, "upstream " + before + " is no longer the primary of " + form.replicaSet());
        }
        if (now != null) {
            release(now);
        }
    }

    private void closeBound(HostPort address, String why) {
        Set<ProxySession> sessions = bound.get(address);
        if (sessions == null || sessions.isEmpty()) {
            return;
        }
        List<ProxySession> closing = new ArrayList<>(sessions);
        log.info("replica set {}: closing {} client connection(s) bound to {}, so their drivers reconnect and retry",
                form.replicaSet(), closing.size(), address);
        for (ProxySession s : closing) {
            s.loop().execute(() -> s.failover(why));
        }
    }

    @Override
    public List<String> describe() {
        return monitor.describe();
    }

    /** Whether a primary is known now (readiness). */
    boolean hasPrimary() {
        return primary.get() != null;
    }

    @Override
    public void close() {
        monitor.close();
    }
}
