package io.dumpstream.format;

import java.util.Locale;

/** Tensor element types of CONTRACT section 2 with their element sizes. */
public enum Dtype {
    FLOAT64("float64", 8),
    FLOAT32("float32", 4),
    FLOAT16("float16", 2),
    BFLOAT16("bfloat16", 2),
    FLOAT8_E4M3FN("float8_e4m3fn", 1),
    FLOAT8_E5M2("float8_e5m2", 1),
    INT64("int64", 8),
    INT32("int32", 4),
    INT16("int16", 2),
    INT8("int8", 1),
    UINT8("uint8", 1),
    BOOL("bool", 1);

    private final String torchName;
    private final int elementSize;

    Dtype(String torchName, int elementSize) {
        this.torchName = torchName;
        this.elementSize = elementSize;
    }

    /** The torch name without the {@code torch.} prefix, as stored in the tables. */
    public String torchName() {
        return torchName;
    }

    public int elementSize() {
        return elementSize;
    }

    /** Resolves a torch dtype name, with or without a {@code torch.} prefix; null when unknown. */
    public static Dtype fromName(String name) {
        if (name == null) {
            return null;
        }
        String n = name.startsWith("torch.") ? name.substring("torch.".length()) : name;
        for (Dtype d : values()) {
            if (d.torchName.equals(n)) {
                return d;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return torchName.toLowerCase(Locale.ROOT);
    }
}
