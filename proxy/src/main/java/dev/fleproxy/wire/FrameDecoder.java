package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;

/**
 * Cuts the byte stream into {@link Frame}s: int32 little-endian length that counts itself.
 * A length below the header size or above 48,000,000 (or a lower maximum given) is a protocol
 * error raised as soon as the four length bytes are in (an over-size message is never
 * buffered), and so is a stream that ends in the middle of a message.
 */
public final class FrameDecoder extends ByteToMessageDecoder {
    private final int maxLength;
    private boolean failed;
    private long framesDecoded;

    public FrameDecoder() {
        this(MsgHeader.MAX_MESSAGE_SIZE);
    }

    /** A decoder for which a declared length above maxLength is the protocol error. */
    public FrameDecoder(int maxLength) {
        this.maxLength = maxLength;
    }

    /**
     * Bytes of the message being assembled that this decoder holds (0 between messages). Call on
     * the channel's event loop; after a read, that is exactly what the next read must add to.
     */
    public int partialBytes() {
        return internalBuffer().readableBytes();
    }

    /** The declared length of the message being assembled, or -1 while fewer than 4 of its bytes are in. */
    public int partialDeclaredLength() {
        ByteBuf in = internalBuffer();
        return in.readableBytes() >= 4 ? in.getIntLE(in.readerIndex()) : -1;
    }

    /** How many whole messages this decoder has emitted; a change between two reads means one completed. */
    public long framesDecoded() {
        return framesDecoded;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (failed) {
            in.skipBytes(in.readableBytes());
            return;
        }
        if (in.readableBytes() < 4) {
            return;
        }
        int declared = in.getIntLE(in.readerIndex());
        try {
            MsgHeader.checkLength(declared, maxLength);
        } catch (WireProtocolException e) {
            failed = true;
            in.skipBytes(in.readableBytes());
            throw e;
        }
        if (in.readableBytes() < declared) {
            return;
        }
        out.add(new Frame(in.readRetainedSlice(declared)));
        framesDecoded++;
    }

    @Override
    protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        decode(ctx, in, out);
        if (!failed && in.isReadable()) {
            int got = in.readableBytes();
            String expected = got >= 4 ? " of " + in.getIntLE(in.readerIndex()) : "";
            in.skipBytes(got);
            // Reported, not thrown: a throw here would reach the handlers only after channelInactive.
            ctx.fireExceptionCaught(new WireProtocolException("connection closed in the middle of a message (got "
                    + got + expected + " bytes)"));
        }
    }
}
