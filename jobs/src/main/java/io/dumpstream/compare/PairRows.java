package io.dumpstream.compare;

import io.dumpstream.format.Dtype;
import io.dumpstream.schema.FirstDivergence;
import io.dumpstream.schema.TensorComparison;

import org.apache.avro.Schema;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Builds the result rows of one key from its baseline and candidate sides: the verdict, then the
 * metrics of {@link TensorComparator} when dtypes and shapes agree. Rows are {@link FirstDivergence}
 * (the comparisons columns plus rank) until the sinks split them.
 */
public final class PairRows {
    /** Sides sharing a key are paired in this order (several workers, or placement ignored). */
    static final Comparator<Operand> SIDE_ORDER = Comparator
            .comparing((Operand o) -> o.workerId, Comparator.nullsFirst(Comparator.naturalOrder()))
            .thenComparing(o -> o.dumpId)
            .thenComparingInt(o -> o.recordIndex);

    /** The order of "earliest": launch_id, task_id, inputs before outputs, port, name, worker, stage. */
    public static final Comparator<FirstDivergence> EARLIEST = Comparator
            .comparingLong(FirstDivergence::getLaunchId)
            .thenComparingLong(FirstDivergence::getTaskId)
            .thenComparing(r -> "input".equals(r.getIo()) ? 0 : 1)
            .thenComparingInt(FirstDivergence::getPortIndex)
            .thenComparing(FirstDivergence::getTensorName)
            .thenComparing(FirstDivergence::getWorkerId, Comparator.nullsFirst(Comparator.naturalOrder()))
            .thenComparing(FirstDivergence::getStage);

    /**
     * Whether a row counts for the first divergence: any non-PASS pair; for {@code --by tensor} only a
     * compared tensor (FAIL, SHAPE_MISMATCH, DTYPE_MISMATCH): a reference usually covers a subset of a
     * run's tensors, and a reference-only row has no kernel task to order it by.
     */
    public static boolean diverged(FirstDivergence r, boolean byTensor) {
        String v = r.getVerdict();
        if (Verdict.PASS.name().equals(v)) {
            return false;
        }
        return !byTensor || !(Verdict.MISSING_BASELINE.name().equals(v) || Verdict.MISSING_CANDIDATE.name().equals(v));
    }

    private final String baselineRun;
    private final String candidateRun;
    private final Tolerances tolerances;
    private final TensorComparator comparator = new TensorComparator();

    public PairRows(String baselineRun, String candidateRun, Tolerances tolerances) {
        this.baselineRun = baselineRun;
        this.candidateRun = candidateRun;
        this.tolerances = tolerances;
    }

    /** Every row of one key. */
    public List<FirstDivergence> rows(Iterable<Operand> sides) {
        List<FirstDivergence> out = new ArrayList<>();
        for (SidePair p : pairs(sides)) {
            out.add(row(p.baseline(), p.candidate(), p.note()));
        }
        return out;
    }

    /**
     * The pairs of one key: each run's sides in {@link #SIDE_ORDER}, the i-th baseline with the i-th
     * candidate, the surplus of either run alone (missing on the other side).
     */
    public static List<SidePair> pairs(Iterable<Operand> sides) {
        List<Operand> base = new ArrayList<>();
        List<Operand> cand = new ArrayList<>();
        for (Operand o : sides) {
            (o.baseline ? base : cand).add(o);
        }
        base.sort(SIDE_ORDER);
        cand.sort(SIDE_ORDER);
        String dup = base.size() > 1 || cand.size() > 1
                ? base.size() + " baseline and " + cand.size() + " candidate rows share this key; paired in (worker_id, dump_id, record_index) order"
                : null;
        List<SidePair> out = new ArrayList<>();
        for (int i = 0; i < Math.max(base.size(), cand.size()); i++) {
            out.add(new SidePair(i < base.size() ? base.get(i) : null, i < cand.size() ? cand.get(i) : null, dup));
        }
        return out;
    }

    /** Whether {@link #row} compares the payloads of this pair (both present, same known dtype, same shape). */
    public static boolean comparable(Operand b, Operand c) {
        return b != null && c != null && b.dtype.equals(c.dtype) && Dtype.fromName(b.dtype) != null && Arrays.equals(b.shape, c.shape);
    }

