package dev.fleproxy.cli;

import com.mongodb.MongoClientSettings;
import com.mongodb.MongoCommandException;
import com.mongodb.MongoException;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoDatabase;
import dev.fleproxy.config.HostPort;
import dev.fleproxy.config.ProxyConfig;
import dev.fleproxy.config.UpstreamTls;
import dev.fleproxy.kmip.KmipTls;
import dev.fleproxy.tls.TlsFailures;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import javax.net.ssl.SSLSocket;
import org.bson.Document;

/**
 * The upstream: it accepts a connection, over {@code upstreamTls:} its certificate chains to the
 * CA and names the upstream's host (or {@code serverName:}), as the proxy verifies it, and it
 * answers {@code hello}: a mongos, a replica-set member (which), or a standalone server, with its
 * wire version and, if {@code buildInfo} says, its version.
 */
final class UpstreamCheck {
    /** CommandNotFound: servers before MongoDB 4.4.2 know {@code isMaster}, not {@code hello}. */
    private static final int COMMAND_NOT_FOUND = 59;

    private final CheckReport report;

    UpstreamCheck(CheckReport report) {
        this.report = report;
    }

    /** Each address the config names (every mongos, every listed member of a replica set). */
    void run(ProxyConfig cfg) {
        for (HostPort up : cfg.upstream().form().addresses()) {
            if (connects(cfg, up)) {
                hello(cfg, up);
            }
        }
    }

    private boolean connects(ProxyConfig cfg, HostPort up) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(up.host(), up.port()), cfg.upstream().connectTimeoutMs());
            return cfg.upstream().tls() == null || handshake(s, cfg, up);
        } catch (IOException e) {
            report.fail("upstream: cannot connect to " + up + " (within upstreamConnectTimeoutMs "
                    + cfg.upstream().connectTimeoutMs() + "): " + e.getMessage());
            return false;
        }
    }

    /** A TLS handshake on the connected socket, verifying the name the proxy verifies. */
    private boolean handshake(Socket plain, ProxyConfig cfg, HostPort up) {
        UpstreamTls t = cfg.upstream().tls();
        String name = t.serverName() != null ? t.serverName() : up.host();
        try (SSLSocket s = (SSLSocket) UpstreamClients.sslContext(t).getSocketFactory()
                .createSocket(plain, name, up.port(), false)) {
            KmipTls.configure(s, name); // TLS 1.3/1.2, the certificate must name `name`, SNI for a DNS name
            s.setSoTimeout(cfg.upstream().connectTimeoutMs());
            s.startHandshake();
            report.ok("upstreamTls: " + up + " presents a certificate from " + t.ca() + " naming " + name
                    + " (" + s.getSession().getProtocol() + ")");
            return true;
        } catch (IOException | RuntimeException e) {
            report.fail("upstreamTls: the handshake with " + up + " (verifying " + name + ") failed: "
                    + TlsFailures.describe(e));
            return false;
        }
    }

    private void hello(ProxyConfig cfg, HostPort up) {
        // serverName: the driver can only verify the host it connects to; handshake() verified the name
        boolean nameVerified = cfg.upstream().tls() != null && cfg.upstream().tls().serverName() != null;
        MongoClientSettings settings = UpstreamClients.builder(cfg, up, "?directConnection=true")
                .applyToSslSettings(s -> s.invalidHostNameAllowed(nameVerified))
                .build();
        try (MongoClient client = MongoClients.create(settings)) {
            MongoDatabase admin = client.getDatabase("admin");
            Document hello = hello(admin);
            String version = version(admin);
            report.ok("upstream: " + up + " is " + describe(hello) + ", maxWireVersion "
                    + hello.get("maxWireVersion") + (version != null ? ", version " + version : ""));
        } catch (MongoException e) {
            report.fail("upstream: " + up + " did not answer hello: " + e.getMessage());
        }
    }

    private static Document hello(MongoDatabase admin) {
        try {
            return admin.runCommand(new Document("hello", 1));
        } catch (MongoCommandException e) {
            if (e.getErrorCode() != COMMAND_NOT_FOUND) {
                throw e;
            }
            return admin.runCommand(new Document("isMaster", 1));
        }
    }

    /** buildInfo's version, or null if the server does not say. */
    private static String version(MongoDatabase admin) {
        try {
            Object v = admin.runCommand(new Document("buildInfo", 1)).get("version");
            return v == null ? null : v.toString();
        } catch (MongoException e) {
            return null;
        }
    }

    /** What a hello reply says the server is. */
    static String describe(Document hello) {
        if ("isdbgrid".equals(hello.get("msg"))) {
            return "a mongos (sharded cluster)";
        }
        Object set = hello.get("setName");
        if (set == null) {
            return "a standalone server";
        }
        String role;
        if (Boolean.TRUE.equals(hello.get("isWritablePrimary")) || Boolean.TRUE.equals(hello.get("ismaster"))) {
            role = "the primary";
        } else if (Boolean.TRUE.equals(hello.get("secondary"))) {
            role = "a secondary";
        } else if (Boolean.TRUE.equals(hello.get("arbiterOnly"))) {
            role = "an arbiter";
        } else {
            role = "a member (neither primary nor secondary)";
        }
        return role + " of replica set " + set;
    }
}
