package dev.fleproxy.fuzz;

import dev.fleproxy.crypto.CipherAlgorithm;
import dev.fleproxy.crypto.DataKey;
import dev.fleproxy.keys.KeyAccessException;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.keys.KeySource;
import dev.fleproxy.keys.KeyState;
import dev.fleproxy.keys.ResolvedKey;
import dev.fleproxy.policy.Policy;
import dev.fleproxy.policy.PolicyParser;
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
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.zip.CRC32C;
import org.bson.BSONException;

/**
 * What the fuzz targets share: which exceptions are the documented answers to bad input, the
 * policy and in-memory keys of {@code EncryptionFilterTest}, and raw frames.
 */
final class FuzzSupport {
    static final UUID AES_KEY = UUID.fromString("11111111-2222-3333-4444-555555555555");
    static final UUID ARIA_KEY = UUID.fromString("66666666-7777-8888-9999-aaaaaaaaaaaa");

    /**
     * hr.people: ssn deterministic, address.street and items.price randomized (AES-256-GCM);
     * hr.all: every field but _id (ARIA-256-GCM). hr.plain has no policy.
     */
    static final Policy POLICY = PolicyParser.parse(Map.of(
            "hr.people", Map.of("key", AES_KEY.toString(), "fields", Map.of(
                    "ssn", Map.of("deterministic", true),
                    "address.street", Map.of(),
                    "items.price", Map.of())),
            "hr.all", Map.of("key", ARIA_KEY.toString(), "fields", "*")), 6, "fuzz");

    /** The lowest and highest codes of the proxy's own error replies (ProxyError). */
    static final int PROXY_CODES_FROM = 9_720_000;
    static final int PROXY_CODES_TO = 9_720_999;

    private FuzzSupport() {
    }

    /**
     * A key resolver over two in-memory keys; the caller prefetches them (from @BeforeAll, never a
     * static initializer: prefetch waits on the resolver's threads, which would wait for the class).
     */
    static KeyResolver resolver() {
        return new KeyResolver(new KeySource() {
            @Override
            public ResolvedKey fetch(UUID id) {
                CipherAlgorithm alg = id.equals(AES_KEY) ? CipherAlgorithm.AES
                        : id.equals(ARIA_KEY) ? CipherAlgorithm.ARIA : null;
                if (alg == null) {
                    throw new KeyAccessException(id, KeyAccessException.Reason.UNKNOWN_KEY, "no such key");
                }
                byte[] material = new byte[32];
                Arrays.fill(material, (byte) (alg.ordinal() + 1));
                return new ResolvedKey(new DataKey(id, alg, material), KeyState.ACTIVE, "1", Instant.now());
            }

            @Override
            public String describe() {
                return "fuzz keys";
            }
        }, new KeyResolver.Settings(Duration.ofDays(1), Duration.ofDays(1), Duration.ofSeconds(10),
                Duration.ofSeconds(5), 1));
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
