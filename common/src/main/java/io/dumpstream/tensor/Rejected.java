package io.dumpstream.tensor;

/** A view left out of a tensor, with the reason code and a message naming the field and value. */
public record Rejected(long taskId, String reason, String message) {
    public static final String DTYPE_MISMATCH = "DTYPE_MISMATCH";
    public static final String UNKNOWN_DTYPE = "UNKNOWN_DTYPE";
    public static final String MISALIGNED = "MISALIGNED";
    public static final String BAD_EXTENT = "BAD_EXTENT";
    public static final String OUT_OF_ORDER = "OUT_OF_ORDER";
}
