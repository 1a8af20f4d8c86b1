package dev.fleproxy.wire;

/** Wire-protocol opcodes the proxy knows by name; any other value is passed through untouched. */
public final class OpCode {
    public static final int OP_REPLY = 1;
    public static final int OP_QUERY = 2004;
    public static final int OP_COMPRESSED = 2012;
    public static final int OP_MSG = 2013;

    private OpCode() {
    }

    public static String name(int opCode) {
        return switch (opCode) {
            case OP_REPLY -> "OP_REPLY";
            case 2001 -> "OP_UPDATE";
            case 2002 -> "OP_INSERT";
            case 2005 -> "OP_GET_MORE";
            case 2006 -> "OP_DELETE";
            case 2007 -> "OP_KILL_CURSORS";
            case OP_QUERY -> "OP_QUERY";
            case OP_COMPRESSED -> "OP_COMPRESSED";
            case OP_MSG -> "OP_MSG";
            default -> "opcode " + opCode;
        };
    }
}