    /** The row of one pair; either side may be null (missing). */
    public FirstDivergence row(Operand b, Operand c, String note) {
        Operand p = b != null ? b : c;
        FirstDivergence.Builder r = FirstDivergence.newBuilder()
                .setRank(p.rank)
                .setBaselineRun(baselineRun)
                .setCandidateRun(candidateRun)
                .setLaunchId(p.launchId)
                .setCandidateLaunchId(c == null ? null : c.launchId)
                .setStep(p.step)
                .setStage(p.stage)
                .setTaskId(p.taskId)
                .setTaskIndex(p.taskIndex)
                .setOwnerId(p.ownerId)
                .setIo(p.io)
                .setPortIndex(p.portIndex)
                .setTensorName(p.tensorName)
                .setWorkerId(p.workerId)
                .setDtype(p.dtype)
                .setCandidateDtype(c == null ? null : c.dtype)
                .setShape(b == null ? null : boxed(b.shape))
                .setCandidateShape(c == null ? null : boxed(c.shape))
                .setTruncated((b != null && b.truncated) || (c != null && c.truncated))
                .setBaselineDumpId(b == null ? null : b.dumpId)
                .setBaselineRecordIndex(b == null ? null : b.recordIndex)
                .setCandidateDumpId(c == null ? null : c.dumpId)
                .setCandidateRecordIndex(c == null ? null : c.recordIndex);
        List<String> details = new ArrayList<>();
        if (note != null) {
            details.add(note);
        }
        Verdict verdict;
        if (b == null) {
            verdict = Verdict.MISSING_BASELINE;
        } else if (c == null) {
            verdict = Verdict.MISSING_CANDIDATE;
        } else if (!b.dtype.equals(c.dtype) || Dtype.fromName(b.dtype) == null) {
            verdict = Verdict.DTYPE_MISMATCH;
            details.add("dtype " + b.dtype + " in the baseline, " + c.dtype + " in the candidate");
        } else if (!Arrays.equals(b.shape, c.shape)) {
            verdict = Verdict.SHAPE_MISMATCH;
            details.add("shape " + Arrays.toString(b.shape) + " in the baseline, " + Arrays.toString(c.shape) + " in the candidate");
        } else {
            Dtype dtype = Dtype.fromName(b.dtype);
            Tolerance tol = tolerances.lookup(b.stage, dtype);
            long n = Math.min(b.numel, c.numel);
            if (b.truncated || c.truncated) {
                long full = 1;
                for (long d : b.shape) {
                    full *= d;
                }
                details.add("truncated: compared the first " + n + " of " + full + " elements (the stored prefix)");
            }
            if (b.numel != c.numel) {
                details.add("stored elements differ: " + b.numel + " in the baseline, " + c.numel + " in the candidate");
            }
            Metrics m = comparator.compare(dtype, b, c, n, tol);
            verdict = m.mismatchCount() == 0 ? Verdict.PASS : Verdict.FAIL;
            r.setComparedNumel(m.compared())
                    .setBitwiseEqual(m.bitwiseEqual())
                    .setMaxAbsErr(m.maxAbsErr())
                    .setMaxRelErr(m.maxRelErr())
                    .setMeanAbsErr(m.meanAbsErr())
                    .setRmse(m.rmse())
                    .setCosineSimilarity(m.cosineSimilarity())
                    .setMismatchCount(m.mismatchCount())
                    .setFirstMismatchIndex(m.firstMismatchIndex())
                    .setRtol(tol.rtol())
                    .setAtol(tol.atol())
                    .setToleranceSource(tol.source());
        }
        return r.setVerdict(verdict.name()).setDetail(details.isEmpty() ? null : String.join("; ", details)).build();
    }

    private static List<Long> boxed(long[] a) {
        List<Long> l = new ArrayList<>(a.length);
        for (long v : a) {
            l.add(v);
        }
        return l;
    }

    /** The comparisons row of a result row: every column but rank (which lives in the path). */
    public static TensorComparison comparison(FirstDivergence r) {
        TensorComparison t = new TensorComparison();
        Schema from = r.getSchema();
        for (Schema.Field f : t.getSchema().getFields()) {
            t.put(f.pos(), r.get(from.getField(f.name()).pos()));
        }
        return t;
    }
}
