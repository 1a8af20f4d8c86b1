package dev.fleproxy.rewrite.write;

import dev.fleproxy.protocol.Refusal;
import dev.fleproxy.rewrite.bson.CopyOnChange;
import dev.fleproxy.wire.DocumentSequence;
import dev.fleproxy.wire.OpMsg;
import java.util.ArrayList;
import java.util.List;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * The documents of a command that a driver may send either in a body array or in a kind-1
 * document sequence of the same name (insert's documents, update's and delete's statements,
 * bulkWrite's ops and nsInfo), read and rewritten the same way wherever they are.
 */
public final class MessageDocuments {
    interface Mapper {
        BsonDocument map(BsonDocument d);
    }

    private MessageDocuments() {
    }

    /** The documents of the body array and of the kind-1 sequence with this name. */
    public static List<BsonDocument> of(OpMsg msg, String field) {
        List<BsonDocument> out = new ArrayList<>();
        if (msg.body().isArray(field)) {
            for (BsonValue v : msg.body().getArray(field)) {
                if (v.isDocument()) {
                    out.add(v.asDocument());
                }
            }
        }
        for (DocumentSequence s : msg.sequences()) {
            if (s.identifier().equals(field)) {
                out.addAll(s.documents());
            }
        }
        return out;
    }

    /**
     * The message with the mapper applied to every document of the body array and of the kind-1
     * sequence named field; an element that is not a document is refused (naming ns), not passed
     * on unexamined. The message itself if no document changed.
     */
    static OpMsg map(OpMsg msg, String field, String ns, Mapper mapper) {
        BsonDocument body = msg.body();
        if (body.isArray(field)) {
            BsonArray in = body.getArray(field);
            BsonArray out = CopyOnChange.map(in, v -> {
                if (!v.isDocument()) {
                    throw Refusal.command(ns, "an entry of " + field + " that is not a document");
                }
                return mapper.map(v.asDocument());
            });
            body = CopyOnChange.with(body, field, out, in);
        }
        boolean changed = body != msg.body();
        List<DocumentSequence> sequences = new ArrayList<>(msg.sequences().size());
        for (DocumentSequence s : msg.sequences()) {
            if (!s.identifier().equals(field)) {
                sequences.add(s);
                continue;
            }
            List<BsonDocument> docs = new ArrayList<>(s.documents().size());
            for (BsonDocument d : s.documents()) {
                BsonDocument nd = mapper.map(d);
                changed |= nd != d;
                docs.add(nd);
            }
            sequences.add(new DocumentSequence(s.identifier(), docs));
        }
        return changed ? new OpMsg(msg.flagBits(), body, sequences) : msg;
    }
}
