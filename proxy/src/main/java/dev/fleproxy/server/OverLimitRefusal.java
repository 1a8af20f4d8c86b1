package dev.fleproxy.server;

import dev.fleproxy.protocol.ErrorReplies;
import dev.fleproxy.protocol.ProxyError;
import dev.fleproxy.tls.ListenerContext;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.FrameDecoder;
import dev.fleproxy.wire.OpCode;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.FixedRecvByteBufAllocator;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A client connection over maxConnections. Closing it at accept left drivers to report a reset
 * without a reason; instead its first message (a driver's hello) is answered with 9720002, which
 * names the limit, in the form it expects (OP_MSG, or OP_REPLY to a legacy OP_QUERY), and then
 * the connection closes. Such a connection proved nothing, so what it can make the proxy hold is
 * small and short: no upstream connection, reads of at most 16 KiB, one message of at most 16 KiB
 * (a hello is a few hundred bytes; a larger one, or any other opcode, is closed unanswered), and
 * 2 s from accept to close. How many are answered at once is bounded in {@link ClientBounds}. Its
 * bad input is not logged: the line about the refusal said what there is to say.
 */
final class OverLimitRefusal extends ChannelInboundHandlerAdapter {
    static final int MAX_MESSAGE_BYTES = 16 * 1024;
    static final long DEADLINE_MS = 2000;

    private final int limit;
    private ScheduledFuture<?> deadline;
    private boolean answered;

    private OverLimitRefusal(int limit) {
        this.limit = limit;
    }

    /** Makes ch, just accepted over the limit, a connection that only answers its first message. */
    static void install(Channel ch, ListenerContext tls, int limit) {
        ch.config().setRecvByteBufAllocator(new FixedRecvByteBufAllocator(MAX_MESSAGE_BYTES).maxMessagesPerRead(1));
        if (tls != null) {
            ch.pipeline().addLast(tls.newHandler(ch.alloc())); // a TLS client can read the answer only over TLS
        }
        ch.pipeline().addLast(new FrameDecoder(MAX_MESSAGE_BYTES), new OverLimitRefusal(limit));
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        deadline = ctx.executor().schedule(() -> {
            ctx.close();
        }, DEADLINE_MS, TimeUnit.MILLISECONDS);
        ctx.read(); // AUTO_READ is off
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        try {
            if (!answered) {
                answered = true;
                answer(ctx, (Frame) msg);
            }
        } finally {
            ReferenceCountUtil.release(msg); // a message pipelined behind the first is dropped
        }
    }

    private void answer(ChannelHandlerContext ctx, Frame request) {
        if (request.opCode() != OpCode.OP_MSG && request.opCode() != OpCode.OP_QUERY) {
            ctx.close();
            return;
        }
        ctx.writeAndFlush(ErrorReplies.replyTo(request, ProxyError.TOO_MANY_CONNECTIONS,
                        "too many connections to the proxy (limit " + limit + ")")
                .encode(ctx.alloc(), ProxySession.ownRequestId(), request.requestId()))
                .addListener(ChannelFutureListener.CLOSE);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (!answered) {
            ctx.read(); // the message is not complete yet (the decoder caps what it may hold)
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close(); // an over-size or malformed message, TLS that failed: closed unanswered
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (deadline != null) {
            deadline.cancel(false);
        }
    }
}
