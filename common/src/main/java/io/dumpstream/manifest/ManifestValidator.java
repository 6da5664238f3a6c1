package io.dumpstream.manifest;

import io.dumpstream.format.DumpFormatException;
import io.dumpstream.format.L1Layout;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.schema.RecordPlan;

import java.util.List;
import java.util.Set;

/**
 * Range checks of a parsed manifest: everything {@code MANIFEST_INVALID} covers that the types
 * alone do not. Record-level defects (an unknown dtype, inconsistent sizes, a slot out of bounds)
 * are left to the record checks, so they reject only their record.
 */
public final class ManifestValidator {
    private static final long UINT32_MAX = 0xFFFFFFFFL;
    private static final Set<String> CORE_TYPES = Set.of("AIC", "AIV", "MIX");
    private static final Set<String> IO = Set.of("input", "output");
    private static final Set<String> PHASES = Set.of("before", "after");
    /** Smallest chunk size accepted; it bounds the chunk list to {@link ManifestParser#MAX_CHUNKS}. */
    public static final int MIN_CHUNK_BYTES = 4096;
    /** Largest chunk size accepted. */
    public static final int MAX_CHUNK_BYTES = 64 * 1024 * 1024;

    private ManifestValidator() {
    }

    public static void validate(DumpManifest m) throws DumpFormatException {
        require(m.getManifestVersion() == 1, "manifest_version", m.getManifestVersion(), "must be 1");
        require(m.getRank() >= 0, "rank", m.getRank(), "must be >= 0");
        if (m.getWorldSize() != null) {
            require(m.getWorldSize() > 0 && m.getRank() < m.getWorldSize(), "world_size", m.getWorldSize(),
                    "must be > rank " + m.getRank());
        }
        require(m.getLaunchId() >= 0, "launch_id", m.getLaunchId(), "must be >= 0");
        require(m.getFormatVersion() == L1Layout.VERSION, "format_version", m.getFormatVersion(), "must be 2");
        long bufferBytes = m.getBufferBytes();
        require(bufferBytes >= L1Layout.PAYLOAD_BASE && bufferBytes <= L1Layout.MAX_TOTAL_BYTES, "buffer_bytes",
                bufferBytes, "must be in [" + L1Layout.PAYLOAD_BASE + ", " + L1Layout.MAX_TOTAL_BYTES + "]");
        int chunkBytes = m.getChunkBytes();
        require(chunkBytes >= MIN_CHUNK_BYTES && chunkBytes <= MAX_CHUNK_BYTES, "chunk_bytes", chunkBytes,
                "must be in [" + MIN_CHUNK_BYTES + ", " + MAX_CHUNK_BYTES + "]");
        long chunks = Manifests.chunkCount(bufferBytes, chunkBytes);
        List<Long> crcs = m.getChunkCrc32c();
        require(crcs.size() == chunks, "chunk_crc32c", crcs.size() + " entries",
                "must list one CRC per chunk: " + chunks + " for buffer_bytes " + bufferBytes + " and chunk_bytes "
                        + chunkBytes);
        for (int i = 0; i < crcs.size(); i++) {
            long c = crcs.get(i);
            require(c >= 0 && c <= UINT32_MAX, "chunk_crc32c[" + i + "]", c, "must be a uint32");
        }
        List<RecordPlan> records = m.getRecords();
        require(!records.isEmpty() && records.size() <= L1Layout.MAX_RECORDS, "records", records.size() + " entries",
                "must hold 1.." + L1Layout.MAX_RECORDS);
        for (int i = 0; i < records.size(); i++) {
            validateRecord(records.get(i), "records[" + i + "].");
        }
    }

    private static void validateRecord(RecordPlan r, String p) throws DumpFormatException {
        uint32(r.getTaskId(), p + "task_id");
        uint32(r.getTaskIndex(), p + "task_index");
        require(r.getCoreId() >= 0, p + "core_id", r.getCoreId(), "must be >= 0");
        require(r.getIndex() >= 0, p + "index", r.getIndex(), "must be >= 0");
        require(r.getParameterPosition() >= 0, p + "parameter_position", r.getParameterPosition(), "must be >= 0");
        require(CORE_TYPES.contains(r.getCoreType()), p + "core_type", quote(r.getCoreType()), "must be AIC, AIV or MIX");
        require(IO.contains(r.getIo()), p + "io", quote(r.getIo()), "must be input or output");
        require(PHASES.contains(r.getPhase()), p + "phase", quote(r.getPhase()), "must be before or after");
        require(r.getSourceOffsetBytes() >= 0, p + "source_offset_bytes", r.getSourceOffsetBytes(), "must be >= 0");
        uint32(r.getPayloadOffset(), p + "payload_offset");
        uint32(r.getPayloadBytes(), p + "payload_bytes");
        require(r.getFullBytes() >= 0, p + "full_bytes", r.getFullBytes(), "must be >= 0");
        uint32(r.getRecordOffset(), p + "record_offset");
        uint32(r.getWorkerId(), p + "worker_id");
        long product = 1;
        for (int d = 0; d < r.getActualShape().size(); d++) {
            long dim = r.getActualShape().get(d);
            require(dim >= 0, p + "actual_shape[" + d + "]", dim, "must be >= 0");
            try {
                product = Math.multiplyExact(product, dim);
            } catch (ArithmeticException e) {
                throw ManifestParser.invalid("manifest field " + p + "actual_shape: the product of "
                        + r.getActualShape() + " overflows a 64-bit integer");
            }
        }
    }

    private static void uint32(long v, String field) throws DumpFormatException {
        require(v >= 0 && v <= UINT32_MAX, field, v, "must be a uint32");
    }

    private static String quote(String s) {
        return "\"" + s + "\"";
    }

    private static void require(boolean ok, String field, Object value, String rule) throws DumpFormatException {
        if (!ok) {
            throw ManifestParser.invalid("manifest field " + field + ": " + value + " " + rule);
        }
    }
}
