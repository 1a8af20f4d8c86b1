package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/** Frames from the upstream go to the session; so do the upstream channel's life-cycle events. */
final class UpstreamSideHandler extends ChannelInboundHandlerAdapter {
    private final ProxySession session;

    UpstreamSideHandler(ProxySession session) {
        this.session = session;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        session.fromUpstream((Frame) msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        session.upstreamReadComplete();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        session.upstreamClosed();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        session.failed("upstream", cause);
    }
}
