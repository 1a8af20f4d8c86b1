package dev.fleproxy.fuzz;

import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.testing.InMemoryKeys;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.WireProtocolException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.DecoderException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.zip.CRC32C;
import org.bson.BSONException;

/**
 * What the fuzz targets share: which exceptions are the documented answers to bad input, the
 * policy and in-memory keys of the filter's tests ({@link InMemoryKeys}), and raw frames.
 */
final class FuzzSupport {
    static final UUID AES_KEY = InMemoryKeys.AES_KEY;
    static final UUID ARIA_KEY = InMemoryKeys.ARIA_KEY;
    static final Policy POLICY = InMemoryKeys.policy("fuzz");

    /** The lowest and highest codes of the proxy's own error replies (ProxyError). */
    static final int PROXY_CODES_FROM = 9_720_000;
    static final int PROXY_CODES_TO = 9_720_999;

    private FuzzSupport() {
    }

    /** A key resolver over the two in-memory keys; the caller prefetches them (from @BeforeAll). */
    /** The admission gate, then the filter, as the session runs them on a request while encrypting. */
    static dev.fleproxy.server.RequestDecision gatedThenFiltered(dev.fleproxy.server.Request r,
                                                               dev.fleproxy.server.MessageFilter filter) {
        dev.fleproxy.server.RequestDecision d = new dev.fleproxy.admission.AdmissionGate(() -> POLICY).onRequest(r);
        return d instanceof dev.fleproxy.server.RequestDecision.Pass ? filter.onRequest(r) : d;
    }

    static KeyResolver resolver() {
        return InMemoryKeys.resolver(java.util.concurrent.ConcurrentHashMap.newKeySet(), new KeyResolver.Settings(
                Duration.ofDays(1), Duration.ofDays(1), Duration.ofSeconds(10), Duration.ofSeconds(5), 1));
    }

    /**
     * The exceptions the proxy documents as its answer to malformed input: the session closes the
     * connection with a one-line reason for exactly these (ProxySession.failed). Anything else
     * escaping is a finding.
     */
    static boolean isBadInput(Throwable t) {
        Throwable root = t instanceof DecoderException && t.getCause() != null ? t.getCause() : t;
        return root instanceof WireProtocolException || root instanceof BSONException
                || root instanceof StackOverflowError;
    }

    /** Rethrows t unless it is one of the documented bad-input exceptions. */
    static void expectOnlyBadInput(RuntimeException t) {
        if (!isBadInput(t)) {
            throw t;
        }
    }

    /** A frame of this opcode around these bytes (the header's length is right; the rest is as given). */
    static Frame frame(int opCode, int requestId, int responseTo, byte[] afterHeader) {
        ByteBuf buf = Unpooled.buffer(16 + afterHeader.length).order(ByteOrder.BIG_ENDIAN);
        buf.writeIntLE(16 + afterHeader.length).writeIntLE(requestId).writeIntLE(responseTo).writeIntLE(opCode)
                .writeBytes(afterHeader);
        return new Frame(buf);
    }

    /**
     * An OP_MSG frame around raw bytes (flagBits, sections, …). When the flags ask for a checksum
     * and there is room, the last four bytes are made the right CRC-32C, so the fuzzer gets past it.
     */
    static Frame opMsgFrame(int requestId, int responseTo, byte[] afterHeader) {
        byte[] b = afterHeader.clone();
        if (b.length >= 8 && (b[0] & 1) != 0) {
            byte[] whole = new byte[16 + b.length];
            ByteBuffer.wrap(whole).order(ByteOrder.LITTLE_ENDIAN).putInt(whole.length).putInt(requestId)
                    .putInt(responseTo).putInt(OpCode.OP_MSG);
            System.arraycopy(b, 0, whole, 16, b.length);
            CRC32C crc = new CRC32C();
            crc.update(whole, 0, whole.length - 4);
            ByteBuffer.wrap(b, b.length - 4, 4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) crc.getValue());
        }
        return frame(OpCode.OP_MSG, requestId, responseTo, b);
    }

    /** The frame's bytes, header included, as ISO-8859-1 text (for looking for a marker). */
    static String text(Frame frame) {
        ByteBuf c = frame.content();
        return c.toString(c.readerIndex(), frame.length(), StandardCharsets.ISO_8859_1);
    }

    /** How often needle occurs in haystack. */
    static int occurrences(String haystack, String needle) {
        int n = 0;
        for (int at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + 1)) {
            n++;
        }
        return n;
    }

    /** A short description of a list for assertion messages. */
    static String first(List<?> list, int n) {
        return list.size() <= n ? list.toString() : list.subList(0, n) + "…";
    }
}
