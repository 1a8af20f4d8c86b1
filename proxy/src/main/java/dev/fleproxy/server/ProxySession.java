package dev.fleproxy.server;

import dev.fleproxy.config.HostPort;
import dev.fleproxy.metrics.LoopMeters;
import dev.fleproxy.metrics.ProxyMetrics;
import dev.fleproxy.tls.TlsFailures;
import dev.fleproxy.tls.UpstreamContext;
import io.netty.handler.ssl.SslHandler;
import javax.net.ssl.SSLException;
import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.FrameDecoder;
import dev.fleproxy.wire.MsgHeader;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpCompressed;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.WireMessage;
import dev.fleproxy.wire.WireProtocolException;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.DecoderException;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.bson.BSONException;
import org.bson.BsonInvalidOperationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection paired with its own upstream connection, so cursors, SCRAM
 * conversations and exhaust streams stay on one server without bookkeeping. Both channels run
 * on the same event loop, so nothing here needs locking. Each direction is handled strictly in
 * order: a message that waits for keys is parked (never waited for on the loop) and the messages
 * behind it queue until it resumes, so pipelined requests and exhaust streams keep their order.
 */
final class ProxySession {
    private static final Logger log = LoggerFactory.getLogger(ProxySession.class);
    private static final AtomicLong IDS = new AtomicLong();
    /** requestIDs of replies the proxy writes itself; any value is valid, these are easy to spot. */
    private static final AtomicInteger OWN_REQUEST_IDS = new AtomicInteger(0x40000000);

    /** The requestID of a reply the proxy writes itself. */
    static int ownRequestId() {
        return OWN_REQUEST_IDS.incrementAndGet();
    }
    /** How long a client whose upstream is unreachable has to send its first request. */
    private static final long UNAVAILABLE_GRACE_SECONDS = 10;

    private final Channel client;
    /** "conn#N from ADDRESS", the prefix of every log line about this connection. */
    private final String who;
    private final Transport transport;
    private final HostPort upstreamAddress;
    private final int connectTimeoutMs;
    private final List<MessageFilter> filters;
    private final SessionListener listener;
    /** Where lines about this client's bad input go, rate-limited (shared by the server's sessions). */
    private final BadInputLog badInput;
    private final PendingReplies pending = new PendingReplies();
    /** How long a message may wait for keys before it is answered with what is missing. */
    private final long keyWaitNanos;
    private final ArrayDeque<Frame> requestBacklog = new ArrayDeque<>();
    private final ArrayDeque<Frame> replyBacklog = new ArrayDeque<>();
    private Parked parkedRequest;
    private Parked parkedReply;
    private final Flow clientToUpstream;
    private Flow upstreamToClient;
    /** The upstream connection once it is usable (connected, its TLS verified); null before. */
    private Channel upstream;
    /** The upstream connection from the connect on, usable or not: closed with the session. */
    private Channel upstreamConnecting;
    private String upstreamFailure;
    private boolean closed;
    /** TLS to the upstream, or null. */
    private final UpstreamContext upstreamTls;
    private final ProxyMetrics metrics;
    /** This connection's event loop's meters (null without metrics): only that loop uses them. */
    private final LoopMeters meters;
    /** Forwarded requests awaiting their first reply (null without metrics, like meters). */
    private final RequestTimings timings;
    /** Why the connection closed, for the metrics (the first cause named wins; none is "normal"). */
    private String closeLabel;

    /** Lets the server count sessions and tests wait for them. */
    interface SessionListener {
        void opened(ProxySession session);

        void closed(ProxySession session);
    }

