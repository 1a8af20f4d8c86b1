package dev.fleproxy.tls;

import dev.fleproxy.config.ConfigException;
import dev.fleproxy.config.Hangup;
import dev.fleproxy.config.ListenerTls;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.X509Certificate;
import java.time.Instant;
import java.util.Arrays;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client-facing TLS context ({@code tls:}), reloaded when its certificate, key or client CA
 * files change (checked every two seconds) and on SIGHUP: new connections get the new context,
 * connections already open keep theirs, so a certificate renewal drops nothing. Files that do not
 * load, a key that is not the certificate's, or a certificate outside its validity period
 * ({@link KeyPairCheck}) are not applied; the previous context stays and the log says why.
 */
public final class ListenerContext implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ListenerContext.class);

    private final ListenerTls config;
    private final ScheduledExecutorService watcher;
    private final Runnable onHangup;
    private volatile Loaded current;
    private byte[] fingerprint;

    private ListenerContext(ListenerTls config) {
        this.config = config;
        this.fingerprint = digest();
        this.current = load(config);
        this.watcher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "tls-reload");
            t.setDaemon(true);
            return t;
        });
        this.onHangup = () -> watcher.execute(() -> reload("SIGHUP"));
    }

    /** Loads the files (a problem with them stops the start) and starts watching them. */
    public static ListenerContext start(ListenerTls config) {
        ListenerContext c = new ListenerContext(config);
        c.watcher.scheduleWithFixedDelay(c::checkFiles, 2, 2, TimeUnit.SECONDS);
        Hangup.onHangup(c.onHangup);
        log.info("TLS on the listener: certificate {}, client certificates {}, {}", config.cert(),
                config.clientAuth().name().toLowerCase(java.util.Locale.ROOT), TlsProvider.describe());
        return c;
    }

    /** The handler for a new client connection, from the context in force. */
    public SslHandler newHandler(ByteBufAllocator alloc) {
        return current.context().newHandler(alloc);
    }

    /** The leaf certificate in force. */
    public X509Certificate certificate() {
        return current.leaf();
    }

    /**
     * Loads the files as {@link #start} would, without serving or watching them: the leaf
     * certificate, or the {@link ConfigException} start would fail with (the check command).
     */
    public static X509Certificate verify(ListenerTls config) {
        return load(config).leaf();
    }

    /** A context and the leaf certificate it serves. */
    private record Loaded(SslContext context, X509Certificate leaf) {
    }

    private static Loaded load(ListenerTls t) {
        try {
            // Netty reads the files here: one that does not load is reported in its words, before the
            // check reads them again and before the first TLS log line
            SslContextBuilder b = SslContextBuilder.forServer(t.cert().toFile(), t.key().toFile());
            X509Certificate leaf = KeyPairCheck.check("tls", t.cert(), t.key(), Instant.now());
            b.sslProvider(TlsProvider.get())
                    .protocols(TlsProvider.PROTOCOLS);
            if (t.clientCA() != null) {
                b.trustManager(t.clientCA().toFile());
            }
            b.clientAuth(switch (t.clientAuth()) {
                case NONE -> ClientAuth.NONE;
                case OPTIONAL -> ClientAuth.OPTIONAL;
                case REQUIRED -> ClientAuth.REQUIRE;
            });
            return new Loaded(b.build(), leaf);
        } catch (SSLException | IllegalArgumentException e) {
            throw new ConfigException("tls: cannot load " + t.cert() + " / " + t.key()
                    + (t.clientCA() != null ? " / " + t.clientCA() : "") + ": " + rootMessage(e), e);
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable r = e;
        while (r.getCause() != null && r.getCause() != r) {
            r = r.getCause();
        }
        return r == e ? String.valueOf(e.getMessage()) : e.getMessage() + " (" + r.getMessage() + ")";
    }

    private void checkFiles() {
        byte[] now = digest();
        if (now != null && !Arrays.equals(now, fingerprint)) {
            reload("the certificate files changed");
        }
    }

    /** Loads the files again; applies them if they load. Returns whether they were applied. */
    public synchronized boolean reload(String why) {
        fingerprint = digest();
        try {
            current = load(config);
        } catch (ConfigException e) {
            log.error("TLS reload ({}) failed, keeping the previous certificate: {}", why, e.getMessage());
            return false;
        }
        log.info("TLS certificate reloaded ({}): new connections use {}", why, config.cert());
        String expiry = ExpiryWarnings.warning("listener", current.leaf(), Instant.now());
        if (expiry != null) {
            log.warn(expiry);
        }
        return true;
    }

    private byte[] digest() {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            for (Path p : new Path[] {config.cert(), config.key(), config.clientCA()}) {
                if (p != null) {
                    md.update(Files.readAllBytes(p));
                }
            }
            return md.digest();
        } catch (IOException | NoSuchAlgorithmException e) {
            return null; // mid-rename: try again at the next check
        }
    }

    @Override
    public void close() {
        Hangup.remove(onHangup);
        watcher.shutdownNow();
    }
}
