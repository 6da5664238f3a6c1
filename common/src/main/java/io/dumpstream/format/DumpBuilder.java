package io.dumpstream.format;

import io.dumpstream.schema.DumpManifest;
import io.dumpstream.schema.RecordPlan;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.WritableByteChannel;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.zip.CRC32C;

/**
 * Builds a valid L1 v2 dump buffer (CONTRACT section 1) and its plan manifest (section 2) the way
 * the seed module does: {@link #add} allocates slots like {@code _L1PlanBuilder.add} (first slot at
 * {@link L1Layout#PAYLOAD_BASE}, next slot {@code alignUp(prev + payload_bytes)}, truncation to
 * {@code max // element_size * element_size}), the buffer is packed like {@code _pack_l1_buffer}
 * and then a simulated Device worker copies each payload and sets its status to captured.
 *
 * <p>The buffer is produced in one sequential pass (header and record table, then each slot in
 * order), so {@link #writeTo(WritableByteChannel)} streams a dump of any size without holding it
 * whole and computes the chunk CRC-32Cs on the way. Payloads are pulled from their
 * {@link Payload} during that pass.
 */
public final class DumpBuilder {
    public static final int DEFAULT_CHUNK_BYTES = 1 << 20;
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(64 * 1024).asReadOnlyBuffer();

    /** The element bytes of one tensor view; {@link #copy} writes its first {@code bytes} bytes. */
    @FunctionalInterface
    public interface Payload {
        /** Writes exactly {@code bytes} bytes, the start of the view, through {@code out}. */
        void copy(long bytes, Sink out) throws IOException;

        /** The view's bytes are {@code data} (its full bytes, or at least the copied prefix). */
        static Payload of(byte[] data) {
            Objects.requireNonNull(data, "data");
            return of(ByteBuffer.wrap(data));
        }

        /** The view's bytes are {@code data}'s remaining bytes; {@code data} itself is not moved. */
        static Payload of(ByteBuffer data) {
            Objects.requireNonNull(data, "data");
            ByteBuffer view = data.duplicate();
            return (bytes, out) -> {
                if (bytes > view.remaining()) {
                    throw new IllegalStateException("payload has " + view.remaining() + " bytes, " + bytes + " needed");
                }
                ByteBuffer b = view.duplicate();
                b.limit(b.position() + (int) bytes);
                out.put(b);
            };
        }

        /** No bytes (for empty tensors). */
        static Payload empty() {
            return of(new byte[0]);
        }
    }

    /** Where payload bytes go during the sequential pass. */
    public interface Sink {
        void put(ByteBuffer src) throws IOException;

        default void put(byte[] src, int off, int len) throws IOException {
            put(ByteBuffer.wrap(src, off, len));
        }
    }

    /** One operand to capture: the seed's {@code _L1RecordPlan} inputs before slot allocation. */
    public static final class RecordSpec {
        private long taskId;
        private long taskIndex;
        private String stage = "";
        private Long ownerId;
        private String ownerLabel = "";
        private String coreType = "AIV";
        private int coreId;
        private String io = "input";
        private int index;
        private int parameterPosition;
        private String tensorName = "";
        private String dtype = "float32";
        private long sourceOffsetBytes;
        private long[] actualShape = new long[0];
        private String note = "";
        private long workerId = L1Layout.NO_WORKER;
        private Long maxPayloadBytes;
        private boolean captured = true;
        private Payload payload = Payload.empty();

        public RecordSpec taskId(long v) { taskId = v; return this; }
        public RecordSpec taskIndex(long v) { taskIndex = v; return this; }
        public RecordSpec stage(String v) { stage = Objects.requireNonNull(v, "stage"); return this; }
        public RecordSpec ownerId(Long v) { ownerId = v; return this; }
        public RecordSpec ownerLabel(String v) { ownerLabel = Objects.requireNonNull(v, "owner_label"); return this; }
        public RecordSpec coreType(String v) { coreType = Objects.requireNonNull(v, "core_type"); return this; }
        public RecordSpec coreId(int v) { coreId = v; return this; }
        /** {@code input} (phase before) or {@code output} (phase after). */
        public RecordSpec io(String v) { io = Objects.requireNonNull(v, "io"); return this; }
        public RecordSpec index(int v) { index = v; return this; }
        public RecordSpec parameterPosition(int v) { parameterPosition = v; return this; }
        public RecordSpec tensorName(String v) { tensorName = Objects.requireNonNull(v, "tensor_name"); return this; }
        /** Torch dtype name, with or without {@code torch.}; stored as given. */
        public RecordSpec dtype(String v) { dtype = Objects.requireNonNull(v, "dtype"); return this; }
        public RecordSpec sourceOffsetBytes(long v) { sourceOffsetBytes = v; return this; }
        public RecordSpec actualShape(long... v) { actualShape = v.clone(); return this; }
        public RecordSpec note(String v) { note = Objects.requireNonNull(v, "note"); return this; }
        /** Broadcast worker id; {@link L1Layout#NO_WORKER} (the default) for none. */
        public RecordSpec workerId(long v) { workerId = v; return this; }
        /** The config's max_bytes_per_tensor; null (the default) for no truncation. */
        public RecordSpec maxPayloadBytes(Long v) { maxPayloadBytes = v; return this; }
        /** Whether the simulated Device worker captures this record (status 1); default true. */
        public RecordSpec captured(boolean v) { captured = v; return this; }
        public RecordSpec payload(Payload v) { payload = Objects.requireNonNull(v, "payload"); return this; }
        public RecordSpec payload(byte[] v) { return payload(Payload.of(v)); }
    }

