package dev.fleproxy.audit;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * The audit trail's lines also sent to syslog over UDP (RFC 5424, facility log audit (13),
 * severity informational: priority 110), one datagram per line, from the writer thread. UDP may
 * lose datagrams: the file stays the trail of record, the one {@code audit verify} checks.
 */
final class SyslogSink implements AutoCloseable {
    private static final int PRIORITY = 13 * 8 + 6;

    private final DatagramChannel channel;
    private final InetSocketAddress target;
    private final String host;

    SyslogSink(InetSocketAddress target) throws IOException {
        this.target = target;
        this.channel = DatagramChannel.open();
        this.host = hostName();
    }

    void send(String line) throws IOException {
        String message = "<" + PRIORITY + ">1 " + Instant.now() + " " + host + " fle-proxy - audit - " + line;
        channel.send(ByteBuffer.wrap(message.getBytes(StandardCharsets.UTF_8)), target);
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "-";
        }
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
