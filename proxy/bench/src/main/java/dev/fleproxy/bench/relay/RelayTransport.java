package dev.fleproxy.bench.relay;

import io.netty.channel.Channel;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import java.util.Locale;

/**
 * The relay's socket transport, named as the proxy's {@code transport:} setting names them
 * (a copy of the proxy's choice, since this project does not depend on the proxy's artifact).
 */
public enum RelayTransport {
    NIO("nio"),
    EPOLL("epoll"),
    IO_URING("io_uring");

    private final String configName;

    RelayTransport(String configName) {
        this.configName = configName;
    }

    public String configName() {
        return configName;
    }

    /** auto (epoll where it loads, else nio, as the proxy's default), nio, epoll, io_uring. */
    public static RelayTransport choose(String name) {
        if (name == null || name.equals("auto")) {
            return EPOLL.unavailabilityCause() == null ? EPOLL : NIO;
        }
        for (RelayTransport t : values()) {
            if (t.configName.equals(name.toLowerCase(Locale.ROOT))) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown transport " + name + " (auto, nio, epoll or io_uring)");
    }

    /** Why this transport cannot run here, or null if it can. */
    public String unavailabilityCause() {
        Throwable cause;
        try {
            cause = switch (this) {
                case NIO -> null;
                case EPOLL -> Epoll.unavailabilityCause();
                case IO_URING -> IoUring.unavailabilityCause();
            };
        } catch (LinkageError e) {
            cause = e;
        }
        if (cause == null) {
            return null;
        }
        return cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
    }

    IoHandlerFactory handlerFactory() {
        return switch (this) {
            case NIO -> NioIoHandler.newFactory();
            case EPOLL -> EpollIoHandler.newFactory();
            case IO_URING -> IoUringIoHandler.newFactory();
        };
    }

    Class<? extends ServerChannel> serverChannel() {
        return switch (this) {
            case NIO -> NioServerSocketChannel.class;
            case EPOLL -> EpollServerSocketChannel.class;
            case IO_URING -> IoUringServerSocketChannel.class;
        };
    }

    Class<? extends Channel> socketChannel() {
        return switch (this) {
            case NIO -> NioSocketChannel.class;
            case EPOLL -> EpollSocketChannel.class;
            case IO_URING -> IoUringSocketChannel.class;
        };
    }
}
