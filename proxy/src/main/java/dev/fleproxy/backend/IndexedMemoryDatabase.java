package dev.fleproxy.backend;

import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import java.util.List;

/**
 * mongo-java-server's in-memory database with indexes the proxy's queries can use: unique ones
 * (the _id index among them) for a query that names more than their keys ({@link
 * ConjunctUniqueIndex}) or sorted by their key with a limit ({@link IndexedMemoryCollection}), and
 * secondary ones, which 1.47.0 ignores ({@link MemorySecondaryIndex}).
 * A system collection keeps 1.47.0's behaviour.
 */
final class IndexedMemoryDatabase extends MemoryDatabase {
    IndexedMemoryDatabase(String databaseName, CursorRegistry cursorRegistry) {
        super(databaseName, cursorRegistry);
    }

    @Override
    protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
        return new IndexedMemoryCollection(this, collectionName, options, cursorRegistry);
    }

    @Override
    protected Index<Integer> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys,
                                                     boolean sparse) {
        return new ConjunctUniqueIndex(indexName, keys, sparse);
    }

    @Override
    protected Index<Integer> openOrCreateSecondaryIndex(String collectionName, String indexName, List<IndexKey> keys,
                                                        boolean sparse) {
        if (collectionName.startsWith("system.")) {
            return super.openOrCreateSecondaryIndex(collectionName, indexName, keys, sparse);
        }
        return new MemorySecondaryIndex(indexName, keys, sparse);
    }
}
