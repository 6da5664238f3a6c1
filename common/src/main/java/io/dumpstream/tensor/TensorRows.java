package io.dumpstream.tensor;

import io.dumpstream.schema.OverlapDisagreement;
import io.dumpstream.schema.ReassembledTensor;
import io.dumpstream.schema.TensorView;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A {@link TensorRow} as a row of the {@code tensors} table (schema {@code ReassembledTensor}). */
public final class TensorRows {
    private TensorRows() {
    }

    public static ReassembledTensor toAvro(TensorRow r) {
        Map<Long, String> reasons = new HashMap<>();
        for (Rejected x : r.rejected()) {
            reasons.putIfAbsent(x.taskId(), x.reason());
        }
        List<TensorView> views = new ArrayList<>(r.views().size());
        for (TensorRow.ViewRef v : r.views()) {
            View.Placement p = v.placement();
            views.add(TensorView.newBuilder().setTaskId(v.taskId()).setTaskIndex(v.taskIndex())
                    .setCoreType(p.coreType()).setCoreId(p.coreId()).setOwnerId(p.ownerId())
                    .setOwnerLabel(p.ownerLabel()).setWorkerId(p.workerId())
                    .setSourceOffsetBytes(v.sourceOffsetBytes()).setStoredBytes(v.storedBytes())
                    .setFullBytes(v.fullBytes()).setRejectReason(v.accepted() ? null : reasons.get(v.taskId()))
                    .build());
        }
        List<OverlapDisagreement> dis = new ArrayList<>(r.disagreements().size());
        for (Disagreement d : r.disagreements()) {
            dis.add(new OverlapDisagreement(d.earlierTaskId(), d.laterTaskId(), d.offset(), d.length(),
                    d.differingElements(), d.firstDifferenceOffset()));
        }
        return ReassembledTensor.newBuilder().setRunId(r.key().runId()).setLaunchId(r.key().launchId())
                .setPhase(r.key().phase()).setParameterPosition(r.key().parameterPosition())
                .setTensorName(r.tensorName()).setDtype(r.dtype()).setExtentBytes(r.extentBytes())
                .setExtentElements(r.extentElements()).setCoveredBytes(r.coveredBytes())
                .setCoveredElements(r.coveredElements()).setCoverage(r.coverage()).setGapCount(r.gapCount())
                .setGapBytes(r.gapBytes()).setOverlapCount(r.overlapCount()).setOverlapBytes(r.overlapBytes())
                .setOverlapsAgree(r.overlapsAgree()).setNumel(r.stats().numel()).setNanCount(r.stats().nanCount())
                .setInfCount(r.stats().infCount()).setZeroCount(r.stats().zeroCount()).setMin(r.stats().min())
                .setMax(r.stats().max()).setMean(r.stats().mean()).setL2Norm(r.stats().l2Norm())
                .setViews(views).setDisagreements(dis).build();
    }
}
