package io.dumpstream.format;

/** Reason codes of CONTRACT section 4, in the order the checks run. */
public enum ReasonCode {
    // transport, per chunk
    CHUNK_CRC_MISMATCH(Level.TRANSPORT),
    BUFFER_SIZE_MISMATCH(Level.TRANSPORT),
    CHUNKS_MISSING(Level.TRANSPORT),
    // dump level
    MANIFEST_INVALID(Level.DUMP),
    BAD_MAGIC(Level.DUMP),
    BAD_VERSION(Level.DUMP),
    HEADER_MISMATCH(Level.DUMP),
    // record level
    UNKNOWN_DTYPE(Level.RECORD),
    SIZE_MISMATCH(Level.RECORD),
    PAYLOAD_OUT_OF_BOUNDS(Level.RECORD),
    PAYLOAD_OVERLAP(Level.RECORD),
    RECORD_MISMATCH(Level.RECORD),
    RECORD_NOT_CAPTURED(Level.RECORD);

    /** Where a reason applies. */
    public enum Level { TRANSPORT, DUMP, RECORD }

    private final Level level;

    ReasonCode(Level level) {
        this.level = level;
    }

    public Level level() {
        return level;
    }
}
