package dev.fleproxy.server;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.HostPort;
import dev.fleproxy.config.UpstreamForm;
import dev.fleproxy.tls.UpstreamContext;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.FrameDecoder;
import dev.fleproxy.wire.OpMsg;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.bson.BsonDocument;
import org.bson.BsonInt32;
import org.bson.BsonObjectId;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches a replica set as drivers do (server discovery and monitoring, much simplified): each
 * member is asked {@code hello} every heartbeat on a connection of its own, members its replies
 * name are added, and the primary is the member of the set that says it is writable primary
 * (the highest electionId if two do, as after a partition). Whenever the primary changes (to
 * none, during an election) {@code primaryChanged} hears it. Runs on a single event loop of its
 * own, so its state needs no locks and no client connection's loop waits for it.
 */
final class ReplicaSetMonitor implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ReplicaSetMonitor.class);
    /** At most this often are the members asked out of turn (after a "not primary" reply). */
    private static final long FORCED_CHECK_GAP_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final String set;
    private final Transport transport;
    private final UpstreamResolver resolver;
    private final UpstreamContext tls;
    private final int connectTimeoutMs;
    private final long replyTimeoutNanos;
    private final Consumer<HostPort> primaryChanged;
    private final EventLoopGroup group;
    private final EventLoop loop;
    private final Map<HostPort, Member> members = new LinkedHashMap<>();
    private HostPort primary;
    private long lastForced;
    private int requestIds;
    /** What readiness shows, rewritten by the loop at each change. */
    private volatile List<String> status = List.of();

    /** One member as last seen: its connection, the hello under way, its last reply. */
    private static final class Member {
        final HostPort address;
        Channel channel;
        boolean connecting;
        long sentAt;
        BsonDocument reply;
        boolean isMaster; // a server too old for hello: asked isMaster
        String problem = "not asked yet";

        Member(HostPort address) {
            this.address = address;
        }
    }

    ReplicaSetMonitor(UpstreamForm form, Transport transport, UpstreamResolver resolver, UpstreamContext tls,
                      int connectTimeoutMs, Consumer<HostPort> primaryChanged) {
        if (!form.isReplicaSet()) {
            throw new ConfigException("not a replica set: " + form.describe());
        }
        this.set = form.replicaSet();
        this.transport = transport;
        this.resolver = resolver;
        this.tls = tls;
        this.connectTimeoutMs = connectTimeoutMs;
        this.replyTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(2L * form.heartbeatMs(), connectTimeoutMs));
        this.primaryChanged = primaryChanged;
        this.group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("upstream-monitor", true),
                transport.handlerFactory());
        this.loop = group.next();
        loop.execute(() -> {
            form.addresses().forEach(a -> members.put(a, new Member(a)));
            publish();
        });
        loop.scheduleWithFixedDelay(this::checkAll, 0, form.heartbeatMs(), TimeUnit.MILLISECONDS);
    }

    /** Ask every member now (at most every 50 ms): a connection failed or a member said "not primary". */
    void checkNow() {
        loop.execute(() -> {
            long now = System.nanoTime();
            if (now - lastForced >= FORCED_CHECK_GAP_NANOS) {
                lastForced = now;
                checkAll();
            }
        });
    }

    /** The member said "not primary" on a client's connection: not the primary until its hello says so again. */
    void suspect(HostPort address) {
        loop.execute(() -> {
            Member m = members.get(address);
            if (m != null) {
                m.reply = null;
                m.problem = "answered a client \"not primary\"";
                decide();
            }
            lastForced = System.nanoTime();
            checkAll();
        });
    }

    /** Each member and what it was at its last hello. */
    List<String> describe() {
        return status;
    }

    private void checkAll() {
        for (Member m : new ArrayList<>(members.values())) {
            check(m);
        }
    }

    private void check(Member m) {
        if (m.channel == null) {
            if (!m.connecting) {
                connect(m);
            }
        } else if (m.sentAt == 0) {
            send(m);
        } else if (System.nanoTime() - m.sentAt > replyTimeoutNanos) {
            lost(m, m.channel, "no hello reply in " + TimeUnit.NANOSECONDS.toMillis(replyTimeoutNanos) + " ms");
        }
    }

    private void connect(Member m) {
        m.connecting = true;
        // the name is looked up off this loop too: a slow lookup must not hold up the other members' checks
        resolver.resolve(m.address).whenComplete((to, failed) -> loop.execute(() -> {
            if (failed != null) {
                m.connecting = false;
                m.problem = "cannot be looked up: " + (failed.getCause() != null ? failed.getCause() : failed);
                m.reply = null;
                decide();
            } else {
                connect(m, to);
            }
        }));
    }

    private void connect(Member m, InetSocketAddress to) {
        UpstreamRoute.bootstrap(loop, transport, connectTimeoutMs)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (tls != null) {
                            ch.pipeline().addLast(tls.newHandler(ch.alloc(), m.address));
                        }
                        ch.pipeline().addLast(new FrameDecoder(), new SimpleChannelInboundHandler<Frame>() {
                            @Override
                            protected void channelRead0(ChannelHandlerContext ctx, Frame frame) {
                                replied(m, ctx.channel(), frame);
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                lost(m, ctx.channel(), "its connection closed");
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                lost(m, ctx.channel(), String.valueOf(cause.getMessage()));
                            }
                        });
                    }
                })
                .connect(to)
                .addListener((ChannelFutureListener) f -> {
                    m.connecting = false;
                    if (!f.isSuccess()) {
                        m.problem = "unreachable: " + f.cause().getMessage();
                        m.reply = null;
                        decide();
                    } else if (members.get(m.address) == m) {
                        m.channel = f.channel();
                        send(m); // over TLS the handler holds it until the handshake is done
                    } else {
                        f.channel().close();
                    }
                });
    }

    private void send(Member m) {
        m.sentAt = System.nanoTime();
        BsonDocument hello = new BsonDocument(m.isMaster ? "isMaster" : "hello", new BsonInt32(1))
                .append("$db", new BsonString("admin"));
        m.channel.writeAndFlush(new OpMsg(0, hello).encode(m.channel.alloc(), ++requestIds, 0));
    }

    private void replied(Member m, Channel ch, Frame frame) {
        BsonDocument reply; // the frame is released by the handler (SimpleChannelInboundHandler)
        try {
            reply = OpMsg.parse(frame).body();
        } catch (RuntimeException e) {
            lost(m, ch, "an unreadable hello reply: " + e.getMessage());
            return;
        }
        m.sentAt = 0;
        if (!reply.containsKey("ok") || reply.get("ok").isNumber() && reply.getNumber("ok").doubleValue() != 1) {
            m.isMaster = !m.isMaster; // hello unknown to an old server (or the reverse): the other next time
            m.reply = null;
            m.problem = "refused " + (m.isMaster ? "hello" : "isMaster") + ": " + reply.get("errmsg", new BsonString(""));
        } else {
            m.reply = reply;
            m.problem = null;
            discover(reply);
        }
        decide();
    }

    private void lost(Member m, Channel ch, String why) {
        if (m.channel != ch) {
            return; // an older connection's news
        }
        m.channel = null;
        m.sentAt = 0;
        m.reply = null;
        m.problem = why;
        ch.close();
        decide();
    }

    /** Members a member of the set names (hosts, passives) are watched too. */
    private void discover(BsonDocument reply) {
        if (!set.equals(reply.getString("setName", new BsonString("")).getValue())) {
            return;
        }
        for (String field : List.of("hosts", "passives")) {
            for (BsonValue h : reply.getArray(field, new org.bson.BsonArray())) {
                if (!h.isString()) {
                    continue;
                }
                HostPort a;
                try {
                    a = HostPort.parse(h.asString().getValue(), "a member");
                } catch (ConfigException e) {
                    continue;
                }
                if (!members.containsKey(a)) {
                    log.info("replica set {}: watching {} too (named by a member)", set, a);
                    members.put(a, new Member(a));
                    check(members.get(a));
                }
            }
        }
    }

    private void decide() {
        Member best = null;
        for (Member m : members.values()) {
            if (m.reply == null || !set.equals(m.reply.getString("setName", new BsonString("")).getValue())) {
                continue;
            }
            boolean writable = m.reply.getBoolean("isWritablePrimary", m.reply.getBoolean("ismaster",
                    org.bson.BsonBoolean.FALSE)).getValue();
            if (writable && (best == null || newer(m.reply, best.reply))) {
                best = m;
            }
        }
        HostPort now = best == null ? null : best.address;
        publish();
        if (!Objects.equals(now, primary)) {
            log.info("replica set {}: primary {}{}", set, now == null ? "none" : now,
                    primary == null ? "" : " (was " + primary + ")");
            primary = now;
            primaryChanged.accept(now);
        }
    }

    /** Whether a's claim to be primary is newer than b's: a higher electionId (then setVersion). */
    private static boolean newer(BsonDocument a, BsonDocument b) {
        BsonValue ea = a.get("electionId");
        BsonValue eb = b.get("electionId");
        if (ea instanceof BsonObjectId x && eb instanceof BsonObjectId y) {
            int c = x.getValue().compareTo(y.getValue());
            if (c != 0) {
                return c > 0;
            }
        }
        return a.getNumber("setVersion", new BsonInt32(0)).longValue() > b.getNumber("setVersion", new BsonInt32(0))
                .longValue();
    }

    private void publish() {
        List<String> out = new ArrayList<>();
        for (Member m : members.values()) {
            String role = m.reply == null ? "down (" + m.problem + ")"
                    : !set.equals(m.reply.getString("setName", new BsonString("")).getValue())
                    ? "not a member of " + set + " (setName " + m.reply.getString("setName", new BsonString("none"))
                    .getValue() + ")"
                    : m.address.equals(primary) || m.reply.getBoolean("isWritablePrimary", m.reply.getBoolean("ismaster",
                    org.bson.BsonBoolean.FALSE)).getValue() ? "primary"
                    : m.reply.getBoolean("secondary", org.bson.BsonBoolean.FALSE).getValue() ? "secondary" : "other";
            out.add(m.address + ": " + role);
        }
        status = List.copyOf(out);
    }

    @Override
    public void close() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
