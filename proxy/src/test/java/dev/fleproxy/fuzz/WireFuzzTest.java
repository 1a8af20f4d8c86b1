package dev.fleproxy.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.fleproxy.testing.WireIO;
import dev.fleproxy.wire.DocumentSequence;
import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.FrameDecoder;
import dev.fleproxy.wire.MsgHeader;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsg;
import dev.fleproxy.wire.OpMsgView;
import dev.fleproxy.wire.WireMessage;
import dev.fleproxy.wire.WireMessages;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.Map;
import org.bson.BsonArray;
import org.bson.BsonDocument;
import org.bson.BsonValue;

/**
 * Fuzz targets over the wire layer: bytes as a client or server sends them, cut into frames by
 * {@link FrameDecoder} and read as the proxy reads them ({@link OpMsgView}, {@link OpMsg#parse},
 * the legacy opcodes). Bad input may only end in the documented exceptions
 * (WireProtocolException, BSONException and its subclasses): anything else is a finding. A message
 * that reads cleanly must encode back to one that reads the same.
 *
 * <p>{@code mvn test} runs these on the committed inputs (src/test/resources/…/WireFuzzTestInputs);
 * {@code make fuzz} fuzzes each for a while.
 */
class WireFuzzTest {

    /** A byte stream in fuzzer-chosen chunks through the frame decoder, every frame read. */
    @FuzzTest(maxDuration = "60s")
    void frameDecoder(FuzzedDataProvider data) {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());
        try {
            while (data.remainingBytes() > 0) {
                byte[] chunk = data.consumeBytes(data.consumeInt(1, 512));
                ch.writeInbound(Unpooled.wrappedBuffer(chunk));
                readFrames(ch);
            }
            ch.finish();
            readFrames(ch);
        } catch (RuntimeException e) {
            FuzzSupport.expectOnlyBadInput(e);
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    /** Arbitrary bytes after a well-formed OP_MSG header (a checksum the flags ask for is made right). */
    @FuzzTest(maxDuration = "60s")
    void opMsg(byte[] afterHeader) {
        Frame frame = FuzzSupport.opMsgFrame(7, 0, afterHeader);
        try {
            read(frame);
        } catch (RuntimeException e) {
            FuzzSupport.expectOnlyBadInput(e);
        } finally {
            frame.release();
        }
    }

    private static void readFrames(EmbeddedChannel ch) {
        for (Object o; (o = ch.readInbound()) != null; ) {
            Frame f = (Frame) o;
            try {
                assertEquals(f.length(), f.content().readableBytes(), "a frame is exactly its declared length");
                assertTrue(f.length() >= MsgHeader.SIZE && f.length() <= MsgHeader.MAX_MESSAGE_SIZE);
                read(f);
            } catch (RuntimeException e) {
                FuzzSupport.expectOnlyBadInput(e);
            } finally {
                f.release();
            }
        }
    }

    /** Reads a frame every way the proxy does; a clean OP_MSG must survive a round trip. */
    private static void read(Frame frame) {
        WireMessage parsed = WireMessages.parse(frame);
        if (frame.opCode() != OpCode.OP_MSG) {
            return;
        }
        OpMsgView view = OpMsgView.of(frame);
        view.commandName();
        view.bodyString("$db");
        view.nameProblem();
        walk(view.body());
        for (DocumentSequence s : view.sequences()) {
            s.documents().forEach(WireFuzzTest::walk);
        }
        OpMsg shallow = view.toOpMsg();
        walk(shallow.body());
        shallow.sequences().forEach(s -> s.documents().forEach(WireFuzzTest::walk));

        OpMsg msg = (OpMsg) parsed;
        OpMsg again = OpMsg.parse(new Frame(Unpooled.wrappedBuffer(WireIO.encode(msg, 8, 9))));
        assertEquals(msg.body(), again.body(), "the body reads the same after a round trip");
        assertEquals(msg.sequences().size(), again.sequences().size());
        for (int i = 0; i < msg.sequences().size(); i++) {
            assertEquals(msg.sequences().get(i).identifier(), again.sequences().get(i).identifier());
            assertEquals(msg.sequences().get(i).documents(), again.sequences().get(i).documents());
        }
    }

    /** Decodes every value of a (lazily decoded) document. */
    private static void walk(BsonValue v) {
        if (v instanceof BsonDocument d) {
            for (Map.Entry<String, BsonValue> e : d.entrySet()) {
                walk(e.getValue());
            }
        } else if (v instanceof BsonArray a) {
            for (BsonValue x : a) {
                walk(x);
            }
        }
    }
}
