package io.dumpstream.format;

import java.nio.ByteOrder;

/**
 * Layout constants of the L1 dump buffer, format version 2 (CONTRACT section 1).
 *
 * <pre>
 *  offset 0        32        64                                262208
 *         +--------+---------+-------------------------------+-----------------------
 *         | header | padding | record table: 4096 x 64 bytes | payload slots, 64-aligned
 *         +--------+---------+-------------------------------+-----------------------
 *
 *  header (eight uint32):  magic | version | enabled | record_count | record_size
 *                          | records_offset | payload_offset | total_bytes
 *  record (ten uint32 + 24 zero bytes): task_id | phase | parameter_position | source_low
 *                          | source_high | payload_offset | payload_bytes | status
 *                          | task_index | worker_id
 * </pre>
 */
public final class L1Layout {
    private L1Layout() {
    }

    /** The one byte order of every field in the buffer. */
    public static final ByteOrder BYTE_ORDER = ByteOrder.LITTLE_ENDIAN;

    public static final long MAGIC = 0x4C314450L;
    public static final int VERSION = 2;
    public static final int ENABLED = 1;
    public static final int ALIGNMENT = 64;
    public static final int FIELD_BYTES = 4;

    public static final int HEADER_MAGIC_OFFSET = 0;
    public static final int HEADER_VERSION_OFFSET = HEADER_MAGIC_OFFSET + FIELD_BYTES;
    public static final int HEADER_ENABLED_OFFSET = HEADER_VERSION_OFFSET + FIELD_BYTES;
    public static final int HEADER_RECORD_COUNT_OFFSET = HEADER_ENABLED_OFFSET + FIELD_BYTES;
    public static final int HEADER_RECORD_SIZE_OFFSET = HEADER_RECORD_COUNT_OFFSET + FIELD_BYTES;
    public static final int HEADER_RECORDS_OFFSET_OFFSET = HEADER_RECORD_SIZE_OFFSET + FIELD_BYTES;
    public static final int HEADER_PAYLOAD_OFFSET_OFFSET = HEADER_RECORDS_OFFSET_OFFSET + FIELD_BYTES;
    public static final int HEADER_TOTAL_BYTES_OFFSET = HEADER_PAYLOAD_OFFSET_OFFSET + FIELD_BYTES;
    public static final int HEADER_BYTES = HEADER_TOTAL_BYTES_OFFSET + FIELD_BYTES;

    public static final int RECORDS_OFFSET = 64;
    public static final int RECORD_SIZE = 64;
    public static final int MAX_RECORDS = 4096;
    /** First byte after the record table: where payload slots may start (262208). */
    public static final int PAYLOAD_BASE = RECORDS_OFFSET + MAX_RECORDS * RECORD_SIZE;
    /** total_bytes is a uint32 and must be below 2^32. */
    public static final long MAX_TOTAL_BYTES = (1L << 32) - 64;

    public static final int RECORD_TASK_ID_OFFSET = 0;
    public static final int RECORD_PHASE_OFFSET = RECORD_TASK_ID_OFFSET + FIELD_BYTES;
    public static final int RECORD_PARAMETER_POSITION_OFFSET = RECORD_PHASE_OFFSET + FIELD_BYTES;
    public static final int RECORD_SOURCE_LOW_OFFSET = RECORD_PARAMETER_POSITION_OFFSET + FIELD_BYTES;
    public static final int RECORD_SOURCE_HIGH_OFFSET = RECORD_SOURCE_LOW_OFFSET + FIELD_BYTES;
    public static final int RECORD_PAYLOAD_OFFSET_OFFSET = RECORD_SOURCE_HIGH_OFFSET + FIELD_BYTES;
    public static final int RECORD_PAYLOAD_BYTES_OFFSET = RECORD_PAYLOAD_OFFSET_OFFSET + FIELD_BYTES;
    public static final int RECORD_STATUS_OFFSET = RECORD_PAYLOAD_BYTES_OFFSET + FIELD_BYTES;
    public static final int RECORD_TASK_INDEX_OFFSET = RECORD_STATUS_OFFSET + FIELD_BYTES;
    public static final int RECORD_WORKER_ID_OFFSET = RECORD_TASK_INDEX_OFFSET + FIELD_BYTES;

    public static final int PHASE_BEFORE = 1;
    public static final int PHASE_AFTER = 2;
    public static final int STATUS_PENDING = 0;
    public static final int STATUS_CAPTURED = 1;
    public static final long NO_WORKER = 0xFFFFFFFFL;

    /** Offset of record {@code index}'s table entry. */
    public static long recordOffset(int index) {
        return RECORDS_OFFSET + (long) RECORD_SIZE * index;
    }

    public static long alignUp(long value) {
        return (value + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    }
}