    /** A dump built in memory. */
    public record Dump(DumpManifest manifest, byte[] buffer) {
    }

    private final String runId;
    private final int rank;
    private final long launchId;
    private Integer worldSize;
    private Long step;
    private String device;
    private int chunkBytes = DEFAULT_CHUNK_BYTES;
    private final List<RecordPlan> plans = new ArrayList<>();
    private final List<Payload> payloads = new ArrayList<>();
    private final List<Boolean> captured = new ArrayList<>();
    private long nextPayloadOffset = L1Layout.PAYLOAD_BASE;

    public DumpBuilder(String runId, int rank, long launchId) {
        this.runId = Objects.requireNonNull(runId, "run_id");
        if (rank < 0) {
            throw new IllegalArgumentException("rank must be >= 0, got " + rank);
        }
        this.rank = rank;
        this.launchId = launchId;
    }

    public DumpBuilder worldSize(Integer v) { worldSize = v; return this; }
    public DumpBuilder step(Long v) { step = v; return this; }
    public DumpBuilder device(String v) { device = v; return this; }

    /** Chunk size of the manifest's chunk_crc32c list; default 1 MiB. */
    public DumpBuilder chunkBytes(int v) {
        if (v <= 0) {
            throw new IllegalArgumentException("chunk_bytes must be > 0, got " + v);
        }
        chunkBytes = v;
        return this;
    }

    /** Validates {@code spec}, allocates its slot and returns its plan entry. */
    public RecordPlan add(RecordSpec spec) {
        if (plans.size() >= L1Layout.MAX_RECORDS) {
            throw new IllegalArgumentException("L1 dump record count exceeds " + L1Layout.MAX_RECORDS);
        }
        Dtype dt = Dtype.fromName(spec.dtype);
        if (dt == null) {
            throw new IllegalArgumentException("unknown dtype '" + spec.dtype + "'");
        }
        String phase;
        if (spec.io.equals("input")) {
            phase = "before";
        } else if (spec.io.equals("output")) {
            phase = "after";
        } else {
            throw new IllegalArgumentException("io must be input or output, got '" + spec.io + "'");
        }
        checkU32("task_id", spec.taskId);
        checkU32("task_index", spec.taskIndex);
        checkU32("parameter_position", spec.parameterPosition);
        checkU32("worker_id", spec.workerId);
        if (spec.sourceOffsetBytes < 0) {
            throw new IllegalArgumentException("source_offset_bytes must be >= 0, got " + spec.sourceOffsetBytes);
        }
        long numel = 1;
        List<Long> shape = new ArrayList<>(spec.actualShape.length);
        for (long d : spec.actualShape) {
            if (d < 0) {
                throw new IllegalArgumentException("negative dimension " + d + " in actual_shape");
            }
            numel = Math.multiplyExact(numel, d);
            shape.add(d);
        }
        long fullBytes = Math.multiplyExact(numel, dt.elementSize());
        long payloadBytes = fullBytes;
        if (spec.maxPayloadBytes != null && payloadBytes > spec.maxPayloadBytes) {
            payloadBytes = spec.maxPayloadBytes / dt.elementSize() * dt.elementSize();
            if (payloadBytes <= 0) {
                throw new IllegalArgumentException("max_bytes_per_tensor=" + spec.maxPayloadBytes + " cannot store one element");
            }
        }
        long offset = nextPayloadOffset;
        if (L1Layout.alignUp(offset + payloadBytes) > L1Layout.MAX_TOTAL_BYTES) {
            throw new IllegalArgumentException("L1 dump buffer exceeds the 32-bit payload-offset ABI");
        }
        RecordPlan plan = RecordPlan.newBuilder()
                .setTaskId(spec.taskId)
                .setTaskIndex(spec.taskIndex)
                .setStage(spec.stage)
                .setOwnerId(spec.ownerId)
                .setOwnerLabel(spec.ownerLabel)
                .setCoreType(spec.coreType)
                .setCoreId(spec.coreId)
                .setIo(spec.io)
                .setIndex(spec.index)
                .setPhase(phase)
                .setParameterPosition(spec.parameterPosition)
                .setTensorName(spec.tensorName)
                .setDtype(spec.dtype)
                .setSourceOffsetBytes(spec.sourceOffsetBytes)
                .setActualShape(shape)
                .setPayloadOffset(offset)
                .setPayloadBytes(payloadBytes)
                .setFullBytes(fullBytes)
                .setTruncated(payloadBytes < fullBytes)
                .setNote(spec.note)
                .setRecordOffset(L1Layout.recordOffset(plans.size()))
                .setWorkerId(spec.workerId)
                .build();
        plans.add(plan);
        payloads.add(spec.payload);
        captured.add(spec.captured);
        nextPayloadOffset = L1Layout.alignUp(offset + payloadBytes);
        return plan;
    }

