package dev.fleproxy.rewrap;

import dev.fleproxy.crypto.Envelope;
import dev.fleproxy.policy.CollectionPolicy;
import dev.fleproxy.rewrite.bson.EnvelopeBinary;
import java.util.Set;
import org.bson.BsonBinary;
import org.bson.BsonValue;

/**
 * What becomes of a policy field's value that is not an envelope of this collection (issue 26):
 * sealing it would vouch for a value the proxy never wrote, and the proxy would then return it as
 * the application's. So a value is sealed (adopted) only where plaintext is expected — the
 * collection has {@code plaintextReads: allow}, or the run was given {@code --adopt-plaintext} —
 * and only if a client could have written it to that field through the proxy:
 * <ul>
 *   <li>a binary whose first byte is an envelope format byte (0x81, 0x82) is the remains of an
 *       envelope (cut, or in another subtype): {@link Category#UNREADABLE}, never sealed;</li>
 *   <li>a binary of subtype 0 or 6, the two subtypes envelopes are stored in (readers accept
 *       both, whatever envelopeSubtype says), stands where an envelope belongs: never sealed;</li>
 *   <li>a sub-document or an array is a value only in a field named as holding them
 *       ({@code --adopt-documents-in}); the policy does not say which fields the application
 *       writes as scalars, so elsewhere it is never sealed. Even there, one holding an
 *       envelope-like binary at any depth (subtype 6, or a first byte 0x81/0x82) is not;</li>
 *   <li>types current drivers do not write as data (undefined, DBPointer, symbol, code with
 *       scope, MinKey, MaxKey) are never sealed.</li>
 * </ul>
 * Everything else (strings, numbers, dates, booleans, null, ObjectIds, other binaries, …) is
 * plaintext a client could have written: adopted where plaintext is expected, else
 * {@link Category#PLAINTEXT_DENIED}.
 */
public final class Adoption {
    private final boolean adopting;
    private final Set<String> documentFields;

    /**
     * @param adoptPlaintext  --adopt-plaintext (under plaintextReads: allow, adopting is the default)
     * @param documentFields  policy fields whose values may be sub-documents or arrays
     * @throws IllegalArgumentException if one is not a field of the policy, or nothing would be adopted
     */
    public Adoption(CollectionPolicy policy, boolean adoptPlaintext, Set<String> documentFields) {
        this.adopting = policy.plaintextReads() || adoptPlaintext;
        this.documentFields = Set.copyOf(documentFields);
        for (String f : documentFields) {
            boolean field = policy.allFields() ? !f.contains(".") && !f.equals("_id") : policy.fields().containsKey(f);
            if (!field) {
                throw new IllegalArgumentException("--adopt-documents-in " + f + ": not a policy field of "
                        + policy.namespace() + " (" + (policy.allFields() ? "under fields: \"*\", a top-level name"
                        : policy.describeFields()) + ")");
            }
        }
        if (!documentFields.isEmpty() && !adopting) {
            throw new IllegalArgumentException("--adopt-documents-in adds to what is adopted, and " + policy.namespace()
                    + " has plaintextReads: deny: add --adopt-plaintext to adopt plaintext there");
        }
    }

    /** PLAINTEXT (seal it), PLAINTEXT_DENIED, NOT_ADOPTABLE or UNREADABLE, for a value that is not an envelope. */
    Category of(String path, BsonValue value) {
        if (value.isBinary() && envelopeFormat(value.asBinary())) {
            return Category.UNREADABLE;
        }
        if (!clientCouldHaveWritten(path, value)) {
            return Category.NOT_ADOPTABLE;
        }
        return adopting ? Category.PLAINTEXT : Category.PLAINTEXT_DENIED;
    }

    private boolean clientCouldHaveWritten(String path, BsonValue value) {
        switch (value.getBsonType()) {
            case BINARY:
                return !envelopeSubtype(value.asBinary());
            case DOCUMENT:
            case ARRAY:
                return documentFields.contains(path) && !holdsEnvelopeLike(value);
            case UNDEFINED:
            case DB_POINTER:
            case SYMBOL:
            case JAVASCRIPT_WITH_SCOPE:
            case MIN_KEY:
            case MAX_KEY:
                return false;
            default:
                return true;
        }
    }

    /** Inside a value, envelopes are never stored (the proxy seals a field whole): one there was put there. */
    private static boolean holdsEnvelopeLike(BsonValue value) {
        if (value.isBinary()) {
            return value.asBinary().getType() == EnvelopeBinary.ENCRYPTED || envelopeFormat(value.asBinary());
        }
        if (value.isDocument()) {
            return value.asDocument().values().stream().anyMatch(Adoption::holdsEnvelopeLike);
        }
        if (value.isArray()) {
            return value.asArray().stream().anyMatch(Adoption::holdsEnvelopeLike);
        }
        return false;
    }

    private static boolean envelopeFormat(BsonBinary b) {
        byte[] data = b.getData();
        return data.length > 0 && ((data[0] & 0xff) == Envelope.FORMAT_V1 || (data[0] & 0xff) == Envelope.FORMAT_V2);
    }

    private static boolean envelopeSubtype(BsonBinary b) {
        return b.getType() == EnvelopeBinary.ENCRYPTED || b.getType() == EnvelopeBinary.GENERIC;
    }
}
