package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/** Frames from the client go to the session; so do the client channel's life-cycle events. */
final class ClientSideHandler extends ChannelInboundHandlerAdapter {
    private final ProxySession session;

    ClientSideHandler(ProxySession session) {
        this.session = session;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        session.start();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        session.fromClient((Frame) msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        session.clientReadComplete();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        session.clientClosed();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        session.failed("client", cause);
    }
}
