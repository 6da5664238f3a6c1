package io.dumpstream.assemble;

import io.dumpstream.format.Dtype;
import io.dumpstream.format.L1Buffer;
import io.dumpstream.format.L1Layout;
import io.dumpstream.format.ReasonCode;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.schema.RecordPlan;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.zip.CRC32C;

/** The checks of CONTRACT section 4, each returning the first failure in contract order or null. */
public final class Checks {
    private Checks() {
    }

    public static long crc32c(ByteBuffer bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes.duplicate());
        return crc.getValue();
    }

    /** Transport check of one chunk: CRC-32C against the manifest, then its length against its range. */
    public static Failure chunk(DumpManifest m, int index, ByteBuffer bytes) {
        int expected = Manifests.chunkLength(m, index);
        long want = m.getChunkCrc32c().get(index);
        long got = crc32c(bytes);
        if (got != want) {
            return new Failure(ReasonCode.CHUNK_CRC_MISMATCH, "chunk " + index + ": CRC-32C " + got
                    + " differs from the manifest's chunk_crc32c[" + index + "] " + want);
        }
        if (bytes.remaining() != expected) {
            return new Failure(ReasonCode.BUFFER_SIZE_MISMATCH, "chunk " + index + ": " + bytes.remaining()
                    + " bytes, expected " + expected + " (buffer_bytes " + m.getBufferBytes() + ", chunk_bytes "
                    + m.getChunkBytes() + ")");
        }
        return null;
    }

    /** Dump-level checks of the header once bytes [0, 262208) are verified. */
    public static Failure header(DumpManifest m, L1Buffer h) {
        if (h.magic() != L1Layout.MAGIC) {
            return new Failure(ReasonCode.BAD_MAGIC, "header magic 0x" + Long.toHexString(h.magic())
                    + ", expected 0x" + Long.toHexString(L1Layout.MAGIC));
        }
        if (h.version() != L1Layout.VERSION) {
            return new Failure(ReasonCode.BAD_VERSION, "header version " + h.version() + ", expected " + L1Layout.VERSION);
        }
        List<RecordPlan> records = m.getRecords();
        long minPayload = Long.MAX_VALUE;
        for (RecordPlan r : records) {
            minPayload = Math.min(minPayload, r.getPayloadOffset());
        }
        Failure f = headerField("enabled", h.enabled(), L1Layout.ENABLED);
        if (f == null) {
            f = headerField("record_count", h.recordCount(), records.size());
        }
        if (f == null) {
            f = headerField("record_size", h.recordSize(), L1Layout.RECORD_SIZE);
        }
        if (f == null) {
            f = headerField("records_offset", h.recordsOffset(), L1Layout.RECORDS_OFFSET);
        }
        if (f == null) {
            f = headerField("payload_offset", h.payloadOffset(), minPayload);
        }
        if (f == null) {
            f = headerField("total_bytes", h.totalBytes(), m.getBufferBytes());
        }
        return f;
    }

    private static Failure headerField(String name, long got, long want) {
        return got == want ? null : new Failure(ReasonCode.HEADER_MISMATCH,
                "header " + name + " " + got + " disagrees with the manifest's " + want);
    }

    /**
     * Record-level checks of record {@code i}, from the manifest and the verified record table.
     *
     * @param prevEnd end of the furthest usable slot of the records before {@code i}
     */
    public static RecordVerdict record(DumpManifest m, int i, L1Buffer h, long prevEnd, long maxRecordBytes) {
        RecordPlan r = m.getRecords().get(i);
        String p = "records[" + i + "].";
        long off = r.getPayloadOffset();
        long len = r.getPayloadBytes();
        long end = off + len; // both are uint32: no overflow
        boolean inBounds = off >= L1Layout.PAYLOAD_BASE && off % L1Layout.ALIGNMENT == 0 && end <= m.getBufferBytes();
        boolean overlaps = inBounds && len > 0 && off < prevEnd;
        Failure f = dtypeAndSize(r, p, maxRecordBytes);
        if (f == null && !inBounds) {
            f = new Failure(ReasonCode.PAYLOAD_OUT_OF_BOUNDS, p + "payload_offset " + off + " with payload_bytes " + len
                    + ": the slot must start at or after " + L1Layout.PAYLOAD_BASE + ", be 64-aligned and end by "
                    + "total_bytes " + m.getBufferBytes());
        }
        if (f == null && overlaps) {
            f = new Failure(ReasonCode.PAYLOAD_OVERLAP, p + "payload_offset " + off + " starts before the end " + prevEnd
                    + " of an earlier record's slot");
        }
        if (f == null) {
            f = table(r, i, p, h);
        }
        boolean usable = inBounds && !overlaps;
        return new RecordVerdict(f, usable, usable ? Math.max(prevEnd, end) : prevEnd);
    }

    private static Failure dtypeAndSize(RecordPlan r, String p, long maxRecordBytes) {
        Dtype d = Dtype.fromName(r.getDtype());
        if (d == null) {
            return new Failure(ReasonCode.UNKNOWN_DTYPE, p + "dtype \"" + r.getDtype() + "\" is not a known dtype");
        }
        int es = d.elementSize();
        long full;
        try {
            full = es;
            for (long dim : r.getActualShape()) {
                full = Math.multiplyExact(full, dim);
            }
        } catch (ArithmeticException e) {
            return new Failure(ReasonCode.SIZE_MISMATCH, p + "actual_shape " + r.getActualShape() + " x " + es
                    + " bytes overflows a 64-bit size");
        }
        if (full != r.getFullBytes()) {
            return new Failure(ReasonCode.SIZE_MISMATCH, p + "full_bytes " + r.getFullBytes() + " differs from "
                    + "product(actual_shape " + r.getActualShape() + ") x " + es + " = " + full);
        }
        long pb = r.getPayloadBytes();
        if (pb > r.getFullBytes()) {
            return new Failure(ReasonCode.SIZE_MISMATCH, p + "payload_bytes " + pb + " exceeds full_bytes " + r.getFullBytes());
        }
        if (pb % es != 0) {
            return new Failure(ReasonCode.SIZE_MISMATCH, p + "payload_bytes " + pb + " is not a multiple of the "
                    + es + "-byte " + d.torchName() + " element");
        }
        if (r.getTruncated() != (pb < r.getFullBytes())) {
            return new Failure(ReasonCode.SIZE_MISMATCH, p + "truncated " + r.getTruncated() + " disagrees with payload_bytes "
                    + pb + " and full_bytes " + r.getFullBytes());
        }
        if (pb > maxRecordBytes) {
            return new Failure(ReasonCode.SIZE_MISMATCH, p + "payload_bytes " + pb + " exceeds the pipeline's "
                    + "max_record_bytes " + maxRecordBytes);
        }
        return null;
    }

    private static Failure table(RecordPlan r, int i, String p, L1Buffer h) {
        if (r.getRecordOffset() != L1Layout.recordOffset(i)) {
            return new Failure(ReasonCode.RECORD_MISMATCH, p + "record_offset " + r.getRecordOffset() + ", expected "
                    + L1Layout.recordOffset(i));
        }
        L1Buffer.Entry e = h.entry(i);
        long phase = "before".equals(r.getPhase()) ? L1Layout.PHASE_BEFORE : L1Layout.PHASE_AFTER;
        Failure f = tableField(p, "task_id", e.taskId(), r.getTaskId());
        if (f == null) {
            f = tableField(p, "phase", e.phase(), phase);
        }
        if (f == null) {
            f = tableField(p, "parameter_position", e.parameterPosition(), r.getParameterPosition());
        }
        if (f == null) {
            f = tableField(p, "source_offset_bytes", e.sourceOffset(), r.getSourceOffsetBytes());
        }
        if (f == null) {
            f = tableField(p, "payload_offset", e.payloadOffset(), r.getPayloadOffset());
        }
        if (f == null) {
            f = tableField(p, "payload_bytes", e.payloadBytes(), r.getPayloadBytes());
        }
        if (f == null) {
            f = tableField(p, "task_index", e.taskIndex(), r.getTaskIndex());
        }
        if (f == null) {
            f = tableField(p, "worker_id", e.workerId(), r.getWorkerId());
        }
        if (f == null && e.status() != L1Layout.STATUS_CAPTURED) {
            f = new Failure(ReasonCode.RECORD_NOT_CAPTURED, "record table entry " + i + ": status " + e.status()
                    + ", expected 1 (captured)");
        }
        return f;
    }

    private static Failure tableField(String p, String name, long table, long manifest) {
        return table == manifest ? null : new Failure(ReasonCode.RECORD_MISMATCH, "record table entry " + p.substring(8, p.length() - 2)
                + ": " + name + " " + table + " differs from the manifest's " + p + name + " " + manifest);
    }

    /** The outcome of the record-level checks, and whether the record's slot can be read. */
    public record RecordVerdict(Failure failure, boolean slotUsable, long nextPrevEnd) {
    }
}
