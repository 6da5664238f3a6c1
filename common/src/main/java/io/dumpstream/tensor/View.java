package io.dumpstream.tensor;

import io.dumpstream.format.Dtype;

/**
 * One task's view of a tensor, as one row of the {@code snapshots} table holds it: the task, where
 * it ran, the byte offset of its view in the tensor, the bytes it would hold untruncated
 * ({@code fullBytes}) and the stored bytes {@code payload[payloadOff, payloadOff + payloadLen)}.
 * The payload array is referenced, not copied.
 *
 * @param taskId            snapshots.task_id
 * @param taskIndex         snapshots.task_index
 * @param placement         core, owner and worker of the task
 * @param tensorName        snapshots.tensor_name
 * @param dtype             element type; null when the row's dtype is unknown
 * @param sourceOffsetBytes snapshots.source_offset_bytes (untrusted: checked by the reassembler)
 * @param fullBytes         snapshots.full_bytes, the view's size before truncation
 */
public record View(long taskId, long taskIndex, Placement placement, String tensorName, Dtype dtype,
                   long sourceOffsetBytes, long fullBytes, byte[] payload, int payloadOff, int payloadLen) {

    /** A view whose stored bytes are the whole of {@code payload}. */
    public View(long taskId, long taskIndex, Placement placement, String tensorName, Dtype dtype,
                long sourceOffsetBytes, long fullBytes, byte[] payload) {
        this(taskId, taskIndex, placement, tensorName, dtype, sourceOffsetBytes, fullBytes, payload, 0,
                payload.length);
    }

    /** Where a task ran: snapshots.core_type, core_id, owner_id, owner_label, worker_id. */
    public record Placement(String coreType, int coreId, Long ownerId, String ownerLabel, Long workerId) {
    }
}
