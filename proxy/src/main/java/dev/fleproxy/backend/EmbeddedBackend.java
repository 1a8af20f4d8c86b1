package dev.fleproxy.backend;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The MongoDB-compatible server that stands in for mongod where none can be installed:
 * mongo-java-server, in memory or file-backed (H2). It reports MongoDB 5.0 (wire version 13)
 * because current drivers refuse its default of wire version 8 (pymongo ≥ 4.18 needs ≥ 9).
 * It cannot store BSON binary subtype 6, has no sessions or transactions, closes the
 * connection on w:0 writes and scans whole collections for range queries.
 */
public final class EmbeddedBackend implements AutoCloseable {
    public static final MongoVersion REPORTED_VERSION = ReportedVersion.MONGO_5_0;
    public static final String DATA_FILE = "mongo-java-server.mv.db";

    private final MongoServer server;
    private final MongoBackend backend;
    private final Path dataFile;

    private EmbeddedBackend(MongoBackend backend, Path dataFile) {
        this.backend = backend.version(REPORTED_VERSION);
        this.server = new MongoServer(this.backend);
        this.dataFile = dataFile;
    }

    /** Starts an in-memory backend (dataDir null) or one that persists to dataDir. */
    public static EmbeddedBackend start(String host, int port, Path dataDir) {
        EmbeddedBackend b;
        if (dataDir == null) {
            b = new EmbeddedBackend(new IndexedMemoryBackend(), null);
        } else {
            try {
                Files.createDirectories(dataDir);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create data directory " + dataDir, e);
            }
            Path file = dataDir.resolve(DATA_FILE);
            b = new EmbeddedBackend(new H2Backend(file.toString()), file);
        }
        b.server.bind(host, port);
        return b;
    }

    public InetSocketAddress address() {
        return server.getLocalAddress();
    }

    /** Where the data lives, or null for the in-memory backend. */
    public Path dataFile() {
        return dataFile;
    }

    @Override
    public void close() {
        server.shutdownNow();
        backend.close();
    }
}
