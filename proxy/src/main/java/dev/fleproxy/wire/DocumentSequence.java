package dev.fleproxy.wire;

import java.util.List;
import org.bson.BsonDocument;

/**
 * An OP_MSG kind-1 section: documents that belong to the body's field named {@code identifier}
 * (drivers send insert documents, update and delete statements this way).
 */
public record DocumentSequence(String identifier, List<BsonDocument> documents) {
    public DocumentSequence {
        documents = List.copyOf(documents);
    }
}
