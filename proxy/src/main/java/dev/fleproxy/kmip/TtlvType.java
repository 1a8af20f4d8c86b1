package dev.fleproxy.kmip;

/** The item types of KMIP's Tag-Type-Length-Value encoding (KMIP 1.x §9.1.1.2). */
public enum TtlvType {
    STRUCTURE(0x01),
    INTEGER(0x02),
    LONG_INTEGER(0x03),
    BIG_INTEGER(0x04),
    ENUMERATION(0x05),
    BOOLEAN(0x06),
    TEXT_STRING(0x07),
    BYTE_STRING(0x08),
    DATE_TIME(0x09),
    INTERVAL(0x0A);

    private final int code;

    TtlvType(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    static TtlvType of(int code) {
        for (TtlvType t : values()) {
            if (t.code == code) {
                return t;
            }
        }
        throw new KmipException("unknown TTLV item type 0x" + Integer.toHexString(code));
    }
}
