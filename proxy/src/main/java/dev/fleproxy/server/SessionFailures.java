package dev.fleproxy.server;

import dev.fleproxy.tls.TlsFailures;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpCompressed;
import dev.fleproxy.wire.WireProtocolException;
import io.netty.handler.codec.DecoderException;
import java.io.IOException;
import java.util.Locale;
import javax.net.ssl.SSLException;
import org.bson.BSONException;
import org.bson.BsonInvalidOperationException;

/**
 * What an exception on a session's connection means, in one place: a peer's bad input (one line
 * that says why, no stack trace; a client's is rate-limited, since a peer that proved nothing must
 * not be able to fill the disk), a broken connection (debug only), or what looks like our own bug
 * (the stack trace is kept).
 */
final class SessionFailures {
    private SessionFailures() {
    }

    enum Kind { BAD_INPUT, CONNECTION, UNEXPECTED }

    /** The verdict: its kind, the bad-input reason (BAD_INPUT only), and the line to log. */
    record Failure(Kind kind, BadInputLog.Reason reason, String text, Throwable root) {
    }

    static Failure classify(Throwable cause, SessionHandler.Side side) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        String from = side.name().toLowerCase(Locale.ROOT);
        if (root instanceof WireProtocolException) {
            return bad(BadInputLog.Reason.PROTOCOL_ERROR, "closed: protocol error from " + from + ": " + root.getMessage());
        } else if (root instanceof BSONException || root instanceof BsonInvalidOperationException) {
            return bad(BadInputLog.Reason.MALFORMED_BSON, "closed: malformed BSON from " + from + ": " + root.getMessage());
        } else if (root instanceof StackOverflowError) {
            // BSON decoding recurses per nesting level; a message nested deeply enough (a 48 MB
            // message holds millions of levels) overflows the stack: bad input, one line, not a trace.
            return bad(BadInputLog.Reason.MALFORMED_BSON,
                    "closed: malformed BSON from " + from + ": documents nested too deeply to decode");
        } else if (root instanceof SSLException) {
            // a peer that cannot complete the handshake (no or an untrusted client certificate, no
            // common protocol) or that breaks a record: bad input, one line, no trace
            return bad(BadInputLog.Reason.TLS, "closed: TLS with " + from + " failed: " + TlsFailures.describe(root));
        } else if (root instanceof IOException) {
            return new Failure(Kind.CONNECTION, null, from + " connection error: " + root, root);
        } else if (side == SessionHandler.Side.CLIENT && BadInputLog.isMalformedInputSymptom(root)) {
            // The driver's RawBsonDocument, ByteBuffer/ByteBuf bounds checks and our rewriters throw
            // these on lengths and types that lie (e.g. an IllegalArgumentException "newPosition >
            // limit" from RawBsonDocument.containsKey): the client's bad input. Where it was thrown
            // is kept in the line, so a bug of ours hiding here can still be found.
            return bad(BadInputLog.Reason.MALFORMED_BSON, "closed: malformed message from client ("
                    + root.getClass().getSimpleName() + BadInputLog.thrownAt(root) + ": " + root.getMessage() + ")");
        }
        // NullPointerException, IllegalReferenceCountException, UnsupportedOperationException, any
        // Error, anything from the upstream side: ours to fix, so the stack trace is kept.
        return new Failure(Kind.UNEXPECTED, BadInputLog.Reason.UNEXPECTED_ERROR,
                "closed after an unexpected error handling a message from " + from, root);
    }

    private static Failure bad(BadInputLog.Reason reason, String text) {
        return new Failure(Kind.BAD_INPUT, reason, text, null);
    }

    /** Compression is never negotiated, so a compressed message is a protocol error. */
    static WireProtocolException compressedNotNegotiated(Frame frame) {
        OpCompressed c = OpCompressed.parse(frame);
        return new WireProtocolException("received OP_COMPRESSED (" + c.compressorName() + ", wrapping "
                + OpCode.name(c.originalOpcode()) + ") but this proxy never negotiates compression");
    }
}
