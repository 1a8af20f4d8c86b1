package dev.fleproxy.testing;

import dev.fleproxy.config.KmipConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bson.BsonDocument;

/**
 * A real PyKMIP server, set up and run through the project's kms CLI (kms/kms) in a temporary
 * directory on a free port, with the bootstrap keys. Needs the virtual environment `make venv`
 * creates; without it the fixture fails with a message saying so (tests never skip silently).
 */
public final class KmsFixture implements AutoCloseable {
    public static final String AES_256 = "89d6d529-a2fe-31dd-ae60-3cb35458dcc0";
    public static final String ARIA_256 = "da6fd698-4681-3bb5-88ad-d1d9d68b1df6";
    public static final String TDES = "93a7f87f-458c-31be-ad16-d5dfa2fc1bae";

    private final Path dir;
    private final int port;
    private Process server;

    private KmsFixture(Path dir, int port) {
        this.dir = dir;
        this.port = port;
    }

    public static Path projectRoot() {
        Path cwd = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        return Files.exists(cwd.resolve("kms/kms")) ? cwd : cwd.getParent();
    }

    static Path cli() {
        Path kms = projectRoot().resolve("kms/kms");
        if (!Files.isExecutable(kms)) {
            throw new IllegalStateException(kms + " not found");
        }
        return kms;
    }

    public static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** init + serve + bootstrap. */
    public static KmsFixture start() throws Exception {
        Path dir = Files.createTempDirectory("fle-kms");
        KmsFixture k = new KmsFixture(dir, freePort());
        k.run("init", "--dir", dir.toString(), "--port", String.valueOf(k.port));
        k.startServer();
        k.run("bootstrap", "--dir", dir.toString());
        return k;
    }

    public Path dir() {
        return dir;
    }

    public int port() {
        return port;
    }

    /** Runs the kms CLI with these arguments; returns stdout, fails with stderr on a non-zero exit. */
    public String run(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(cli().toString());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("kms " + String.join(" ", args) + " failed: " + out + err);
        }
        return out;
    }

    public void startServer() throws Exception {
        server = new ProcessBuilder(cli().toString(), "serve", "--dir", dir.toString())
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("serve.out").toFile())
                .start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (!server.isAlive()) {
                throw new IllegalStateException("kms serve exited: " + Files.readString(dir.resolve("serve.out")));
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException e) {
                Thread.sleep(100);
            }
        }
        throw new IllegalStateException("the KMS did not listen on " + port + " within 60 s");
    }

    /** Kills the server at once (an outage, not a shutdown). */
    public void killServer() throws InterruptedException {
        if (server != null) {
            // pykmip-server's worker processes outlive a killed parent: kill them too
            server.descendants().forEach(ProcessHandle::destroyForcibly);
            server.destroyForcibly();
            server.waitFor(30, TimeUnit.SECONDS);
            server = null;
        }
    }

    /** The UUIDs bootstrap chose for the extra keys: SEED-128, LEA-256, AES-128, ARIA-128. */
    public Map<String, String> extraKeys() throws IOException {
        BsonDocument d = BsonDocument.parse(Files.readString(dir.resolve("bootstrap.json")));
        return Map.of("SEED-128", d.getString("SEED-128").getValue(), "LEA-256", d.getString("LEA-256").getValue(),
                "AES-128", d.getString("AES-128").getValue(), "ARIA-128", d.getString("ARIA-128").getValue());
    }

    /** The proxy's settings for this KMS, with its PEM client identity. */
    public KmipConfig config(Duration ttl, Duration outageWindow) {
        return config(ttl, outageWindow, dir.resolve("proxy.pem"), dir.resolve("proxy.key"));
    }

    public KmipConfig config(Duration ttl, Duration outageWindow, Path cert, Path key) {
        return new KmipConfig(new KmipConfig.Server("127.0.0.1", port, null),
                KmipConfig.Identity.pem(dir.resolve("ca.pem"), cert, key), KmipConfig.Cache.of(ttl, outageWindow),
                KmipConfig.Pool.of(2000, 10_000));
    }

    public KmipConfig pkcs12Config(Duration ttl) throws IOException {
        String password = Files.readString(dir.resolve("proxy.p12.password")).trim();
        return new KmipConfig(new KmipConfig.Server("127.0.0.1", port, null),
                KmipConfig.Identity.pkcs12(dir.resolve("ca.pem"), dir.resolve("proxy.p12"), password),
                KmipConfig.Cache.of(ttl, Duration.ofSeconds(60)), KmipConfig.Pool.of(2000, 10_000));
    }

    @Override
    public void close() throws Exception {
        killServer();
    }
}
