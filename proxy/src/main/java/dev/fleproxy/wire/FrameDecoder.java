package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
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
        setCumulator(BY_SIZE);
    }

    /** Past this many bytes held, a message is assembled in pieces, not in one buffer. */
    static final int COMPOSITE_FROM = 1 << 20;

    /**
     * Netty's merge cumulator for the first {@link #COMPOSITE_FROM} bytes of a message; past them,
     * the reads are copied into pieces ({@link MessagePieces}) held together as a composite buffer, so that a
     * large message needs no buffer of its size (issue 30: past the sizes the allocator keeps,
     * such a buffer was fresh memory, faulted in by the kernel page by page, and Netty grows one
     * past 4 MiB by 4 MiB at a time, copying it each time). Holding the read buffers themselves
     * instead would copy nothing, but held the allocator's chunks under them: ten peers' 400 MB of
     * partial messages took the process to 1.4 GB, and 700 MB stayed after they left. A frame is
     * a slice of the composite, forwarded as it is (a gathering write) or read with getBytes.
     */
    static final Cumulator BY_SIZE = (alloc, cumulation, in) -> {
        if (!cumulation.isReadable() || cumulation.refCnt() > 1
                || !(cumulation instanceof CompositeByteBuf) && !large(cumulation)) {
            // a small message, nothing held, or what is held is shared with a frame still in
            // flight: Netty's rules (which copy what is held when it is shared, so that no
            // frame's bytes change under it)
            return MERGE_CUMULATOR.cumulate(alloc, cumulation, in);
        }
        CompositeByteBuf held = cumulation instanceof CompositeByteBuf c ? c
                : alloc.compositeBuffer(Integer.MAX_VALUE).addFlattenedComponents(true, cumulation);
        try {
            MessagePieces.room(alloc, held, in.readableBytes());
            held.writeBytes(in);
        } catch (Throwable t) {
            if (held != cumulation) {
                held.release();
            }
            throw t;
        } finally {
            in.release();
        }
        return held;
    };

    /**
     * True once more than {@link #COMPOSITE_FROM} bytes of the message being assembled are held
     * (what a cumulation holds is always the start of one message: decode takes whole ones).
     * Not on what the message declares: a peer that declares 48 MB and sends a byte would then
     * make the proxy set aside a whole piece for it, beyond what the buffered-bytes budget counts.
     */
    private static boolean large(ByteBuf cumulation) {
        return cumulation.readableBytes() > COMPOSITE_FROM;
    }

    /**
     * Bytes of the message being assembled that this decoder holds (0 between messages). Call on
     * the channel's event loop; after a read, that is exactly what the next read must add to.
     */
    public int partialBytes() {
        return internalBuffer().readableBytes();
    }

    /** The buffer a message is being assembled in (tests). */
    io.netty.buffer.ByteBuf internalBufferForTest() {
        return internalBuffer();
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