    public List<RecordPlan> plans() {
        return Collections.unmodifiableList(plans);
    }

    /** total_bytes of the buffer: alignUp(max(payload_offset + payload_bytes)), as in the seed. */
    public long totalBytes() {
        long max = 0;
        for (RecordPlan p : plans) {
            max = Math.max(max, p.getPayloadOffset() + p.getPayloadBytes());
        }
        return L1Layout.alignUp(max);
    }

    /** Builds the dump in memory; for buffers below 2 GiB. */
    public Dump build() throws IOException {
        long total = totalBytes();
        if (total > Integer.MAX_VALUE - 64) {
            throw new IllegalStateException("buffer of " + total + " bytes is too large for an array; use writeTo");
        }
        byte[] buffer = new byte[(int) total];
        ByteBuffer target = ByteBuffer.wrap(buffer);
        DumpManifest m = writeTo(new WritableByteChannel() {
            @Override
            public int write(ByteBuffer src) {
                int n = src.remaining();
                target.put(src);
                return n;
            }

            @Override
            public boolean isOpen() {
                return true;
            }

            @Override
            public void close() {
            }
        });
        return new Dump(m, buffer);
    }

    /**
     * Writes the whole buffer to {@code out} in one sequential pass, pulling each payload once,
     * and returns the manifest with buffer_bytes and the chunk CRC-32Cs of what was written.
     */
    public DumpManifest writeTo(WritableByteChannel out) throws IOException {
        if (plans.isEmpty()) {
            throw new IllegalStateException("an L1 dump needs at least one record");
        }
        long total = totalBytes();
        CrcSink sink = new CrcSink(out, chunkBytes);

        ByteBuffer head = ByteBuffer.allocate(L1Layout.PAYLOAD_BASE).order(L1Layout.BYTE_ORDER);
        head.putInt(L1Layout.HEADER_MAGIC_OFFSET, (int) L1Layout.MAGIC);
        head.putInt(L1Layout.HEADER_VERSION_OFFSET, L1Layout.VERSION);
        head.putInt(L1Layout.HEADER_ENABLED_OFFSET, L1Layout.ENABLED);
        head.putInt(L1Layout.HEADER_RECORD_COUNT_OFFSET, plans.size());
        head.putInt(L1Layout.HEADER_RECORD_SIZE_OFFSET, L1Layout.RECORD_SIZE);
        head.putInt(L1Layout.HEADER_RECORDS_OFFSET_OFFSET, L1Layout.RECORDS_OFFSET);
        head.putInt(L1Layout.HEADER_PAYLOAD_OFFSET_OFFSET, (int) plans.get(0).getPayloadOffset());
        head.putInt(L1Layout.HEADER_TOTAL_BYTES_OFFSET, (int) total);
        for (int i = 0; i < plans.size(); i++) {
            RecordPlan p = plans.get(i);
            int at = (int) p.getRecordOffset();
            head.putInt(at + L1Layout.RECORD_TASK_ID_OFFSET, (int) p.getTaskId());
            head.putInt(at + L1Layout.RECORD_PHASE_OFFSET,
                    p.getPhase().equals("before") ? L1Layout.PHASE_BEFORE : L1Layout.PHASE_AFTER);
            head.putInt(at + L1Layout.RECORD_PARAMETER_POSITION_OFFSET, p.getParameterPosition());
            head.putInt(at + L1Layout.RECORD_SOURCE_LOW_OFFSET, (int) p.getSourceOffsetBytes());
            head.putInt(at + L1Layout.RECORD_SOURCE_HIGH_OFFSET, (int) (p.getSourceOffsetBytes() >>> 32));
            head.putInt(at + L1Layout.RECORD_PAYLOAD_OFFSET_OFFSET, (int) p.getPayloadOffset());
            head.putInt(at + L1Layout.RECORD_PAYLOAD_BYTES_OFFSET, (int) p.getPayloadBytes());
            // The simulated Device worker copies the payload, then marks the record captured.
            head.putInt(at + L1Layout.RECORD_STATUS_OFFSET,
                    captured.get(i) ? L1Layout.STATUS_CAPTURED : L1Layout.STATUS_PENDING);
            head.putInt(at + L1Layout.RECORD_TASK_INDEX_OFFSET, (int) p.getTaskIndex());
            head.putInt(at + L1Layout.RECORD_WORKER_ID_OFFSET, (int) p.getWorkerId());
        }
        head.clear();
        sink.put(head);

        for (int i = 0; i < plans.size(); i++) {
            RecordPlan p = plans.get(i);
            sink.zeros(p.getPayloadOffset() - sink.position());
            long before = sink.position();
            if (captured.get(i)) {
                payloads.get(i).copy(p.getPayloadBytes(), sink);
            } else {
                sink.zeros(p.getPayloadBytes());
            }
            long written = sink.position() - before;
            if (written != p.getPayloadBytes()) {
                throw new IllegalStateException("record " + i + " (" + p.getTensorName() + "): payload wrote "
                        + written + " bytes, payload_bytes is " + p.getPayloadBytes());
            }
        }
        sink.zeros(total - sink.position());

        return DumpManifest.newBuilder()
                .setManifestVersion(1)
                .setRunId(runId)
                .setRank(rank)
                .setWorldSize(worldSize)
                .setLaunchId(launchId)
                .setStep(step)
                .setDevice(device)
                .setFormatVersion(L1Layout.VERSION)
                .setBufferBytes(total)
                .setChunkBytes(chunkBytes)
                .setChunkCrc32c(sink.finish())
                .setRecords(new ArrayList<>(plans))
                .build();
    }

