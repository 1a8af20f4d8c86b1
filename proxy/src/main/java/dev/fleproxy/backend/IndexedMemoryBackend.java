package dev.fleproxy.backend;

import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;

/** mongo-java-server's in-memory backend whose databases use their indexes as mongod's planner would ({@link IndexedMemoryDatabase}). */
final class IndexedMemoryBackend extends MemoryBackend {
    @Override
    public MemoryDatabase openOrCreateDatabase(String databaseName) {
        return new IndexedMemoryDatabase(databaseName, getCursorRegistry());
    }
}
