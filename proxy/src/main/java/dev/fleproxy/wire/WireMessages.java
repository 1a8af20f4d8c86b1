package dev.fleproxy.wire;

/** Parses a frame into the message type its opcode names. */
public final class WireMessages {
    private WireMessages() {
    }

    public static WireMessage parse(Frame frame) {
        return switch (frame.opCode()) {
            case OpCode.OP_MSG -> OpMsg.parse(frame);
            case OpCode.OP_QUERY -> OpQuery.parse(frame);
            case OpCode.OP_REPLY -> OpReply.parse(frame);
            case OpCode.OP_COMPRESSED -> OpCompressed.parse(frame);
            default -> OpaqueMessage.parse(frame);
        };
    }
}
