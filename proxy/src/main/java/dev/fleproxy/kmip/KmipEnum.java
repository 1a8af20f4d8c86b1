package dev.fleproxy.kmip;

import java.util.Map;

/** The KMIP enumeration values this client uses, with their names for messages. */
public final class KmipEnum {
    private KmipEnum() {
    }

    public static final int OP_LOCATE = 0x08;
    public static final int OP_GET = 0x0A;
    public static final int OP_GET_ATTRIBUTES = 0x0B;

    public static final int OBJECT_SYMMETRIC_KEY = 0x02;
    public static final int NAME_UNINTERPRETED_TEXT = 0x01;
    public static final int KEY_FORMAT_RAW = 0x01;

    /** Object states (KMIP 1.2 §9.1.3.2.18). */
    public static final int STATE_PRE_ACTIVE = 1;
    public static final int STATE_ACTIVE = 2;
    public static final int STATE_DEACTIVATED = 3;
    public static final int STATE_COMPROMISED = 4;
    public static final int STATE_DESTROYED = 5;
    public static final int STATE_DESTROYED_COMPROMISED = 6;

    public static final int RESULT_SUCCESS = 0;

    private static final Map<Integer, String> RESULT_STATUS = Map.of(
            0, "SUCCESS", 1, "OPERATION_FAILED", 2, "OPERATION_PENDING", 3, "OPERATION_UNDONE");

    private static final Map<Integer, String> RESULT_REASON = Map.ofEntries(
            Map.entry(0x01, "ITEM_NOT_FOUND"),
            Map.entry(0x02, "RESPONSE_TOO_LARGE"),
            Map.entry(0x03, "AUTHENTICATION_NOT_SUCCESSFUL"),
            Map.entry(0x04, "INVALID_MESSAGE"),
            Map.entry(0x05, "OPERATION_NOT_SUPPORTED"),
            Map.entry(0x06, "MISSING_DATA"),
            Map.entry(0x07, "INVALID_FIELD"),
            Map.entry(0x08, "FEATURE_NOT_SUPPORTED"),
            Map.entry(0x09, "OPERATION_CANCELED_BY_REQUESTER"),
            Map.entry(0x0A, "CRYPTOGRAPHIC_FAILURE"),
            Map.entry(0x0B, "ILLEGAL_OPERATION"),
            Map.entry(0x0C, "PERMISSION_DENIED"),
            Map.entry(0x0D, "OBJECT_ARCHIVED"),
            Map.entry(0x0E, "INDEX_OUT_OF_BOUNDS"),
            Map.entry(0x0F, "APPLICATION_NAMESPACE_NOT_SUPPORTED"),
            Map.entry(0x10, "KEY_FORMAT_TYPE_NOT_SUPPORTED"),
            Map.entry(0x11, "KEY_COMPRESSION_TYPE_NOT_SUPPORTED"),
            Map.entry(0x100, "GENERAL_FAILURE"));

    private static final Map<Integer, String> STATES = Map.of(
            STATE_PRE_ACTIVE, "Pre-Active", STATE_ACTIVE, "Active", STATE_DEACTIVATED, "Deactivated",
            STATE_COMPROMISED, "Compromised", STATE_DESTROYED, "Destroyed",
            STATE_DESTROYED_COMPROMISED, "Destroyed Compromised");

    public static String resultStatus(int v) {
        return RESULT_STATUS.getOrDefault(v, "status " + v);
    }

    public static String resultReason(int v) {
        return RESULT_REASON.getOrDefault(v, "reason 0x" + Integer.toHexString(v));
    }

    public static String state(int v) {
        return STATES.getOrDefault(v, "state " + v);
    }
}
