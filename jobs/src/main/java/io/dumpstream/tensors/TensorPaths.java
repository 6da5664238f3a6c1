package io.dumpstream.tensors;

import io.dumpstream.table.HivePartition;

/** Root-relative, escaped Hive partition paths of the tensors table. */
public final class TensorPaths {
    public static final String TENSORS = "tensors";

    private TensorPaths() {
    }

    /** {@code tensors/run=<run>/rank=<r>}, as {@code dumps}. */
    public static String tensors(String runId, int rank) {
        return TENSORS + '/' + HivePartition.segment(HivePartition.RUN, runId) + '/'
                + HivePartition.segment(HivePartition.RANK, Integer.toString(rank));
    }

    /** {@code tensors/run=<run>}. */
    public static String tensorsOf(String runId) {
        return TENSORS + '/' + HivePartition.segment(HivePartition.RUN, runId);
    }
}
