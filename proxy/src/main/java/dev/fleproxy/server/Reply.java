package dev.fleproxy.server;

import dev.fleproxy.wire.Frame;
import dev.fleproxy.wire.OpCode;
import dev.fleproxy.wire.OpMsgView;
import io.netty.buffer.ByteBufAllocator;

/** A reply a filter asked to see, read once and shared by the filters that asked. */
public final class Reply extends InFlight {
    private OpMsgView msg;

    public Reply(Frame frame, ByteBufAllocator alloc) {
        super(frame, alloc);
    }

    /** The OP_MSG, read on first use (structure and checksum verified); null for other opcodes. */
    public OpMsgView msg() {
        if (msg == null && frame.opCode() == OpCode.OP_MSG) {
            msg = OpMsgView.of(frame);
        }
        return msg;
    }

    @Override
    void replaceFrame(Frame replacement) {
        super.replaceFrame(replacement);
        msg = null;
    }
}