    ProxySession(Channel client, Transport transport, HostPort upstreamAddress, int connectTimeoutMs,
                 int keyWaitMs, List<MessageFilter> filters, SessionListener listener, BadInputLog badInput,
                 UpstreamContext upstreamTls, ProxyMetrics metrics) {
        this.upstreamTls = upstreamTls;
        this.metrics = metrics;
        this.meters = metrics.loopMeters(client.eventLoop());
        this.timings = meters != null ? new RequestTimings() : null;
        this.client = client;
        this.keyWaitNanos = TimeUnit.MILLISECONDS.toNanos(keyWaitMs);
        this.transport = transport;
        this.who = "conn#" + IDS.incrementAndGet() + " from " + client.remoteAddress();
        this.upstreamAddress = upstreamAddress;
        this.connectTimeoutMs = connectTimeoutMs;
        this.filters = filters;
        this.listener = listener;
        this.badInput = badInput;
        this.clientToUpstream = new Flow(client, this::writeFailed);
        // Not read until the upstream is ready (or known unreachable); see upstreamReady.
        this.clientToUpstream.hold();
    }

    /** Called when the client connection is accepted: connect upstream, then start reading. */
    void start() {
        listener.opened(this);
        upstreamConnecting = new Bootstrap()
                .group(client.eventLoop())
                .channel(transport.socketChannel())
                .option(ChannelOption.AUTO_READ, false)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMs)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (upstreamTls != null) {
                            ch.pipeline().addLast(upstreamTls.newHandler(ch.alloc()));
                        }
                        ch.pipeline().addLast(new FrameDecoder(),
                                new SessionHandler(ProxySession.this, SessionHandler.Side.UPSTREAM));
                    }
                })
                .connect(upstreamAddress.host(), upstreamAddress.port())
                .addListener((ChannelFutureListener) f -> {
                    if (!f.isSuccess()) {
                        upstreamUnavailable("upstream " + upstreamAddress + " is unreachable: " + describe(f.cause()));
                    } else if (upstreamTls == null) {
                        upstreamReady(f.channel());
                    } else {
                        // usable once its certificate is checked; a failed check is the client's 9720001
                        f.channel().pipeline().get(SslHandler.class).handshakeFuture().addListener(h -> {
                            if (h.isSuccess()) {
                                upstreamReady(f.channel());
                            } else {
                                f.channel().close();
                                upstreamUnavailable("TLS to upstream " + upstreamAddress + " (verifying "
                                        + upstreamTls.verifiedName() + ") failed: " + TlsFailures.describe(h.cause()));
                            }
                        });
                        f.channel().read(); // the handshake needs reads; AUTO_READ is off
                    }
                }).channel();
    }

    /**
     * The upstream is usable: handle what the client sent meanwhile, then read the client. The
     * proxy asks for no client bytes before this, but epoll delivers a peer's bytes unasked when
     * the peer half-closes (EPOLLRDHUP); such requests wait in the backlog (see fromClient).
     */
    private void upstreamReady(Channel ch) {
        upstream = ch;
        upstreamToClient = new Flow(upstream, this::writeFailed);
        if (closed) {
            upstream.close();
            return;
        }
        log.debug("{}: connected to upstream {}", who, upstreamAddress);
        upstream.read();
        try {
            drainRequests(); // and the client's first read, once what waited is written
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
        if (!requestBacklog.isEmpty()) {
            try {
                handleRequest(requestBacklog.poll()); // answered with the failure, then closed
            } catch (Throwable t) {
                failed(SessionHandler.Side.CLIENT, t);
            }
            return;
        }
        // Read the client's first request so it gets an error reply, not just a reset.
        client.read();
        client.eventLoop().schedule(() -> close(null), UNAVAILABLE_GRACE_SECONDS, TimeUnit.SECONDS);
    }

    /** Neither usable nor known to have failed: requests wait, they have nowhere to go yet. */
    private boolean upstreamPending() {
        return upstream == null && upstreamFailure == null;
    }

    void received(SessionHandler.Side side, Frame frame) {
        if (side == SessionHandler.Side.CLIENT) {
            fromClient(frame);
        } else {
            fromUpstream(frame);
        }
    }

    void readComplete(SessionHandler.Side side) {
        Flow flow = side == SessionHandler.Side.CLIENT ? clientToUpstream : upstreamToClient;
        if (flow != null) {
            flow.readComplete();
        }
    }

    // ---- client → upstream ------------------------------------------------------------------

    private void fromClient(Frame frame) {
        if (closed) {
            frame.release();
            return;
        }
        if (meters != null) {
            meters.clientBytes(true, frame.length());
        }
        if (parkedRequest != null || !requestBacklog.isEmpty() || upstreamPending()) {
            // behind a request that waits for keys, or before the upstream is ready: order is kept
            requestBacklog.add(frame);
            return;
        }
        handleRequest(frame);
    }

    /** Handles the requests that waited, until one parks again; reads the client again if none did. */
    private void drainRequests() {
        while (parkedRequest == null && !closed && !requestBacklog.isEmpty()) {
            handleRequest(requestBacklog.poll());
        }
        clientToUpstream.flush();
        if (parkedRequest == null) {
            clientToUpstream.release();
        }
    }

    private void handleRequest(Frame frame) {
        if (upstreamFailure != null) {
            try {
                answerUnavailable(frame);
            } finally {
                frame.release();
            }
            return;
        }
        if (frame.opCode() == OpCode.OP_COMPRESSED) {
            try {
                throw compressedNotNegotiated(frame);
            } finally {
                frame.release();
            }
        }
        Request request;
        try {
            request = new Request(frame, client.alloc());
        } catch (RuntimeException e) {
            frame.release();
            throw e;
        }
        if (meters != null) {
            request.readAt(System.nanoTime());
        }
        continueRequest(request, 0);
    }

    /** Runs the filters from the given one on; forwards, answers, closes, or parks the request. */
    private void continueRequest(Request request, int from) {
        try {
            for (int i = from; i < filters.size(); i++) {
                MessageFilter filter = filters.get(i);
                request.enter(filter);
                RequestDecision decision = filter.onRequest(request);
                if (decision instanceof RequestDecision.Replace replace) {
                    request.replaceFrame(replace.frame());
                } else if (decision instanceof RequestDecision.Refuse refuse) {
                    countRefused(request.commandName(), ErrorReplies.codeOf(refuse.reply()));
                    refuse(request.frame(), refuse.reply());
                    request.release();
                    return;
                } else if (decision instanceof RequestDecision.Close c) {
                    if (meters != null) {
                        meters.request(request.commandName(), ProxyMetrics.Outcome.CLOSED);
                    }
                    close(BadInputLog.Reason.REFUSED, "closed: " + c.reason());
                    request.release();
                    return;
                } else if (decision instanceof RequestDecision.Await await) {
                    parkRequest(request, i, await.ready());
                    return;
                }
            }
        } catch (TooLargeAfterRewrite e) {
            countRefused(request.commandName(), ProxyError.TOO_LARGE_AFTER_ENCRYPTION.code());
            refuse(request.frame(), ErrorReplies.replyTo(request.frame(), ProxyError.TOO_LARGE_AFTER_ENCRYPTION,
                    "the request would be " + e.size + " bytes once encrypted, over the " + MsgHeader.MAX_MESSAGE_SIZE
                            + "-byte message limit; send smaller batches"));
            request.release();
            return;
        } catch (RuntimeException | Error e) {
            request.release();
            throw e;
        }
        Frame out = request.frame();
        boolean replyComes = !OpMsg.isMoreToCome(out);
        if (replyComes) {
            pending.expect(out.requestId(), request.expectations());
        }
        if (meters != null) {
            meters.request(request.commandName(), request.replaced() ? ProxyMetrics.Outcome.REWRITTEN
                    : ProxyMetrics.Outcome.FORWARDED);
            meters.upstreamBytes(false, out.length());
            if (replyComes) {
                timings.add(out.requestId(), new RequestTiming(request.readAtNanos(), System.nanoTime(),
                        request.collectionLabel()));
            }
        }
        clientToUpstream.write(upstream, out.content().retain());
        request.release();
    }

    /** Counts a request answered with an error instead of being forwarded. */
    private void countRefused(String command, int code) {
        if (meters != null) {
            meters.request(command, ProxyMetrics.Outcome.REFUSED);
            metrics.refused(command, code);
        }
    }

    private void parkRequest(Request request, int filterIndex, CompletionStage<?> ready) {
        long now = System.nanoTime();
        request.parkedAt(now);
        Parked parked = new Parked(request, null, filterIndex);
        parkedRequest = parked;
        clientToUpstream.hold();
        long remaining = keyWaitNanos - (now - request.parkedSinceNanos());
        wake(parked, ready, remaining);
    }

    /** Resumes a parked message when what it waits for is ready, or when its wait runs out. */
    private void wake(Parked parked, CompletionStage<?> ready, long remainingNanos) {
        parked.timer = client.eventLoop().schedule(() -> resume(parked, true), Math.max(0, remainingNanos),
                TimeUnit.NANOSECONDS);
        ready.whenComplete((v, e) -> {
            try {
                client.eventLoop().execute(() -> resume(parked, false));
            } catch (RejectedExecutionException shuttingDown) {
                // the proxy is stopping; the session is closed with its loop
            }
        });
    }

    private void resume(Parked parked, boolean waitedOut) {
        if (parked.resumed) {
            return;
        }
        parked.resumed = true;
        parked.timer.cancel(false);
        boolean isRequest = parked.request != null;
        if (isRequest) {
            parkedRequest = null;
        } else {
            parkedReply = null;
        }
        if (closed) {
            parked.release();
            return;
        }
        SessionHandler.Side side = isRequest ? SessionHandler.Side.CLIENT : SessionHandler.Side.UPSTREAM;
        try {
            if (isRequest) {
                Request r = parked.request;
                r.keyWaitExpired(waitedOut || System.nanoTime() - r.parkedSinceNanos() >= keyWaitNanos);
                continueRequest(r, parked.filterIndex);
                drainRequests();
            } else {
                Reply r = parked.reply;
                r.keyWaitExpired(waitedOut || System.nanoTime() - r.parkedSinceNanos() >= keyWaitNanos);
                continueReply(r, parked.expectations, parked.filterIndex);
                while (parkedReply == null && !closed && !replyBacklog.isEmpty()) {
                    handleReply(replyBacklog.poll());
                }
                upstreamToClient.flush();
                if (parkedReply == null) {
                    upstreamToClient.release();
                }
            }
        } catch (Throwable t) {
            failed(side, t);
        }
    }

    private void refuse(Frame request, WireMessage reply) {
        if (OpMsg.isMoreToCome(request)) {
            // The client asked for no reply (w:0), so an error cannot be delivered on this connection:
            // closing it is how a server reports a refused unacknowledged write.
            close(BadInputLog.Reason.REFUSED,
                    "refused a request sent with moreToCome (unacknowledged); closing the connection");
            return;
        }
        io.netty.buffer.ByteBuf encoded = reply.encode(client.alloc(), ownRequestId(),
                request.requestId());
        if (meters != null) {
            meters.clientBytes(false, encoded.readableBytes());
        }
        clientToUpstream.write(client, encoded);
    }

    private void answerUnavailable(Frame frame) {
        countRefused(null, ProxyError.UPSTREAM_UNAVAILABLE.code());
        if (frame.opCode() == OpCode.OP_MSG || frame.opCode() == OpCode.OP_QUERY) {
            WireMessage reply = ErrorReplies.replyTo(frame, ProxyError.UPSTREAM_UNAVAILABLE, upstreamFailure);
            client.write(reply.encode(client.alloc(), ownRequestId(), frame.requestId()));
        }
        close(null);
    }

    private static WireProtocolException compressedNotNegotiated(Frame frame) {
        OpCompressed c = OpCompressed.parse(frame);
        return new WireProtocolException("received OP_COMPRESSED (" + c.compressorName() + ", wrapping "
                + OpCode.name(c.originalOpcode()) + ") but this proxy never negotiates compression");
    }

    // ---- upstream → client ------------------------------------------------------------------

    private void fromUpstream(Frame frame) {
        if (closed) {
            frame.release();
            return;
        }
        if (meters != null) {
            meters.upstreamBytes(true, frame.length());
        }
        if (parkedReply != null || !replyBacklog.isEmpty()) {
            replyBacklog.add(frame);
            return;
        }
        handleReply(frame);
    }

    private void handleReply(Frame frame) {
        if (frame.opCode() == OpCode.OP_COMPRESSED) {
            try {
                throw compressedNotNegotiated(frame);
            } finally {
                frame.release();
            }
        }
        List<PendingReplies.Expectation> expectations;
        try {
            expectations = pending.take(frame);
        } catch (RuntimeException e) {
            frame.release();
            throw e;
        }
        Reply reply = new Reply(frame, client.alloc());
        if (meters != null) {
            // the first reply to a request (an exhaust stream's later ones answer no request of the client's)
            RequestTiming t = timings.take(frame.responseTo());
            if (t != null) {
                reply.timed(t, System.nanoTime());
            }
        }
        continueReply(reply, expectations, 0);
    }

    private void continueReply(Reply reply, List<PendingReplies.Expectation> expectations, int from) {
        try {
            for (int i = from; i < expectations.size(); i++) {
                PendingReplies.Expectation e = expectations.get(i);
                ReplyDecision decision = e.filter().onReply(reply, e.state());
                if (decision instanceof ReplyDecision.Replace replace) {
                    reply.replaceFrame(replace.frame());
                } else if (decision instanceof ReplyDecision.Await await) {
                    parkReply(reply, expectations, i, await.ready());
                    return;
                }
            }
            Frame out = reply.frame();
            if (out.length() > MsgHeader.MAX_MESSAGE_SIZE) {
                throw new WireProtocolException("a rewritten reply would be " + out.length() + " bytes");
            }
            upstreamToClient.write(client, out.content().retain());
            if (meters != null) {
                meters.clientBytes(false, out.length());
                RequestTiming t = reply.timing();
                if (t != null) {
                    meters.latency(t.collection(), System.nanoTime() - t.readAtNanos(),
                            reply.readAtNanos() - t.forwardedAtNanos());
                }
            }
            if (OpMsg.isMoreToCome(reply.received()) && !OpMsg.isMoreToCome(out)) {
                label("exhaust_ended");
                // A filter ended an exhaust stream early (with an error): the upstream would keep
                // streaming, so the pair cannot stay in step.
                close("closed: an exhaust stream was ended early by an error reply");
            }
        } finally {
            if (parkedReply == null || parkedReply.reply != reply) {
                reply.release();
            }
        }
    }

    private void parkReply(Reply reply, List<PendingReplies.Expectation> expectations, int index,
                           CompletionStage<?> ready) {
        long now = System.nanoTime();
        reply.parkedAt(now);
        Parked parked = new Parked(null, reply, index);
        parked.expectations = expectations;
        parkedReply = parked;
        upstreamToClient.hold();
        wake(parked, ready, keyWaitNanos - (now - reply.parkedSinceNanos()));
    }

    /** A request or reply waiting for keys, with where its filters stopped. */
    private static final class Parked {
        final Request request;
        final Reply reply;
        final int filterIndex;
        List<PendingReplies.Expectation> expectations;
        ScheduledFuture<?> timer;
        boolean resumed;

        Parked(Request request, Reply reply, int filterIndex) {
            this.request = request;
            this.reply = reply;
            this.filterIndex = filterIndex;
        }

        void release() {
            if (request != null) {
                request.release();
            } else {
                reply.release();
            }
        }
    }

    // ---- closing ----------------------------------------------------------------------------

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

    /**
     * An exception on either side: one log line that says why, then both connections close. What
     * a client's bad input causes is logged as a WARN without a stack trace, rate-limited (a peer
     * that proved nothing must not be able to fill the disk); only what looks like our own bug
     * keeps an ERROR with its stack trace, and that too at most once per window.
     */
    void failed(SessionHandler.Side side, Throwable cause) {
        if (closed || side == SessionHandler.Side.UPSTREAM && upstream == null) {
            return; // as in closedBy: the handshake's own listener reports it
        }
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        String from = side.name().toLowerCase(java.util.Locale.ROOT);
        boolean fromClient = side == SessionHandler.Side.CLIENT;
        if (root instanceof WireProtocolException) {
            closeBad(fromClient, BadInputLog.Reason.PROTOCOL_ERROR,
                    "closed: protocol error from " + from + ": " + root.getMessage());
        } else if (root instanceof BSONException || root instanceof BsonInvalidOperationException) {
            closeBad(fromClient, BadInputLog.Reason.MALFORMED_BSON,
                    "closed: malformed BSON from " + from + ": " + root.getMessage());
        } else if (root instanceof StackOverflowError) {
            // BSON decoding recurses per nesting level; a message nested deeply enough (a 48 MB
            // message holds millions of levels) overflows the stack: bad input, one line, not a trace.
            closeBad(fromClient, BadInputLog.Reason.MALFORMED_BSON,
                    "closed: malformed BSON from " + from + ": documents nested too deeply to decode");
        } else if (root instanceof SSLException) {
            // a peer that cannot complete the handshake (no or an untrusted client certificate, no
            // common protocol) or that breaks a record: bad input, one line, no trace
            closeBad(fromClient, BadInputLog.Reason.TLS, "closed: TLS with " + from + " failed: "
                    + TlsFailures.describe(root));
        } else if (root instanceof IOException) {
            log.debug("{}: {} connection error: {}", who, from, root.toString());
            label("io_error");
            close(null);
        } else if (fromClient && BadInputLog.isMalformedInputSymptom(root)) {
            // The driver's RawBsonDocument, ByteBuffer/ByteBuf bounds checks and our rewriters throw
            // these on lengths and types that lie (e.g. an IllegalArgumentException "newPosition >
            // limit" from RawBsonDocument.containsKey): the client's bad input. Where it was thrown
            // is kept in the line, so a bug of ours hiding here can still be found.
            close(BadInputLog.Reason.MALFORMED_BSON, "closed: malformed message from client ("
                    + root.getClass().getSimpleName() + BadInputLog.thrownAt(root) + ": " + root.getMessage() + ")");
        } else {
            // NullPointerException, IllegalReferenceCountException, UnsupportedOperationException, any
            // Error, anything from the upstream side: ours to fix, so the stack trace is kept.
            badInput.report(BadInputLog.Reason.UNEXPECTED_ERROR, who,
                    "closed after an unexpected error handling a message from " + from, root, client.eventLoop());
            label("unexpected_error");
            close(null);
        }
    }

    /** A client's bad input is rate-limited; the upstream's (rare, and a server we trust) is always logged. */
    private void closeBad(boolean fromClient, BadInputLog.Reason reason, String text) {
        label((fromClient ? "" : "upstream_") + reason.name().toLowerCase(java.util.Locale.ROOT));
        if (fromClient) {
            close(reason, text);
        } else {
            close(text);
        }
    }

    private void writeFailed(Throwable cause) {
        if (!closed) {
            log.debug("{}: write failed: {}", who, String.valueOf(cause));
        }
        label("io_error");
        close(null);
    }

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
        label(reason.name().toLowerCase(java.util.Locale.ROOT));
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
    private void label(String reason) {
        if (closeLabel == null) {
            closeLabel = reason;
        }
    }

    private void shutDown() {
        closed = true;
        metrics.closed(closeLabel != null ? closeLabel : "normal");
        closeAfterFlush(client);
        if (upstream != null) {
            closeAfterFlush(upstream);
        } else if (upstreamConnecting != null) {
            upstreamConnecting.close(); // still connecting or in its TLS handshake: not needed any more
        }
        releaseWaiting();
        listener.closed(this);
    }

    /** Frees what waited behind a parked message; a parked one is freed when it resumes. */
    private void releaseWaiting() {
        for (Frame f : requestBacklog) {
            f.release();
        }
        requestBacklog.clear();
        for (Frame f : replyBacklog) {
            f.release();
        }
        replyBacklog.clear();
        for (Parked p : new Parked[] {parkedRequest, parkedReply}) {
            if (p != null && !p.resumed) {
                p.resumed = true;
                p.timer.cancel(false);
                p.release();
            }
        }
        parkedRequest = null;
        parkedReply = null;
    }

    private static void closeAfterFlush(Channel ch) {
        if (ch.isActive()) {
            ch.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        } else {
            ch.close();
        }
    }

    private static String describe(Throwable t) {
        String msg = t.getMessage();
        return msg == null ? t.getClass().getSimpleName() : msg;
    }
}
