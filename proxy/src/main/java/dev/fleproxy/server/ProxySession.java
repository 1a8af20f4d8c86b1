package dev.fleproxy.server;

import dev.fleproxy.config.HostPort;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.FrameDecoder;
import dev.fleproxy.wire.MsgHeader;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpCompressed;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpQuery;
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
import java.util.List;
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
 * on the same event loop, so nothing here needs locking.
 */
final class ProxySession {
    private static final Logger log = LoggerFactory.getLogger(ProxySession.class);
    private static final AtomicLong IDS = new AtomicLong();
    /** requestIDs of replies the proxy writes itself; any value is valid, these are easy to spot. */
    private static final AtomicInteger OWN_REQUEST_IDS = new AtomicInteger(0x40000000);
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
    private final PendingReplies pending = new PendingReplies();
    private final Flow clientToUpstream;
    private Flow upstreamToClient;
    private Channel upstream;
    private String upstreamFailure;
    private boolean closed;

    /** Lets the server count sessions and tests wait for them. */
    interface SessionListener {
        void opened(ProxySession session);

        void closed(ProxySession session);
    }

    ProxySession(Channel client, Transport transport, HostPort upstreamAddress, int connectTimeoutMs,
                 List<MessageFilter> filters, SessionListener listener) {
        this.client = client;
        this.transport = transport;
        this.who = "conn#" + IDS.incrementAndGet() + " from " + client.remoteAddress();
        this.upstreamAddress = upstreamAddress;
        this.connectTimeoutMs = connectTimeoutMs;
        this.filters = filters;
        this.listener = listener;
        this.clientToUpstream = new Flow(client, this::writeFailed);
    }

