package io.dumpstream.compare;

import org.apache.avro.generic.GenericRecord;

import java.util.Collection;

/**
 * One side of a pair: the snapshot columns the comparison needs, where its payload is, and (while
 * it is compared) a view of the payload. A Flink POJO (public fields, no-arg constructor).
 */
public class Operand {
    public boolean baseline;
    /** The pairing key (see {@link PairKey}). */
    public String key;
    public int rank;
    public String dumpId;
    public int recordIndex;
    public long launchId;
    public Long step;
    public String stage;
    public long taskId;
    public long taskIndex;
    public Long ownerId;
    public String io;
    public int portIndex;
    public String tensorName;
    public Long workerId;
    public String dtype;
    public long[] shape;
    /** Stored elements (numel of the snapshot). */
    public long numel;
    public boolean truncated;
    public long nanCount;
    public long infCount;
    /** L2 norm of the finite elements; null when there is none. */
    public Double l2Norm;
    public long payloadCrc32c;
    /**
     * The payload: {@code data[dataOffset, dataOffset + dataLength)}, or all of {@code data} while
     * {@code dataLength} is negative. The partition reader points it into a reused page buffer.
     */
    public byte[] data;
    public int dataOffset;
    public int dataLength = -1;
    /** Which file of its partition the row is in, and its row number there (where to read the payload). */
    public int file;
    public long row;

    public Operand() {
    }

    /** Bytes of the payload view. */
    public int length() {
        return dataLength < 0 ? data.length : dataLength;
    }

    /**
     * The side of a snapshot row (a projection without the payload, see {@link SnapshotRows}); its
     * rank is read from the dump id {@code <run_id>/<rank>/<launch_id>}.
     */
    public static Operand of(GenericRecord s, boolean baseline, PairKey keys, int file, long row) {
        Operand o = new Operand();
        o.fill(s, baseline, file, row);
        o.key = keys.of(o);
        return o;
    }

    /** Sets the fields {@link #of} reads from {@code s} (every one but {@link #key}); subclasses read more columns. */
    protected void fill(GenericRecord s, boolean baseline, int file, long row) {
        Operand o = this;
        o.baseline = baseline;
        o.file = file;
        o.row = row;
        o.dumpId = text(s, "dump_id");
        o.rank = rankOf(o.dumpId, text(s, "run_id"));
        o.recordIndex = ((Number) s.get("record_index")).intValue();
        o.launchId = ((Number) s.get("launch_id")).longValue();
        o.step = longOrNull(s, "step");
        o.stage = text(s, "stage_name");
        o.taskId = ((Number) s.get("task_id")).longValue();
        o.taskIndex = ((Number) s.get("task_index")).longValue();
        o.ownerId = longOrNull(s, "owner_id");
        o.io = text(s, "io");
        o.portIndex = ((Number) s.get("port_index")).intValue();
        o.tensorName = text(s, "tensor_name");
        o.workerId = longOrNull(s, "worker_id");
        o.dtype = text(s, "dtype");
        Collection<?> shape = (Collection<?>) s.get("shape");
        o.shape = new long[shape.size()];
        int i = 0;
        for (Object d : shape) {
            o.shape[i++] = ((Number) d).longValue();
        }
        o.numel = ((Number) s.get("numel")).longValue();
        o.truncated = (Boolean) s.get("truncated");
        o.nanCount = ((Number) s.get("nan_count")).longValue();
        o.infCount = ((Number) s.get("inf_count")).longValue();
        Object norm = s.get("l2_norm");
        o.l2Norm = norm == null ? null : ((Number) norm).doubleValue();
        o.payloadCrc32c = ((Number) s.get("payload_crc32c")).longValue();
    }

    static String text(GenericRecord s, String field) {
        Object v = s.get(field);
        return v == null ? null : v.toString();
    }

    static Long longOrNull(GenericRecord s, String field) {
        Object v = s.get(field);
        return v == null ? null : ((Number) v).longValue();
    }

    /** The rank inside a dump id {@code <run_id>/<rank>/<launch_id>}. */
    static int rankOf(String dumpId, String runId) {
        String prefix = runId + "/";
        int end = dumpId.lastIndexOf('/');
        if (!dumpId.startsWith(prefix) || end <= prefix.length()) {
            throw new IllegalArgumentException("snapshot dump_id '" + dumpId + "' does not start with its run_id '" + runId
                    + "' followed by /<rank>/<launch_id>");
        }
        String rank = dumpId.substring(prefix.length(), end);
        try {
            return Integer.parseInt(rank);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("snapshot dump_id '" + dumpId + "': rank '" + rank + "' is not an integer");
        }
    }
}
