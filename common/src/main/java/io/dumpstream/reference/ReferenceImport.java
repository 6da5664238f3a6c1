package io.dumpstream.reference;

import io.dumpstream.assemble.Outcome;
import io.dumpstream.decode.Rows;
import io.dumpstream.format.L1Layout;
import io.dumpstream.schema.DumpOutcome;
import io.dumpstream.schema.RecordPlan;
import io.dumpstream.schema.TensorSnapshot;
import io.dumpstream.table.TableWriter;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Writes a reference run from a safetensors file into the snapshot tables, so the tensors of an eager
 * framework run sit beside a MegaKernel run's views: one {@code snapshots} row per tensor, a full view
 * of it (source_offset_bytes 0, full_bytes = payload_bytes = the tensor's bytes, shape and dtype from the
 * header, section-5 statistics, {@code note} = {@code safetensors:<key>}), and one {@code dumps} row
 * (COMPLETE) for the dump id {@code <run>/<rank>/<launch>}. Names, stage, phase and parameter position
 * come from a {@link ReferenceNames} map (defaults: the key, {@code reference}, {@code after}, -1).
 *
 * <p>Tensors are read one at a time in file order (data offset), so memory is bounded by the largest
 * tensor, which must not exceed {@code maxTensorBytes}. Every check of {@link Safetensors} runs on open;
 * a names-map key the file lacks is an error.
 */
public final class ReferenceImport {
    /** Placement columns of a reference row: not a kernel task. */
    public static final String CORE_TYPE = "HOST";
    public static final String NOTE_PREFIX = "safetensors:";

    /** What an import wrote. */
    public record Summary(String dumpId, int tensors, long bytes) {
        @Override
        public String toString() {
            return dumpId + ": COMPLETE, " + tensors + " tensors, " + bytes + " bytes";
        }
    }

    private ReferenceImport() {
    }

    /**
     * Imports {@code file} as dump {@code <run>/<rank>/<launch>} (optional training {@code step}) into
     * {@code writer}; {@code progress} gets one line per tensor.
     */
    public static Summary run(Path file, String run, int rank, long launch, Long step, ReferenceNames names,
                              long maxTensorBytes, TableWriter writer, Instant now, Consumer<String> progress) throws IOException {
        if (run == null || run.isEmpty()) {
            throw new IllegalArgumentException("--run must not be empty");
        }
        if (rank < 0) {
            throw new IllegalArgumentException("--rank must be >= 0, got " + rank);
        }
        String dumpId = run + "/" + rank + "/" + launch;
        try (Safetensors st = Safetensors.open(file)) {
            Set<String> keys = new HashSet<>();
            for (Safetensors.Entry e : st.entries()) {
                keys.add(e.name());
            }
            for (String k : names.entries().keySet()) {
                if (!keys.contains(k)) {
                    throw new IOException("names map: key '" + k + "' is not a tensor of " + file + " (it holds "
                            + st.entries().size() + " tensors)");
                }
            }
            List<Safetensors.Entry> entries = new ArrayList<>(st.entries());
            if (entries.isEmpty()) {
                throw new SafetensorsException(file, "header", "holds no tensor");
            }
            if (entries.size() > L1Layout.MAX_RECORDS * 256) {
                throw new SafetensorsException(file, "header", entries.size() + " tensors, more than " + L1Layout.MAX_RECORDS * 256);
            }
            for (Safetensors.Entry e : entries) {
                if (e.bytes() > maxTensorBytes) {
                    throw new SafetensorsException(file, "'" + e.name() + "'", e.bytes() + " bytes, more than --max-tensor-bytes "
                            + maxTensorBytes);
                }
            }
            entries.sort(Comparator.comparingLong(Safetensors.Entry::fileOffset));
            long bytes = 0;
            for (int i = 0; i < entries.size(); i++) {
                Safetensors.Entry e = entries.get(i);
                ReferenceNames.Names n = names.of(e.name());
                byte[] payload = st.readAll(e);
                RecordPlan plan = plan(i, e, n);
                TensorSnapshot row = Rows.snapshot(dumpId, run, launch, step, plan, i, payload, now);
                writer.write(row, run, rank, n.stage());
                bytes += payload.length;
                if (progress != null) {
                    progress.accept("import-reference: " + (i + 1) + "/" + entries.size() + " " + e + " as " + n.tensorName()
                            + " (stage " + n.stage() + ", phase " + n.phase() + (n.parameterPosition() >= 0
                            ? ", parameter_position " + n.parameterPosition() : "") + ")");
                }
            }
            writer.write(DumpOutcome.newBuilder()
                    .setDumpId(dumpId)
                    .setRunId(run)
                    .setLaunchId(launch)
                    .setStep(step)
                    .setRecords(entries.size())
                    .setAccepted(entries.size())
                    .setRejected(0)
                    .setBufferBytes(Files.size(file))
                    .setOutcome(Outcome.COMPLETE.name())
                    .setReason(null)
                    .setCompletedAt(now)
                    .build(), run, rank);
            return new Summary(dumpId, entries.size(), bytes);
        }
    }

    /** The plan of a full view of tensor {@code e}: what {@link Rows#snapshot} needs. */
    static RecordPlan plan(int i, Safetensors.Entry e, ReferenceNames.Names n) {
        List<Long> shape = new ArrayList<>();
        for (long d : e.shape()) {
            shape.add(d);
        }
        boolean before = n.phase().equals("before");
        return RecordPlan.newBuilder()
                .setTaskId(i)
                .setTaskIndex(0)
                .setStage(n.stage())
                .setOwnerId(null)
                .setOwnerLabel("")
                .setCoreType(CORE_TYPE)
                .setCoreId(0)
                .setIo(before ? "input" : "output")
                .setIndex(0)
                .setPhase(n.phase())
                .setParameterPosition(n.parameterPosition())
                .setTensorName(n.tensorName())
                .setDtype(e.dtype().torchName())
                .setSourceOffsetBytes(0)
                .setActualShape(shape)
                .setPayloadOffset(0)
                .setPayloadBytes(e.bytes())
                .setFullBytes(e.bytes())
                .setTruncated(false)
                .setNote(NOTE_PREFIX + e.name())
                .setRecordOffset(0)
                .setWorkerId(L1Layout.NO_WORKER)
                .build();
    }
}
