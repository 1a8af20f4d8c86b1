package dev.fleproxy.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.fleproxy.keys.KeyResolver;
import dev.fleproxy.rewrite.EncryptionFilter;
import dev.fleproxy.server.Request;
import dev.fleproxy.server.RequestDecision;
import dev.fleproxy.server.Requests;
import dev.fleproxy.testing.WireIO;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.bson.BSONException;
import org.bson.BsonDocument;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Fuzz targets over the real {@link EncryptionFilter} with a real policy (hr.people: ssn
 * deterministic, address.street, items.price; hr.all: every field) and in-memory keys.
 *
 * <p>{@link #commands}: structured commands from {@link CommandGenerator}, which puts a marker
 * string wherever a value belongs to a policy field. Invariant: a PASS or REPLACE decision never
 * forwards the marker (a policy field's value in plaintext), and a refusal never repeats it;
 * refusing is always allowed; the only exceptions allowed are the documented bad-input ones.
 *
 * <p>{@link #rawRequests}: arbitrary OP_MSG and OP_QUERY bytes through the same filter: only the
 * documented exceptions may escape.
 */
class RequestRewriteFuzzTest {
    private static final ByteBufAllocator ALLOC = UnpooledByteBufAllocator.DEFAULT;
    private static KeyResolver resolver;

    @BeforeAll
    static void keysInMemory() {
        resolver = FuzzSupport.resolver();
        resolver.prefetch(List.of(FuzzSupport.AES_KEY, FuzzSupport.ARIA_KEY));
    }

    @AfterAll
    static void close() {
        resolver.close();
    }

    private static EncryptionFilter filter() {
        return new EncryptionFilter(() -> FuzzSupport.POLICY, resolver, Duration.ofMillis(5000));
    }

    @FuzzTest(maxDuration = "60s")
    void commands(FuzzedDataProvider data) {
        CommandGenerator g = new CommandGenerator(data);
        OpMsg command = g.command();
        byte[] bytes;
        try {
            bytes = WireIO.encode(command, 7, 0);
        } catch (BSONException e) {
            return; // the generator made something BSON cannot hold: not the proxy's input
        }
        Frame frame = new Frame(Unpooled.wrappedBuffer(bytes));
        int present = FuzzSupport.occurrences(FuzzSupport.text(frame), CommandGenerator.MARKER);
        // every marker in the message was put at a policy field's value (unless fuzzer bytes made more)
        boolean markersAreSecrets = present <= g.placed;
        EncryptionFilter filter = filter();
        Request request = Requests.of(frame, ALLOC, filter);
        RequestDecision decision;
        try {
            decision = FuzzSupport.gatedThenFiltered(request, filter);
        } catch (RuntimeException e) {
            FuzzSupport.expectOnlyBadInput(e);
            return;
        }
        String what = command.body().getFirstKey() + " on " + command.body().get(command.body().getFirstKey());
        if (decision instanceof RequestDecision.Pass) {
            if (markersAreSecrets && present > 0) {
                fail("PASS forwards a policy field's value in plaintext (" + what + "): " + json(command));
            }
        } else if (decision instanceof RequestDecision.Replace replace) {
            Frame out = replace.frame();
            try {
                assertEquals(frame.requestId(), out.requestId(), "a replacement keeps the request's id");
                assertEquals(OpCode.OP_MSG, out.opCode());
                OpMsg.parse(out); // well-formed
                if (markersAreSecrets) {
                    assertEquals(0, FuzzSupport.occurrences(FuzzSupport.text(out), CommandGenerator.MARKER),
                            "REPLACE forwards a policy field's value in plaintext (" + what + "): " + json(command));
                }
            } finally {
                out.release();
            }
        } else if (decision instanceof RequestDecision.Refuse refuse) {
            byte[] reply = WireIO.encode(refuse.reply(), 1, frame.requestId());
            BsonDocument body = OpMsg.parse(new Frame(Unpooled.wrappedBuffer(reply))).body();
            int code = body.getInt32("code").getValue();
            assertTrue(code >= FuzzSupport.PROXY_CODES_FROM && code <= FuzzSupport.PROXY_CODES_TO, body.toJson());
            assertEquals(0.0, body.getNumber("ok").doubleValue(), body.toJson());
            assertFalse(new String(reply, StandardCharsets.ISO_8859_1).contains(CommandGenerator.MARKER),
                    "a refusal repeats a policy field's value (" + what + "): " + body.toJson());
        } else if (decision instanceof RequestDecision.Await) {
            fail("the keys are in memory, yet the filter waits for keys (" + what + ")");
        } else if (decision instanceof RequestDecision.AwaitUpstream) {
            // a write the proxy carries out in steps: its first read (the server's part of the filter,
            // rewritten as any filter is) is on its way; test_evaluated_writes.py follows the steps
        }
        // Close: allowed (legacy opcodes only)
    }

    /** Arbitrary bytes after an OP_MSG header (mostly) or an OP_QUERY header. */
    @FuzzTest(maxDuration = "60s")
    void rawRequests(FuzzedDataProvider data) {
        int opCode = data.consumeInt(0, 7) == 0 ? OpCode.OP_QUERY : OpCode.OP_MSG;
        byte[] rest = data.consumeRemainingAsBytes();
        Frame frame = opCode == OpCode.OP_MSG ? FuzzSupport.opMsgFrame(7, 0, rest) : FuzzSupport.frame(opCode, 7, 0, rest);
        EncryptionFilter filter = filter();
        Request request;
        try {
            request = Requests.of(frame, ALLOC, filter); // reads the message, as the session does
        } catch (RuntimeException e) {
            FuzzSupport.expectOnlyBadInput(e);
            return;
        }
        try {
            RequestDecision decision = FuzzSupport.gatedThenFiltered(request, filter);
            if (decision instanceof RequestDecision.Replace replace) {
                OpMsg.parse(replace.frame());
                replace.frame().release();
            } else if (decision instanceof RequestDecision.Await) {
                fail("the keys are in memory, yet the filter waits for keys");
            }
        } catch (RuntimeException e) {
            FuzzSupport.expectOnlyBadInput(e);
        }
    }

    private static String json(OpMsg m) {
        StringBuilder b = new StringBuilder(m.body().toJson());
        m.sequences().forEach(s -> b.append(" + ").append(s.identifier()).append(": ")
                .append(FuzzSupport.first(s.documents().stream().map(BsonDocument::toJson).toList(), 3)));
        return b.toString();
    }
}
