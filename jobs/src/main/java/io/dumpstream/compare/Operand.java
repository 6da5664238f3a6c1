package io.dumpstream.compare;

import io.dumpstream.schema.TensorSnapshot;

import java.util.List;

/**
 * One side of a pair: the snapshot columns the comparison needs, with the raw payload. A Flink
 * POJO (public fields, no-arg constructor) so it travels without Kryo.
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
    public byte[] data;

    public Operand() {
    }

    /**
     * The side of a snapshot row of run {@code runId}; its rank is read from the dump id
     * {@code <run_id>/<rank>/<launch_id>}.
     */
    public static Operand of(TensorSnapshot s, boolean baseline, PairKey keys) {
        Operand o = new Operand();
        o.baseline = baseline;
        o.dumpId = s.getDumpId();
        o.rank = rankOf(s.getDumpId(), s.getRunId());
        o.recordIndex = s.getRecordIndex();
        o.launchId = s.getLaunchId();
        o.step = s.getStep();
        o.stage = s.getStageName();
        o.taskId = s.getTaskId();
        o.taskIndex = s.getTaskIndex();
        o.ownerId = s.getOwnerId();
        o.io = s.getIo();
        o.portIndex = s.getPortIndex();
        o.tensorName = s.getTensorName();
        o.workerId = s.getWorkerId();
        o.dtype = s.getDtype();
        List<Long> shape = s.getShape();
        o.shape = new long[shape.size()];
        for (int i = 0; i < o.shape.length; i++) {
            o.shape[i] = shape.get(i);
        }
        o.numel = s.getNumel();
        o.truncated = s.getTruncated();
        o.nanCount = s.getNanCount();
        o.infCount = s.getInfCount();
        o.l2Norm = s.getL2Norm();
        o.payloadCrc32c = s.getPayloadCrc32c();
        java.nio.ByteBuffer b = s.getData();
        if (b.hasArray() && b.arrayOffset() == 0 && b.position() == 0 && b.remaining() == b.array().length) {
            o.data = b.array();
        } else {
            o.data = new byte[b.remaining()];
            b.duplicate().get(o.data);
        }
        o.key = keys.of(o);
        return o;
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
