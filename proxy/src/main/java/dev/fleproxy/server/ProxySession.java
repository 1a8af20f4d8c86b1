package dev.fleproxy.server;

import dev.fleproxy.config.HostPort;
import dev.fleproxy.wire.Frame;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.EventLoop;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection paired with its own upstream connection, so cursors, SCRAM
 * conversations and exhaust streams stay on one server without bookkeeping. Both channels run
 * on the same event loop, so nothing here needs locking. Each direction is a {@link Lane}, handled
 * strictly in order: a message that waits for keys is parked (never waited for on the loop) and
 * the messages behind it queue until it resumes, so pipelined requests and exhaust streams keep
 * their order. This class connects the pair, routes frames to the lanes, and closes both.
 */
final class ProxySession {
    private static final Logger log = LoggerFactory.getLogger(ProxySession.class);
    private static final AtomicLong IDS = new AtomicLong();
    /** requestIDs of replies the proxy writes itself; any value is valid, these are easy to spot. */
    private static final AtomicInteger OWN_REQUEST_IDS = new AtomicInteger(0x40000000);
    /** How long a client whose upstream is unreachable has to send its first request. */
    private static final long UNAVAILABLE_GRACE_SECONDS = 10;

    /** The requestID of a reply the proxy writes itself. */
    static int ownRequestId() {
        return OWN_REQUEST_IDS.incrementAndGet();
    }

    private final Channel client;
    /** "conn#N from ADDRESS", the prefix of every log line about this connection. */
    private final String who;
    private final UpstreamRoute route;
    private final SessionListener listener;
    /** Where lines about this client's bad input go, rate-limited (shared by the server's sessions). */
    private final BadInputLog badInput;
    private final SessionObserver observer;
    private final PendingReplies pending = new PendingReplies();
    private final SessionCalls calls = new SessionCalls(this);
    /** What the proxy verified about the client: its certificate, the user the server confirmed. */
    private final Peer peer;
    private final RequestLane requests;
    private final ReplyLane replies;
    /** The upstream connection once it is usable (connected, its TLS verified); null before. */
    private Channel upstream;
    /** The upstream connection from the connect on, usable or not: closed with the session. */
    private Channel upstreamConnecting;
    private String upstreamFailure;
    /** The address the upstream connection went to (one of several mongos, a primary); null before. */
    private HostPort upstreamAddress;
    private boolean closed;
    /** Why the connection closed, for the metrics (the first cause named wins; none is "normal"). */
    private String closeLabel;

    /** Lets the server count sessions and tests wait for them. */
    interface SessionListener {
        void opened(ProxySession session);

        void closed(ProxySession session);
    }

    ProxySession(Channel client, UpstreamRoute route, List<MessageFilter> filters, SessionListener listener,
                 BadInputLog badInput, SessionObserver observer) {
        this.client = client;
        long id = IDS.incrementAndGet();
        this.who = "conn#" + id + " from " + client.remoteAddress();
        this.route = route;
        this.listener = listener;
        this.badInput = badInput;
        this.observer = observer;
        this.peer = Peer.of(client, id);
        this.requests = new RequestLane(this, filters);
        this.replies = new ReplyLane(this);
        Flow clientToUpstream = new Flow(client, this::writeFailed);
        clientToUpstream.hold(); // not read until the upstream is ready (or known unreachable); see upstreamReady
        requests.flow(clientToUpstream);
    }

    Peer peer() {
        return peer;
    }

    /** Called when the client connection is accepted: connect upstream, then start reading. */
    void start() {
        listener.opened(this);
        route.connect(this, client, this::upstreamReady, this::upstreamUnavailable);
    }

    /** An attempt at the upstream connection, closed with the session if it is still under way. */
    void connecting(Channel attempt) {
        upstreamConnecting = attempt;
        if (closed) {
            attempt.close();
        }
    }

    /** The address the upstream connection went to (before {@link #upstreamReady}). */
    void boundTo(HostPort address) {
        upstreamAddress = address;
    }

    HostPort upstreamAddress() {
        return upstreamAddress;
    }

    /**
     * The upstream this session is bound to stopped being the primary (or answered "not
     * primary"): the client connection closes, so its driver reconnects (to the new primary) and
     * retries what is retryable. A reply that said "not primary" is not passed on: the driver sees
     * a closed connection, which it retries, rather than an error it might only report.
     */
    void failover(String why) {
        label("upstream_failover");
        log.debug("{}: {}", who, why);
        close(null);
    }

    UpstreamTargets targets() {
        return route.targets();
    }

    /**
     * The upstream is usable: handle what the client sent meanwhile, then read the client. The
     * proxy asks for no client bytes before this, but epoll delivers a peer's bytes unasked when
     * the peer half-closes (EPOLLRDHUP); such requests wait in the request lane.
     */
    private void upstreamReady(Channel ch) {
        upstream = ch;
        replies.flow(new Flow(upstream, this::writeFailed));
        if (closed) {
            upstream.close();
            return;
        }
        log.debug("{}: connected to upstream {}", who, upstreamAddress);
        upstream.read();
        try {
            requests.drain(); // and the client's first read, once what waited is written
        } catch (Throwable t) {
            failed(SessionHandler.Side.CLIENT, t);
        }
    }

