package dev.fleproxy.server;

import dev.fleproxy.config.Limits;
import dev.fleproxy.wire.FrameDecoder;
import io.netty.channel.Channel;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What one server lets peers that have proved nothing make it hold ({@link Limits}): how many
 * client connections are open at once (and how many past that are being told so), and how many
 * bytes of incomplete messages all of them
 * together make the proxy buffer. Each client connection gets a {@link ClientGuard} that times
 * its incomplete messages and accounts its buffered bytes here.
 *
 * <p>Only client connections count towards the budget. Each upstream connection has a
 * FrameDecoder of its own, but the upstream is a server we chose and trust, and backpressure
 * already bounds what it makes us hold (one message being assembled and one read's worth per
 * connection, and only while its client reads).
 */
final class ClientBounds {
    private final Limits limits;
    private final BadInputLog log;
    private final AtomicInteger connections = new AtomicInteger();
    /** Connections over maxConnections being answered (not counted in connections). */
    private final AtomicInteger refusing = new AtomicInteger();
    /** Bytes of incomplete messages held by all client connections: the sum of their guards' held. */
    private final AtomicLong buffered = new AtomicLong();
    private final Set<ClientGuard> live = ConcurrentHashMap.newKeySet();
    /** The highest total seen over the budget (0 if never over): how far a read can overshoot. */
    private final AtomicLong peakOverBudget = new AtomicLong();

    ClientBounds(Limits limits, BadInputLog log) {
        this.limits = limits;
        this.log = log;
    }

    Limits limits() {
        return limits;
    }

    BadInputLog log() {
        return log;
    }

    /** What becomes of a new client connection. */
    enum Admission {
        /** Within maxConnections: a session with its upstream connection. */
        ADMITTED,
        /** Over maxConnections: its first message is answered with the reason, then it closes ({@link OverLimitRefusal}). */
        ANSWER_AND_CLOSE,
        /** Over maxConnections while {@link #REFUSALS_AT_ONCE} others are being answered: closed already. */
        CLOSED
    }

    /**
     * Connections over maxConnections answered at once, at most: each holds a socket, at most 32 KiB
     * of buffers (and a TLS engine with tls:) for up to 2 s, so without a bound a flood past the
     * limit would make the proxy hold what the limit is there to bound.
     */
    static final int REFUSALS_AT_ONCE = 256;

    /**
     * Counts a new client connection. Over maxConnections no upstream connection is made: the
     * connection is logged, and either answered with the reason (see {@link OverLimitRefusal})
     * or, when {@link #REFUSALS_AT_ONCE} others are being answered, closed at once.
     */
    Admission admit(Channel ch) {
        int n = connections.incrementAndGet();
        if (n <= limits.maxConnections()) {
            ch.closeFuture().addListener(f -> connections.decrementAndGet());
            return Admission.ADMITTED;
        }
        connections.decrementAndGet();
        String full = limits.maxConnections() + " client connections are open (maxConnections)";
        if (refusing.incrementAndGet() > REFUSALS_AT_ONCE) {
            refusing.decrementAndGet();
            log.report(BadInputLog.Reason.TOO_MANY_CONNECTIONS, "connection from " + ch.remoteAddress(),
                    "closed at once: " + full + ", and " + REFUSALS_AT_ONCE + " more are being answered", null,
                    ch.eventLoop());
            ch.close();
            return Admission.CLOSED;
        }
        ch.closeFuture().addListener(f -> refusing.decrementAndGet());
        log.report(BadInputLog.Reason.TOO_MANY_CONNECTIONS, "connection from " + ch.remoteAddress(),
                "refused: " + full + "; its first message is answered with the limit, then it is closed", null,
                ch.eventLoop());
        return Admission.ANSWER_AND_CLOSE;
    }

    /** The handler that goes right before the client's FrameDecoder. */
    ClientGuard guard(FrameDecoder decoder, ClientGuard.Closer closer) {
        return new ClientGuard(this, decoder, closer);
    }

    /** Client connections open now (admitted and not yet closed). */
    int connections() {
        return connections.get();
    }

    /** Bytes of incomplete messages held for all clients now. */
    long buffered() {
        return buffered.get();
    }

    void register(ClientGuard g) {
        live.add(g);
    }

    void unregister(ClientGuard g) {
        live.remove(g);
    }

    /** Adds what a guard's held bytes changed by; returns whether the budget is now exceeded. */
    boolean add(long delta) {
        long total = buffered.addAndGet(delta);
        if (total <= limits.maxBufferedMessageBytes()) {
            return false;
        }
        peakOverBudget.accumulateAndGet(total, Math::max);
        return true;
    }

    long peakOverBudget() {
        return peakOverBudget.get();
    }

    /**
     * Over budget: condemns the connections holding the largest incomplete messages, largest
     * first, until what remains fits. A condemned connection is closed on its own event loop
     * (maybe another one than the caller's); until then its bytes still count, so they are set
     * against the excess here and a second reader over budget meanwhile condemns no one more.
     * Runs only when over budget, so a scan of the live guards is cheap enough.
     */
    synchronized void enforce() {
        long condemnedHeld = 0;
        List<Candidate> candidates = new ArrayList<>();
        for (ClientGuard g : live) {
            long h = g.held(); // read once: it changes under our feet on the guard's own loop
            if (g.condemned()) {
                condemnedHeld += h;
            } else if (h > 0) {
                candidates.add(new Candidate(g, h));
            }
        }
        long excess = buffered.get() - condemnedHeld - limits.maxBufferedMessageBytes();
        if (excess <= 0) {
            return;
        }
        candidates.sort(Comparator.comparingLong(Candidate::held).reversed());
        for (Candidate c : candidates) {
            if (excess <= 0) {
                break;
            }
            excess -= c.held();
            c.guard().condemn();
        }
    }

    private record Candidate(ClientGuard guard, long held) {
    }
}