    /** Called when the client connection is accepted: connect upstream, then start reading. */
    void start() {
        listener.opened(this);
        new Bootstrap()
                .group(client.eventLoop())
                .channel(transport.socketChannel())
                .option(ChannelOption.AUTO_READ, false)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMs)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new FrameDecoder(),
                                new SessionHandler(ProxySession.this, SessionHandler.Side.UPSTREAM));
                    }
                })
                .connect(upstreamAddress.host(), upstreamAddress.port())
                .addListener((ChannelFutureListener) f -> {
                    if (f.isSuccess()) {
                        upstream = f.channel();
                        upstreamToClient = new Flow(upstream, this::writeFailed);
                        if (closed) {
                            upstream.close();
                        } else {
                            log.debug("{}: connected to upstream {}", who, upstreamAddress);
                            upstream.read();
                            client.read();
                        }
                    } else {
                        upstreamFailure = "upstream " + upstreamAddress + " is unreachable: " + describe(f.cause());
                        log.warn("{}: {}", who, upstreamFailure);
                        // Read the client's first request so it gets an error reply, not just a reset.
                        client.read();
                        client.eventLoop().schedule(() -> close(null), UNAVAILABLE_GRACE_SECONDS, TimeUnit.SECONDS);
                    }
                });
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
        Frame current = frame;
        try {
            if (closed) {
                return;
            }
            if (upstreamFailure != null) {
                answerUnavailable(frame);
                return;
            }
            Request request = new Request(frame, commandName(frame));
            try {
                current = applyFilters(request, frame);
            } catch (TooLargeAfterRewrite e) {
                refuse(frame, ErrorReplies.replyTo(frame, ProxyError.TOO_LARGE_AFTER_ENCRYPTION, "the request would be "
                        + e.size + " bytes once encrypted, over the " + MsgHeader.MAX_MESSAGE_SIZE
                        + "-byte message limit; send smaller batches"));
                return;
            }
            if (current == null) {
                return; // answered or closed by a filter
            }
            if (!OpMsg.isMoreToCome(current)) {
                pending.expect(current.requestId(), request.expectations());
            }
            clientToUpstream.write(upstream, current.content().retain());
        } finally {
            releaseBoth(frame, current);
        }
    }

    /**
     * Runs the request through the filters; returns the frame to forward, or null if a filter
     * answered it (the reply is written) or closed the connection.
     */
    private Frame applyFilters(Request request, Frame frame) {
        Frame current = frame;
        try {
            for (MessageFilter filter : filters) {
                request.enter(filter);
                RequestDecision decision = filter.onRequest(request);
                if (decision instanceof RequestDecision.Replace replace) {
                    current = replace(current, frame, replace.message());
                    request.replaceFrame(current);
                } else if (decision instanceof RequestDecision.Refuse refuse) {
                    refuse(current, refuse.reply());
                    releaseIfReplacement(current, frame);
                    return null;
                } else if (decision instanceof RequestDecision.Close c) {
                    close("closed: " + c.reason());
                    releaseIfReplacement(current, frame);
                    return null;
                }
            }
            return current;
        } catch (RuntimeException e) {
            releaseIfReplacement(current, frame);
            throw e;
        }
    }

    private static void releaseIfReplacement(Frame current, Frame received) {
        if (current != received) {
            current.release();
        }
    }

    /**
     * Encodes a filter's replacement with the ids of the message it replaces. The received frame
     * is released by the caller; an earlier replacement is released here.
     */
    private Frame replace(Frame current, Frame received, WireMessage message) {
        Frame next = new Frame(message.encode(client.alloc(), current.requestId(), current.responseTo()));
        if (next.length() > MsgHeader.MAX_MESSAGE_SIZE) {
            int size = next.length();
            next.release();
            throw new TooLargeAfterRewrite(size);
        }
        if (current != received) {
            current.release();
        }
        return next;
    }

    /** A rewritten message over the 48,000,000-byte limit: refused rather than sent. */
    private static final class TooLargeAfterRewrite extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final int size;

        TooLargeAfterRewrite(int size) {
            super(null, null, false, false);
            this.size = size;
        }
    }

    private static void releaseBoth(Frame received, Frame current) {
        received.release();
        if (current != null && current != received) {
            current.release();
        }
    }

    private void refuse(Frame request, WireMessage reply) {
        if (OpMsg.isMoreToCome(request)) {
            // The client asked for no reply (w:0), so an error cannot be delivered on this connection:
            // closing it is how a server reports a refused unacknowledged write.
            close("refused a request sent with moreToCome (unacknowledged); closing the connection");
            return;
        }
        clientToUpstream.write(client,
                reply.encode(client.alloc(), OWN_REQUEST_IDS.incrementAndGet(), request.requestId()));
    }

    private void answerUnavailable(Frame frame) {
        if (frame.opCode() == OpCode.OP_MSG || frame.opCode() == OpCode.OP_QUERY) {
            WireMessage reply = ErrorReplies.replyTo(frame, ProxyError.UPSTREAM_UNAVAILABLE, upstreamFailure);
            client.write(reply.encode(client.alloc(), OWN_REQUEST_IDS.incrementAndGet(), frame.requestId()));
        }
        close(null);
    }

    /** The command name, or null; validates the structure of OP_MSG on the way. */
    private static String commandName(Frame frame) {
        switch (frame.opCode()) {
            case OpCode.OP_MSG:
                return OpMsg.peekCommandName(frame);
            case OpCode.OP_QUERY: {
                OpQuery query = OpQuery.parse(frame);
                if (!query.isCommand()) {
                    return null;
                }
                var command = query.command();
                return command.isEmpty() ? "" : command.getFirstKey();
            }
            case OpCode.OP_COMPRESSED:
                throw compressedNotNegotiated(frame);
            default:
                return null;
        }
    }

    private static WireProtocolException compressedNotNegotiated(Frame frame) {
        OpCompressed c = OpCompressed.parse(frame);
        return new WireProtocolException("received OP_COMPRESSED (" + c.compressorName() + ", wrapping "
                + OpCode.name(c.originalOpcode()) + ") but this proxy never negotiates compression");
    }

    // ---- upstream → client ------------------------------------------------------------------

    private void fromUpstream(Frame frame) {
        Frame current = frame;
        try {
            if (closed) {
                return;
            }
            if (frame.opCode() == OpCode.OP_COMPRESSED) {
                throw compressedNotNegotiated(frame);
            }
            for (PendingReplies.Expectation e : pending.take(frame)) {
                WireMessage rewritten = e.filter().onReply(current, e.state());
                if (rewritten != null) {
                    current = replace(current, frame, rewritten);
                }
            }
            upstreamToClient.write(client, current.content().retain());
            if (OpMsg.isMoreToCome(frame) && !OpMsg.isMoreToCome(current)) {
                // A filter ended an exhaust stream early (with an error): the upstream would keep
                // streaming, so the pair cannot stay in step.
                close("closed: an exhaust stream was ended early by an error reply");
            }
        } finally {
            releaseBoth(frame, current);
        }
    }

    // ---- closing ----------------------------------------------------------------------------

    void closedBy(SessionHandler.Side side) {
        if (side == SessionHandler.Side.UPSTREAM && !closed) {
            log.info("{}: upstream {} closed the connection", who, upstreamAddress);
        }
        close(null);
    }

    /** An exception on either side: one log line that says why, then both connections close. */
    void failed(SessionHandler.Side side, Throwable cause) {
        if (closed) {
            return;
        }
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        String from = side.name().toLowerCase(java.util.Locale.ROOT);
        if (root instanceof WireProtocolException) {
            close("closed: protocol error from " + from + ": " + root.getMessage());
        } else if (root instanceof BSONException || root instanceof BsonInvalidOperationException) {
            close("closed: malformed BSON from " + from + ": " + root.getMessage());
        } else if (root instanceof StackOverflowError) {
            // BSON decoding recurses per nesting level; a message nested deeply enough (a 48 MB
            // message holds millions of levels) overflows the stack: bad input, one line, not a trace.
            close("closed: malformed BSON from " + from + ": documents nested too deeply to decode");
        } else if (root instanceof IOException) {
            log.debug("{}: {} connection error: {}", who, from, root.toString());
            close(null);
        } else {
            log.error("{}: closed after an unexpected error handling a message from {}", who, from, root);
            close(null);
        }
    }

    private void writeFailed(Throwable cause) {
        if (!closed) {
            log.debug("{}: write failed: {}", who, String.valueOf(cause));
        }
        close(null);
    }

    /** Closes both sides after flushing what was already written; logs the reason once. */
    void close(String reason) {
        if (closed) {
            return;
        }
        closed = true;
        if (reason != null) {
            log.warn("{}: {}", who, reason);
        } else {
            log.debug("{}: closed", who);
        }
        closeAfterFlush(client);
        if (upstream != null) {
            closeAfterFlush(upstream);
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

    private static String describe(Throwable t) {
        String msg = t.getMessage();
        return msg == null ? t.getClass().getSimpleName() : msg;
    }
}
