package dev.fleproxy.wire;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * OP_COMPRESSED (opcode 2012): another message, compressed. The proxy never negotiates
 * compression (it strips {@code compression} from the client's hello), so it only needs to
 * recognise this wrapper and say what is inside; it does not decompress.
 */
public record OpCompressed(int originalOpcode, int uncompressedSize, int compressorId, byte[] compressedMessage)
        implements WireMessage {

    @Override
    public int opCode() {
        return OpCode.OP_COMPRESSED;
    }

    public String compressorName() {
        return switch (compressorId) {
            case 0 -> "noop";
            case 1 -> "snappy";
            case 2 -> "zlib";
            case 3 -> "zstd";
            default -> "compressor " + compressorId;
        };
    }

    public static OpCompressed parse(Frame frame) {
        WireReader r = WireReader.afterHeader(frame);
        int original = r.int32("OP_COMPRESSED originalOpcode");
        int size = r.int32("OP_COMPRESSED uncompressedSize");
        int compressor = r.uint8("OP_COMPRESSED compressorId");
        return new OpCompressed(original, size, compressor, r.bytes(r.remaining(), "OP_COMPRESSED payload"));
    }

    @Override
    public ByteBuf encode(ByteBufAllocator alloc, int requestId, int responseTo) {
        int size = MsgHeader.SIZE + 9 + compressedMessage.length;
        ByteBuf out = alloc.buffer(size);
        new MsgHeader(size, requestId, responseTo, OpCode.OP_COMPRESSED).writeTo(out);
        out.writeIntLE(originalOpcode).writeIntLE(uncompressedSize).writeByte(compressorId).writeBytes(compressedMessage);
        return out;
    }
}
