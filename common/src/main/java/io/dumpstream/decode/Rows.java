package io.dumpstream.decode;

import io.dumpstream.assemble.Outcome;
import io.dumpstream.format.Dtype;
import io.dumpstream.format.L1Layout;
import io.dumpstream.format.ReasonCode;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.schema.DumpManifest;
import io.dumpstream.schema.DumpOutcome;
import io.dumpstream.schema.RecordPlan;
import io.dumpstream.schema.RejectedRecord;
import io.dumpstream.schema.TensorSnapshot;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/** Builds the rows of the three output tables (CONTRACT section 6). */
public final class Rows {
    /** Cap of the manifest text kept with a reject of an unusable manifest. */
    public static final int MANIFEST_TEXT_CAP = 64 * 1024;

    private Rows() {
    }

    /** The snapshot row of accepted record {@code i}: decodes its statistics from {@code payload}. */
    public static TensorSnapshot snapshot(DumpManifest m, int i, byte[] payload, Instant now) {
        return snapshot(Manifests.dumpId(m), m.getRunId(), m.getLaunchId(), m.getStep(), m.getRecords().get(i), i,
                payload, now);
    }

    /**
     * The snapshot row of accepted record {@code i} from its plan and its dump's identity alone,
     * for drivers that ship one record at a time (the Flink job) rather than the whole manifest.
     */
    public static TensorSnapshot snapshot(String dumpId, String runId, long launchId, Long step, RecordPlan r, int i,
                                          byte[] payload, Instant now) {
        Dtype d = Dtype.fromName(r.getDtype());
        TensorStats.Stats st = TensorStats.compute(d, payload, 0, payload.length);
        CRC32C crc = new CRC32C();
        crc.update(payload);
        List<Long> stored = r.getTruncated() ? List.of((long) (payload.length / d.elementSize()))
                : new ArrayList<>(r.getActualShape());
        return TensorSnapshot.newBuilder()
                .setDumpId(dumpId)
                .setRunId(runId)
                .setStageName(r.getStage())
                .setLaunchId(launchId)
                .setStep(step)
                .setRecordIndex(i)
                .setTaskId(r.getTaskId())
                .setTaskIndex(r.getTaskIndex())
                .setOwnerId(r.getOwnerId())
                .setOwnerLabel(r.getOwnerLabel())
                .setCoreType(r.getCoreType())
                .setCoreId(r.getCoreId())
                .setWorkerId(r.getWorkerId() == L1Layout.NO_WORKER ? null : r.getWorkerId())
                .setIo(r.getIo())
                .setPortIndex(r.getIndex())
                .setPhase(r.getPhase())
                .setParameterPosition(r.getParameterPosition())
                .setTensorName(r.getTensorName())
                .setNote(r.getNote())
                .setDtype(d.torchName())
                .setShape(new ArrayList<>(r.getActualShape()))
                .setStoredShape(stored)
                .setTruncated(r.getTruncated())
                .setFullBytes(r.getFullBytes())
                .setPayloadBytes(r.getPayloadBytes())
                .setSourceOffsetBytes(r.getSourceOffsetBytes())
                .setData(ByteBuffer.wrap(payload))
                .setNumel(st.numel())
                .setNanCount(st.nanCount())
                .setInfCount(st.infCount())
                .setZeroCount(st.zeroCount())
                .setMin(st.min())
                .setMax(st.max())
                .setMean(st.mean())
                .setL2Norm(st.l2Norm())
                .setPayloadCrc32c(crc.getValue())
                .setIngestedAt(now)
                .build();
    }

    /** The reject row of record {@code i}. */
    public static RejectedRecord reject(DumpManifest m, int i, ReasonCode reason, String detail, byte[] rawEntry,
                                        byte[] payload, boolean capped, Instant now) {
        RecordPlan r = m.getRecords().get(i);
        return RejectedRecord.newBuilder()
                .setDumpId(Manifests.dumpId(m))
                .setRunId(m.getRunId())
                .setLaunchId(m.getLaunchId())
                .setRecordIndex(i)
                .setTaskId(r.getTaskId())
                .setStageName(r.getStage())
                .setIo(r.getIo())
                .setPortIndex(r.getIndex())
                .setTensorName(r.getTensorName())
                .setReason(reason.name())
                .setDetail(detail)
                .setRawRecord(rawEntry == null ? null : ByteBuffer.wrap(rawEntry))
                .setPayload(payload == null ? null : ByteBuffer.wrap(payload))
                .setPayloadTruncated(capped)
                .setRejectedAt(now)
                .build();
    }

    /** The one reject row of a dump whose manifest is unusable: no record index, the manifest text kept. */
    public static RejectedRecord manifestReject(String dumpId, ReasonCode reason, String detail, byte[] manifest,
                                                Instant now) {
        String text = null;
        if (manifest != null) {
            int n = Math.min(manifest.length, MANIFEST_TEXT_CAP);
            text = new String(manifest, 0, n, StandardCharsets.UTF_8);
        }
        return RejectedRecord.newBuilder()
                .setDumpId(dumpId)
                .setReason(reason.name())
                .setDetail(detail)
                .setManifest(text)
                .setPayloadTruncated(manifest != null && manifest.length > MANIFEST_TEXT_CAP)
                .setRejectedAt(now)
                .build();
    }

    /** The dump row. */
    public static DumpOutcome outcome(DumpManifest m, Outcome outcome, ReasonCode reason, int accepted, int rejected,
                                      Instant now) {
        return DumpOutcome.newBuilder()
                .setDumpId(Manifests.dumpId(m))
                .setRunId(m.getRunId())
                .setLaunchId(m.getLaunchId())
                .setStep(m.getStep())
                .setRecords(m.getRecords().size())
                .setAccepted(accepted)
                .setRejected(rejected)
                .setBufferBytes(m.getBufferBytes())
                .setOutcome(outcome.name())
                .setReason(reason == null ? null : reason.name())
                .setCompletedAt(now)
                .build();
    }

    /** The dump row of a dump whose manifest is unusable. */
    public static DumpOutcome unusableOutcome(String dumpId, ReasonCode reason, Instant now) {
        return DumpOutcome.newBuilder()
                .setDumpId(dumpId)
                .setLaunchId(-1L)
                .setRecords(0)
                .setAccepted(0)
                .setRejected(1)
                .setBufferBytes(-1L)
                .setOutcome(Outcome.REJECTED.name())
                .setReason(reason.name())
                .setCompletedAt(now)
                .build();
    }
}
