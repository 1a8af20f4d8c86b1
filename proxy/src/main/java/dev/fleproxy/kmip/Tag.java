package dev.fleproxy.kmip;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.Map;

/** The KMIP tags this client reads or writes (KMIP 1.2 §9.1.3.1 and 2.0). */
public final class Tag {
    public static final int APPLICATION_DATA = 0x420002;
    public static final int APPLICATION_NAMESPACE = 0x420003;
    public static final int APPLICATION_SPECIFIC_INFORMATION = 0x420004;
    public static final int ATTRIBUTE = 0x420008;
    public static final int ATTRIBUTE_INDEX = 0x420009;
    public static final int ATTRIBUTE_NAME = 0x42000A;
    public static final int ATTRIBUTE_VALUE = 0x42000B;
    public static final int BATCH_COUNT = 0x42000D;
    public static final int BATCH_ITEM = 0x42000F;
    public static final int CRYPTOGRAPHIC_ALGORITHM = 0x420028;
    public static final int CRYPTOGRAPHIC_LENGTH = 0x42002A;
    public static final int KEY_BLOCK = 0x420040;
    public static final int KEY_FORMAT_TYPE = 0x420042;
    public static final int KEY_MATERIAL = 0x420043;
    public static final int KEY_VALUE = 0x420045;
    public static final int NAME = 0x420053;
    public static final int NAME_TYPE = 0x420054;
    public static final int NAME_VALUE = 0x420055;
    public static final int OBJECT_TYPE = 0x420057;
    public static final int OPERATION = 0x42005C;
    public static final int PROTOCOL_VERSION = 0x420069;
    public static final int PROTOCOL_VERSION_MAJOR = 0x42006A;
    public static final int PROTOCOL_VERSION_MINOR = 0x42006B;
    public static final int REQUEST_HEADER = 0x420077;
    public static final int REQUEST_MESSAGE = 0x420078;
    public static final int REQUEST_PAYLOAD = 0x420079;
    public static final int RESPONSE_HEADER = 0x42007A;
    public static final int RESPONSE_MESSAGE = 0x42007B;
    public static final int RESPONSE_PAYLOAD = 0x42007C;
    public static final int RESULT_MESSAGE = 0x42007D;
    public static final int RESULT_REASON = 0x42007E;
    public static final int RESULT_STATUS = 0x42007F;
    public static final int STATE = 0x42008D;
    public static final int SYMMETRIC_KEY = 0x42008F;
    public static final int TIME_STAMP = 0x420092;
    public static final int UNIQUE_IDENTIFIER = 0x420094;
    /** KMIP 2.0: the Attributes structure that replaces Attribute lists. */
    public static final int ATTRIBUTES = 0x420125;

    private static final Map<Integer, String> NAMES = new HashMap<>();

    static {
        for (Field f : Tag.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getType() == int.class) {
                try {
                    NAMES.put(f.getInt(null), f.getName());
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    private Tag() {
    }

    /** "KEY_MATERIAL" for a known tag, "0x42xxxx" otherwise. */
    public static String name(int tag) {
        String n = NAMES.get(tag);
        return n != null ? n : String.format("0x%06X", tag);
    }
}