    private void upstreamUnavailable(String why) {
        if (upstreamFailure != null || closed) {
            return;
        }
        upstreamFailure = why;
        label("upstream_unavailable");
        // one line per client connection while the upstream is down: rate-limited like bad input
        badInput.report(BadInputLog.Reason.UPSTREAM_UNAVAILABLE, who, why, null, client.eventLoop());
        if (requests.hasWaiting()) {
            try {
                requests.handle(requests.nextWaiting()); // answered with the failure, then closed
            } catch (Throwable t) {
                failed(SessionHandler.Side.CLIENT, t);
            }
            return;
        }
        // Read the client's first request so it gets an error reply, not just a reset.
        client.read();
        client.eventLoop().schedule(() -> close(null), UNAVAILABLE_GRACE_SECONDS, TimeUnit.SECONDS);
    }

    // ---- what the lanes share -----------------------------------------------------------------

    /** Neither usable nor known to have failed: requests wait, they have nowhere to go yet. */
    boolean upstreamPending() {
        return upstream == null && upstreamFailure == null;
    }

    String upstreamFailure() {
        return upstreamFailure;
    }

    Channel upstream() {
        return upstream;
    }

    Channel client() {
        return client;
    }

    EventLoop loop() {
        return client.eventLoop();
    }

    PendingReplies pending() {
        return pending;
    }

    SessionCalls calls() {
        return calls;
    }

    SessionObserver observer() {
        return observer;
    }

    boolean isClosed() {
        return closed;
    }

    // ---- events from the channels --------------------------------------------------------------

    void received(SessionHandler.Side side, Frame frame) {
        lane(side).receive(frame);
    }

    void readComplete(SessionHandler.Side side) {
        lane(side).readComplete();
    }

    private Lane<?> lane(SessionHandler.Side side) {
        return side == SessionHandler.Side.CLIENT ? requests : replies;
    }

    void closedBy(SessionHandler.Side side) {
        if (side == SessionHandler.Side.UPSTREAM && upstream == null) {
            return; // an upstream connection that never became usable (its TLS failed): upstreamUnavailable answers
        }
        if (side == SessionHandler.Side.UPSTREAM && !closed) {
            // one line per client connection when many are short-lived: rate-limited like bad input
            badInput.report(BadInputLog.Reason.UPSTREAM_CLOSED, who, "upstream " + upstreamAddress
                    + " closed the connection", null, client.eventLoop());
        }
        label(side == SessionHandler.Side.UPSTREAM ? "upstream_closed" : "client_closed");
        close(null);
    }

    /** An exception on either side: one log line that says why ({@link SessionFailures}), then both close. */
    void failed(SessionHandler.Side side, Throwable cause) {
        if (closed || side == SessionHandler.Side.UPSTREAM && upstream == null) {
            return; // as in closedBy: the handshake's own listener reports it
        }
        SessionFailures.Failure f = SessionFailures.classify(cause, side);
        switch (f.kind()) {
            case BAD_INPUT -> {
                if (side == SessionHandler.Side.CLIENT) {
                    close(f.reason(), f.text()); // rate-limited
                } else {
                    label("upstream_" + f.reason().name().toLowerCase(Locale.ROOT));
                    close(f.text()); // rare, and from a server we trust: always logged
                }
            }
            case CONNECTION -> {
                log.debug("{}: {}", who, f.text());
                label("io_error");
                close(null);
            }
            case UNEXPECTED -> {
                badInput.report(f.reason(), who, f.text(), f.root(), client.eventLoop());
                label("unexpected_error");
                close(null);
            }
        }
    }

    private void writeFailed(Throwable cause) {
        if (!closed) {
            log.debug("{}: write failed: {}", who, String.valueOf(cause));
        }
        label("io_error");
        close(null);
    }

    // ---- closing ----------------------------------------------------------------------------

    /** Closes both sides after flushing what was already written; logs the reason once. */
    void close(String reason) {
        if (closed) {
            return;
        }
        if (reason != null) {
            log.warn("{}: {}", who, reason);
        } else {
            log.debug("{}: closed", who);
        }
        shutDown();
    }

    /** Closes both sides after flushing, with a line about the client's bad input (rate-limited). */
    void close(BadInputLog.Reason reason, String text) {
        if (closed) {
            return;
        }
        badInput.report(reason, who, text, null, client.eventLoop());
        label(reason.name().toLowerCase(Locale.ROOT));
        shutDown();
    }

    /**
     * Closes at once, without waiting for writes to the client to flush: for a client that holds
     * resources without proving anything (read timeout, over budget), which may not read either.
     */
    void closeNow(BadInputLog.Reason reason, String text) {
        close(reason, text);
        client.close();
    }

    /** Names why the connection is closing, unless a cause was named already. */
    void label(String reason) {
        if (closeLabel == null) {
            closeLabel = reason;
        }
    }

    private void shutDown() {
        closed = true;
        peer.closed();
        observer.sessionClosed(closeLabel != null ? closeLabel : "normal");
        closeAfterFlush(client);
        if (upstream != null) {
            closeAfterFlush(upstream);
        } else if (upstreamConnecting != null) {
            upstreamConnecting.close(); // still connecting or in its TLS handshake: not needed any more
        }
        requests.releaseAll();
        replies.releaseAll();
        calls.failAll();
        if (upstreamAddress != null) {
            route.targets().unbound(upstreamAddress, this);
        }
        listener.closed(this);
    }

    private static void closeAfterFlush(Channel ch) {
        if (ch.isActive()) {
            ch.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        } else {
            ch.close();
        }
    }
}
