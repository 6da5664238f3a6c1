package io.dumpstream.tensors;

/**
 * The columns of one snapshot row a tensor needs besides its payload, and where the payload is
 * (file of the partition, row in the file). Strings are shared between rows of a partition.
 */
final class ViewMeta {
    int file;
    long row;
    String runId;
    long launchId;
    String phase;
    int parameterPosition;
    long taskId;
    long taskIndex;
    String coreType;
    int coreId;
    Long ownerId;
    String ownerLabel;
    Long workerId;
    String tensorName;
    String dtype;
    long sourceOffsetBytes;
    long fullBytes;
    long payloadBytes;
    /** Index of the view's tensor in the partition, its position in the tensor's offset order. */
    int tensor;
    int seq;
    /** Whether the row-order pass has reached this view. */
    boolean reached;

    /** Same tensor key (run, launch, phase, parameter position; the rank is the partition's). */
    boolean sameTensor(ViewMeta o) {
        return launchId == o.launchId && parameterPosition == o.parameterPosition && phase.equals(o.phase)
                && runId.equals(o.runId);
    }
}
