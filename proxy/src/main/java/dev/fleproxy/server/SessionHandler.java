package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/** Hands one side's frames and life-cycle events to its session. */
final class SessionHandler extends ChannelInboundHandlerAdapter {
    enum Side { CLIENT, UPSTREAM }

    private final ProxySession session;
    private final Side side;

    SessionHandler(ProxySession session, Side side) {
        this.session = session;
        this.side = side;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (side == Side.CLIENT) {
            session.start();
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        session.received(side, (Frame) msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        session.readComplete(side);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        session.closedBy(side);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        session.failed(side, cause);
    }
}