    /** CRC-32C of each {@code chunkBytes} chunk of {@code buffer}'s remaining bytes. */
    public static List<Long> chunkCrc32c(ByteBuffer buffer, int chunkBytes) {
        ByteBuffer b = buffer.duplicate();
        List<Long> out = new ArrayList<>();
        while (b.hasRemaining()) {
            ByteBuffer chunk = b.duplicate();
            chunk.limit(chunk.position() + Math.min(chunkBytes, chunk.remaining()));
            CRC32C crc = new CRC32C();
            crc.update(chunk);
            out.add(crc.getValue());
            b.position(chunk.limit());
        }
        return out;
    }

    private static void checkU32(String name, long v) {
        if (v < 0 || v > 0xFFFFFFFFL) {
            throw new IllegalArgumentException(name + " must fit a uint32, got " + v);
        }
    }

    /** Forwards bytes to a channel, tracking the position and the CRC-32C of each chunk. */
    private static final class CrcSink implements Sink {
        private final WritableByteChannel out;
        private final int chunkBytes;
        private final List<Long> crcs = new ArrayList<>();
        private CRC32C crc = new CRC32C();
        private long position;
        private long inChunk;

        CrcSink(WritableByteChannel out, int chunkBytes) {
            this.out = out;
            this.chunkBytes = chunkBytes;
        }

        long position() {
            return position;
        }

        @Override
        public void put(ByteBuffer src) throws IOException {
            while (src.hasRemaining()) {
                int n = (int) Math.min(src.remaining(), chunkBytes - inChunk);
                ByteBuffer part = src.duplicate();
                part.limit(part.position() + n);
                crc.update(part.duplicate());
                while (part.hasRemaining()) {
                    out.write(part);
                }
                src.position(src.position() + n);
                position += n;
                inChunk += n;
                if (inChunk == chunkBytes) {
                    crcs.add(crc.getValue());
                    crc = new CRC32C();
                    inChunk = 0;
                }
            }
        }

        void zeros(long n) throws IOException {
            if (n < 0) {
                throw new IllegalStateException("payload slots out of order");
            }
            while (n > 0) {
                ByteBuffer z = ZEROS.duplicate();
                z.limit((int) Math.min(n, z.capacity()));
                n -= z.remaining();
                put(z);
            }
        }

        List<Long> finish() {
            if (inChunk > 0) {
                crcs.add(crc.getValue());
                inChunk = 0;
            }
            return crcs;
        }
    }
}
