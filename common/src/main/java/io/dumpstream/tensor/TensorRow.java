package io.dumpstream.tensor;

import io.dumpstream.decode.TensorStats;

import java.util.List;

/**
 * A row of the {@code tensors} table: one tensor reassembled from its views.
 *
 * @param dtype             torch name of the first accepted view's dtype, null when no view was accepted
 * @param extentBytes       the tensor's extent: max over accepted views of source_offset_bytes + full_bytes
 *                          (the snapshots table carries no full-tensor shape, so the views' own claim is
 *                          the extent; a view that was never dumped is invisible here)
 * @param coveredBytes      bytes of [0, extent) covered by at least one view's stored bytes
 * @param coverage          coveredBytes / extentBytes (0 when the extent is 0)
 * @param gapCount          maximal uncovered intervals of [0, extent)
 * @param overlapCount      accepted views that overlap bytes an earlier view already covered
 * @param overlapBytes      total bytes of those overlaps
 * @param overlapsAgree     true when every overlap matched byte for byte (true when there is none)
 * @param disagreements     the overlaps that differ, with both task ids, in offset order
 * @param stats             section-5 statistics over the covered elements, each counted once (first
 *                          view in offset order wins an overlap)
 * @param views             every view, accepted or not, in input order, with its placement
 * @param rejected          views left out, with reason codes
 */
public record TensorRow(TensorKey key, String tensorName, String dtype, long extentBytes, long extentElements,
                        long coveredBytes, long coveredElements, double coverage, long gapCount, long gapBytes,
                        long overlapCount, long overlapBytes, boolean overlapsAgree,
                        List<Disagreement> disagreements, TensorStats.Stats stats, List<ViewRef> views,
                        List<Rejected> rejected) {

    /** A view's keys as the tensors table lists them. */
    public record ViewRef(long taskId, long taskIndex, View.Placement placement, long sourceOffsetBytes,
                          long storedBytes, long fullBytes, boolean accepted) {
    }
}
