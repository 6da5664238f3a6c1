package io.dumpstream.format;

import java.nio.ByteBuffer;

/**
 * Flyweight over the first {@link L1Layout#PAYLOAD_BASE} bytes of an L1 buffer (header and record
 * table): absolute little-endian reads, uint32 fields widened with {@link Integer#toUnsignedLong},
 * no copy. Every read is bounds-checked against the wrapped region.
 */
public final class L1Buffer {
    private final ByteBuffer bytes;

    private L1Buffer(ByteBuffer bytes) {
        this.bytes = bytes.duplicate().order(L1Layout.BYTE_ORDER);
    }

    /** Wraps a region that starts at buffer offset 0; it must hold at least the header. */
    public static L1Buffer wrap(ByteBuffer head) throws DumpFormatException {
        if (head.remaining() < L1Layout.HEADER_BYTES) {
            throw new DumpFormatException(ReasonCode.BUFFER_SIZE_MISMATCH,
                    "buffer: " + head.remaining() + " bytes cannot hold the " + L1Layout.HEADER_BYTES + "-byte header");
        }
        return new L1Buffer(head.slice());
    }

    public static L1Buffer wrap(byte[] head) throws DumpFormatException {
        return wrap(ByteBuffer.wrap(head));
    }

    private long u32(long offset) {
        if (offset < 0 || offset + L1Layout.FIELD_BYTES > bytes.capacity()) {
            throw new IndexOutOfBoundsException("uint32 at " + offset + " outside the " + bytes.capacity() + "-byte head");
        }
        return Integer.toUnsignedLong(bytes.getInt((int) offset));
    }

    public long magic() {
        return u32(L1Layout.HEADER_MAGIC_OFFSET);
    }

    public long version() {
        return u32(L1Layout.HEADER_VERSION_OFFSET);
    }

    public long enabled() {
        return u32(L1Layout.HEADER_ENABLED_OFFSET);
    }

    public long recordCount() {
        return u32(L1Layout.HEADER_RECORD_COUNT_OFFSET);
    }

    public long recordSize() {
        return u32(L1Layout.HEADER_RECORD_SIZE_OFFSET);
    }

    public long recordsOffset() {
        return u32(L1Layout.HEADER_RECORDS_OFFSET_OFFSET);
    }

    public long payloadOffset() {
        return u32(L1Layout.HEADER_PAYLOAD_OFFSET_OFFSET);
    }

    public long totalBytes() {
        return u32(L1Layout.HEADER_TOTAL_BYTES_OFFSET);
    }

    /** Whether the wrapped region holds the whole record table. */
    public boolean hasRecordTable() {
        return bytes.capacity() >= L1Layout.PAYLOAD_BASE;
    }

    /** A view of record table entry {@code index}, 0 <= index < 4096. */
    public Entry entry(int index) {
        if (index < 0 || index >= L1Layout.MAX_RECORDS) {
            throw new IndexOutOfBoundsException("record index " + index + " outside 0.." + (L1Layout.MAX_RECORDS - 1));
        }
        return new Entry(L1Layout.recordOffset(index));
    }

    /** Copies the 64 bytes of table entry {@code index}. */
    public byte[] entryBytes(int index) {
        long at = L1Layout.recordOffset(index);
        byte[] out = new byte[L1Layout.RECORD_SIZE];
        bytes.get((int) at, out);
        return out;
    }

    /** One 64-byte record-table entry. */
    public final class Entry {
        private final long base;

        private Entry(long base) {
            this.base = base;
        }

        public long taskId() {
            return u32(base + L1Layout.RECORD_TASK_ID_OFFSET);
        }

        public long phase() {
            return u32(base + L1Layout.RECORD_PHASE_OFFSET);
        }

        public long parameterPosition() {
            return u32(base + L1Layout.RECORD_PARAMETER_POSITION_OFFSET);
        }

        /** The 64-bit source offset from its low and high halves. */
        public long sourceOffset() {
            return u32(base + L1Layout.RECORD_SOURCE_HIGH_OFFSET) << 32 | u32(base + L1Layout.RECORD_SOURCE_LOW_OFFSET);
        }

        public long payloadOffset() {
            return u32(base + L1Layout.RECORD_PAYLOAD_OFFSET_OFFSET);
        }

        public long payloadBytes() {
            return u32(base + L1Layout.RECORD_PAYLOAD_BYTES_OFFSET);
        }

        public long status() {
            return u32(base + L1Layout.RECORD_STATUS_OFFSET);
        }

        public long taskIndex() {
            return u32(base + L1Layout.RECORD_TASK_INDEX_OFFSET);
        }

        public long workerId() {
            return u32(base + L1Layout.RECORD_WORKER_ID_OFFSET);
        }
    }
}
