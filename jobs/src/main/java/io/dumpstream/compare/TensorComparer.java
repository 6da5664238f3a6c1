package io.dumpstream.compare;

import io.dumpstream.format.Dtype;
import io.dumpstream.job.HeapShare;
import io.dumpstream.schema.FirstDivergence;
import io.dumpstream.tensor.Disagreement;
import io.dumpstream.tensor.Interval;
import io.dumpstream.tensor.Reassembler;
import io.dumpstream.tensor.Rejected;
import io.dumpstream.tensor.TensorKey;
import io.dumpstream.tensor.TensorRow;
import io.dumpstream.tensor.View;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.Path;

import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * {@code compare --by tensor} over one rank (every stage partition of both runs): the baseline run is a
 * reference run (one whole tensor per snapshot row, as {@code import-reference} writes it), the
 * candidate a MegaKernel run of task views. Each candidate tensor, keyed (rank, launch_id, phase,
 * parameter_position) as in the tensors table, is reassembled from its views in offset order by
 * {@link Reassembler}; its walker hands over the covered byte intervals, and each is compared in place
 * with the reference's same elements ({@link TensorComparator#compareRange}, the pair compare's
 * tolerances), so neither tensor is ever copied whole.
 *
 * <p>Matching: a reference row with a parameter_position (>= 0) is the reference of the candidate tensor
 * with that (rank, launch_id, phase, parameter_position); one without (-1) of every candidate tensor of
 * its (rank, launch_id, phase) that has a view with its tensor_name. Candidate tensors no reference
 * names are MISSING_BASELINE, references with no candidate MISSING_CANDIDATE.
 *
 * <p>Memory: the reference tensor (one decoded page), one decoded page of views, and copies of the views
 * the reassembler still holds (one for tiles, W for W broadcast workers). Not thread-safe.
 */
public final class TensorComparer implements Closeable {
    /** Files whose payload column index is kept open at once (a tensor's views span a few stage files). */
    static final int OPEN_COLUMNS = 32;
    /** At most this many rejected views and disagreements are spelled out in a row's detail. */
    static final int DETAIL_ITEMS = 3;
    /** Views of a tensor in the order the reassembler needs them. */
    static final Comparator<ViewOperand> VIEW_ORDER = Comparator
            .comparingLong((ViewOperand v) -> v.sourceOffsetBytes)
            .thenComparingLong(v -> v.taskIndex)
            .thenComparing(v -> v.workerId, Comparator.nullsFirst(Comparator.naturalOrder()))
            .thenComparing(v -> v.dumpId)
            .thenComparingInt(v -> v.recordIndex);

    private final String baseline;
    private final String candidate;
    private final Tolerances tolerances;
    private final TensorComparator comparator = new TensorComparator();
    private final PayloadReader referencePages = new PayloadReader();
    private final PayloadReader viewPages = new PayloadReader();
    private final int maxPageBytes = (int) Math.min(Integer.MAX_VALUE - 64, HeapShare.bytes());
    /** Payload bytes read for comparison (reference and views). */
    long bytesCompared;
    /** Wall-clock milliseconds of the last payload read (0 before the first). */
    long lastReadMillis;

    /** A candidate tensor: the tensors table's key. */
    record Key(int rank, long launchId, String phase, int parameterPosition) implements Comparable<Key> {
        private static final Comparator<Key> ORDER = Comparator.comparingInt(Key::rank).thenComparingLong(Key::launchId)
                .thenComparing(Key::phase).thenComparingInt(Key::parameterPosition);

        @Override
        public int compareTo(Key o) {
            return ORDER.compare(this, o);
        }
    }

    private record Match(ViewOperand reference, Key key, String note) {
    }

    public TensorComparer(String baseline, String candidate, Tolerances tolerances) {
        this.baseline = baseline;
        this.candidate = candidate;
        this.tolerances = tolerances;
    }

    /** Compares the tensors of partition {@code p} (all files of one rank of both runs), one row per tensor to {@code out}. */
    public void compare(Partition p, Consumer<FirstDivergence> out) throws IOException {
        List<ViewOperand> rows = new ArrayList<>();
        for (int f = 0; f < p.paths.length; f++) {
            try (FSDataInputStream in = open(p.paths[f])) {
                SnapshotRows.read(p.paths[f], in, p.lengths[f], f, baseline, candidate, ViewOperand.PROJECTION, ViewOperand::of, rows);
            }
        }
        List<ViewOperand> references = new ArrayList<>();
        Map<Key, List<ViewOperand>> tensors = new TreeMap<>();
        Map<String, List<Key>> byName = new HashMap<>();
        for (ViewOperand o : rows) {
            if (o.baseline) {
                references.add(o);
            } else {
                Key k = new Key(o.rank, o.launchId, o.phase, o.parameterPosition);
                tensors.computeIfAbsent(k, x -> new ArrayList<>()).add(o);
            }
        }
        for (Map.Entry<Key, List<ViewOperand>> e : tensors.entrySet()) {
            e.getValue().sort(VIEW_ORDER);
            for (String name : e.getValue().stream().map(v -> v.tensorName).distinct().toList()) {
                byName.computeIfAbsent(nameKey(e.getKey().rank, e.getKey().launchId, e.getKey().phase, name), x -> new ArrayList<>())
                        .add(e.getKey());
            }
        }
        references.sort(Comparator.comparingInt((ViewOperand o) -> o.file).thenComparingLong(o -> o.row));
        List<Match> matches = new ArrayList<>();
        Map<Key, Integer> referencesOf = new HashMap<>();
        for (ViewOperand r : references) {
            List<Key> keys;
            String how;
            if (r.parameterPosition >= 0) {
                Key k = new Key(r.rank, r.launchId, r.phase, r.parameterPosition);
                keys = tensors.containsKey(k) ? List.of(k) : List.of();
                how = null;
            } else {
                keys = byName.getOrDefault(nameKey(r.rank, r.launchId, r.phase, r.tensorName), List.of());
                how = keys.size() > 1 ? keys.size() + " candidate tensors of phase " + r.phase + " have views named '"
                        + r.tensorName + "' (parameter_position " + keys.stream().map(k -> Integer.toString(k.parameterPosition))
                        .toList() + "): each is compared; give parameter_position in the names map to pick one" : null;
            }
            if (keys.isEmpty()) {
                out.accept(missingCandidate(r));
            }
            for (Key k : keys) {
                matches.add(new Match(r, k, how));
                referencesOf.merge(k, 1, Integer::sum);
            }
        }
        for (Map.Entry<Key, List<ViewOperand>> e : tensors.entrySet()) {
            if (!referencesOf.containsKey(e.getKey())) {
                out.accept(missingBaseline(e.getKey(), e.getValue()));
            }
        }
        Map<Integer, PayloadColumn> columns = new LinkedHashMap<>(16, 0.75f, true);
        try {
            for (Match m : matches) {
                int refs = referencesOf.get(m.key);
                String note = m.note;
                if (refs > 1) {
                    String dup = refs + " reference rows match this tensor (imported twice?); each is compared";
                    note = note == null ? dup : note + "; " + dup;
                }
                out.accept(compareTensor(m.reference, m.key, tensors.get(m.key), note, columns, p));
            }
        } finally {
            for (PayloadColumn c : columns.values()) {
                c.close();
            }
        }
    }

    private static String nameKey(int rank, long launch, String phase, String name) {
        return rank + "\u0000" + launch + "\u0000" + phase + "\u0000" + name;
    }

    /** Running state of one tensor's walk: the reference's bytes and what the intervals added up to. */
    private final class Walk implements Consumer<Interval> {
        final Dtype dtype;
        final Tolerance tol;
        final byte[] ref;
        final int refOff;
        final long refBytes;
        final TensorComparator.Sum sum = new TensorComparator.Sum();
        boolean bitwise = true;
        long compared;
        long beyond;
        long frontier;
        long gaps;
        long firstTask = -1;

        Walk(Dtype dtype, Tolerance tol, byte[] ref, int refOff, long refBytes) {
            this.dtype = dtype;
            this.tol = tol;
            this.ref = ref;
            this.refOff = refOff;
            this.refBytes = refBytes;
        }

        @Override
        public void accept(Interval iv) {
            long a = iv.offset();
            long e = Math.min(iv.end(), refBytes);
            if (iv.end() > refBytes) {
                beyond += iv.end() - Math.max(a, refBytes);
            }
            if (a >= e) {
                return;
            }
            if (a > frontier) {
                gaps++;
            }
            frontier = e;
            int es = dtype.elementSize();
            long n = (e - a) / es;
            long before = sum.mismatches();
            comparator.compareRange(dtype, tol, ref, refOff + (int) a, iv.bytes(), iv.off(), n, a / es, sum);
            if (before == 0 && sum.mismatches() > 0) {
                firstTask = iv.taskId();
            }
            if (bitwise) {
                bitwise = Arrays.equals(ref, refOff + (int) a, refOff + (int) e, iv.bytes(), iv.off(), iv.off() + (int) (e - a));
            }
            compared += n;
        }

        long gapCount() {
            return gaps + (frontier < refBytes ? 1 : 0);
        }
    }

    private FirstDivergence compareTensor(ViewOperand ref, Key key, List<ViewOperand> views, String note,
                                          Map<Integer, PayloadColumn> columns, Partition p) throws IOException {
        ViewOperand first = views.get(0);
        FirstDivergence.Builder r = base(ref, first, key, views);
        List<String> details = new ArrayList<>();
        if (note != null) {
            details.add(note);
        }
        Dtype dtype = Dtype.fromName(ref.dtype);
        Dtype viewDtype = null;
        for (ViewOperand v : views) {
            if ((viewDtype = Dtype.fromName(v.dtype)) != null) {
                break;
            }
        }
        r.setCandidateDtype(viewDtype == null ? first.dtype : viewDtype.torchName());
        if (dtype == null || viewDtype != dtype) {
            details.add("dtype " + ref.dtype + " in the reference, " + (viewDtype == null ? first.dtype : viewDtype.torchName())
                    + " in the candidate's views");
            return r.setVerdict(Verdict.DTYPE_MISMATCH.name()).setDetail(String.join("; ", details)).build();
        }
        if (ref.sourceOffsetBytes != 0 || ref.truncated) {
            details.add("the baseline row is a partial view (source_offset_bytes " + ref.sourceOffsetBytes + ", truncated "
                    + ref.truncated + "), not a whole reference tensor: import the reference with import-reference");
            return r.setVerdict(Verdict.SHAPE_MISMATCH.name()).setDetail(String.join("; ", details)).build();
        }
        int es = dtype.elementSize();
        Tolerance tol = tolerances.lookup(first.stage, dtype);
        referencePages.read(column(columns, p, ref.file), ref);
        int refLength = ref.length();
        long refElements = refLength / es;
        Walk walk = new Walk(dtype, tol, ref.data, ref.dataOffset, refLength);
        Reassembler reassembler = new Reassembler(new TensorKey(candidate, key.rank, key.launchId, key.phase, key.parameterPosition),
                walk);
        Map<Long, Long> taskIndex = new HashMap<>();
        for (ViewOperand v : views) {
            viewPages.read(column(columns, p, v.file), v);
            // the reassembler keeps views that later ones may overlap: each gets its own copy of its page bytes
            byte[] bytes = Arrays.copyOfRange(v.data, v.dataOffset, v.dataOffset + v.length());
            v.data = null;
            v.dataLength = -1;
            taskIndex.putIfAbsent(v.taskId, v.taskIndex);
            reassembler.add(new View(v.taskId, v.taskIndex, new View.Placement(v.coreType, v.coreId, v.ownerId, v.ownerLabel,
                    v.workerId), v.tensorName, Dtype.fromName(v.dtype), v.sourceOffsetBytes, v.fullBytes, bytes));
            bytesCompared += bytes.length;
        }
        bytesCompared += refLength;
        lastReadMillis = System.currentTimeMillis();
        TensorRow t = reassembler.finish();
        ref.data = null;
        ref.dataLength = -1;

        long compared = walk.compared;
        double coverage = refElements == 0 ? 0.0 : (double) compared / refElements;
        Metrics m = walk.sum.metrics(compared, walk.bitwise && compared > 0);
        r.setCandidateShape(List.of(t.extentElements()))
                .setComparedNumel(compared)
                .setCoveredElements(compared)
                .setCoverage(coverage)
                .setGapCount(walk.gapCount())
                .setRejectedViews(t.rejected().size())
                .setOverlapsAgree(t.overlapsAgree())
                .setRtol(tol.rtol())
                .setAtol(tol.atol())
                .setToleranceSource(tol.source());
        if (compared > 0) {
            r.setBitwiseEqual(m.bitwiseEqual())
                    .setMaxAbsErr(m.maxAbsErr())
                    .setMaxRelErr(m.maxRelErr())
                    .setMeanAbsErr(m.meanAbsErr())
                    .setRmse(m.rmse())
                    .setCosineSimilarity(m.cosineSimilarity())
                    .setMismatchCount(m.mismatchCount())
                    .setFirstMismatchIndex(m.firstMismatchIndex());
            if (walk.firstTask >= 0) {
                r.setFirstMismatchTaskId(walk.firstTask).setFirstMismatchTaskIndex(taskIndex.get(walk.firstTask));
            }
        }
        if (compared < refElements && refElements > 0) {
            details.add(String.format(java.util.Locale.ROOT, "coverage %.4f: the views cover %d of the reference's %d elements"
                    + " (%d gap%s); only those are compared", coverage, compared, refElements, walk.gapCount(),
                    walk.gapCount() == 1 ? "" : "s"));
        }
        for (int i = 0; i < Math.min(DETAIL_ITEMS, t.rejected().size()); i++) {
            Rejected x = t.rejected().get(i);
            details.add("view rejected (" + x.reason() + "): " + x.message());
        }
        if (t.rejected().size() > DETAIL_ITEMS) {
            details.add((t.rejected().size() - DETAIL_ITEMS) + " more views rejected");
        }
        for (int i = 0; i < Math.min(DETAIL_ITEMS, t.disagreements().size()); i++) {
            Disagreement d = t.disagreements().get(i);
            details.add("views of tasks " + d.earlierTaskId() + " and " + d.laterTaskId() + " disagree on " + d.differingElements()
                    + " elements from element " + d.firstDifferenceOffset() / es + " (task " + d.earlierTaskId() + "'s are compared)");
        }
        Verdict verdict;
        if (walk.beyond > 0 || t.extentBytes() > refLength) {
            verdict = Verdict.SHAPE_MISMATCH;
            details.add("the views reach element " + t.extentElements() + " (byte " + t.extentBytes() + "), the reference has "
                    + refElements + " elements");
        } else if (compared == 0) {
            verdict = Verdict.MISSING_CANDIDATE;
            details.add("no accepted view covers an element of the reference (" + views.size() + " views, " + t.rejected().size()
                    + " rejected)");
        } else {
            verdict = m.mismatchCount() == 0 ? Verdict.PASS : Verdict.FAIL;
        }
        return r.setVerdict(verdict.name()).setDetail(details.isEmpty() ? null : String.join("; ", details)).build();
    }

    /** The columns every tensor row has, from its reference and its first view in offset order. */
    private FirstDivergence.Builder base(ViewOperand ref, ViewOperand first, Key key, List<ViewOperand> views) {
        boolean truncated = false;
        for (ViewOperand v : views) {
            truncated |= v.truncated;
        }
        return FirstDivergence.newBuilder()
                .setRank(key.rank)
                .setBaselineRun(baseline)
                .setCandidateRun(candidate)
                .setLaunchId(key.launchId)
                .setCandidateLaunchId(key.launchId)
                .setStep(first.step)
                .setStage(first.stage)
                .setTaskId(first.taskId)
                .setTaskIndex(first.taskIndex)
                .setOwnerId(first.ownerId)
                .setIo(first.io)
                .setPortIndex(first.portIndex)
                .setTensorName(first.tensorName)
                .setWorkerId(null)
                .setDtype(ref.dtype)
                .setShape(boxed(ref.shape))
                .setTruncated(truncated)
                .setBaselineDumpId(ref.dumpId)
                .setBaselineRecordIndex(ref.recordIndex)
                .setCandidateDumpId(first.dumpId)
                .setCandidateRecordIndex(first.recordIndex)
                .setPhase(key.phase)
                .setParameterPosition(key.parameterPosition)
                .setReferenceKey(ref.referenceKey())
                .setExtentElements(ref.numel)
                .setViews(views.size());
    }

    private FirstDivergence missingCandidate(ViewOperand ref) {
        return FirstDivergence.newBuilder()
                .setRank(ref.rank)
                .setBaselineRun(baseline)
                .setCandidateRun(candidate)
                .setLaunchId(ref.launchId)
                .setStep(ref.step)
                .setStage(ref.stage)
                .setTaskId(ref.taskId)
                .setTaskIndex(ref.taskIndex)
                .setIo(ref.io)
                .setPortIndex(ref.portIndex)
                .setTensorName(ref.tensorName)
                .setDtype(ref.dtype)
                .setShape(boxed(ref.shape))
                .setTruncated(false)
                .setBaselineDumpId(ref.dumpId)
                .setBaselineRecordIndex(ref.recordIndex)
                .setPhase(ref.phase)
                .setParameterPosition(ref.parameterPosition < 0 ? null : ref.parameterPosition)
                .setReferenceKey(ref.referenceKey())
                .setExtentElements(ref.numel)
                .setCoveredElements(0L)
                .setCoverage(0.0)
                .setViews(0)
                .setVerdict(Verdict.MISSING_CANDIDATE.name())
                .setDetail(ref.parameterPosition >= 0
                        ? "no candidate view of launch " + ref.launchId + ", phase " + ref.phase + ", parameter_position "
                        + ref.parameterPosition
                        : "no candidate view of launch " + ref.launchId + ", phase " + ref.phase + " is named '" + ref.tensorName + "'")
                .build();
    }

    private FirstDivergence missingBaseline(Key key, List<ViewOperand> views) {
        ViewOperand first = views.get(0);
        boolean truncated = false;
        for (ViewOperand v : views) {
            truncated |= v.truncated;
        }
        return FirstDivergence.newBuilder()
                .setRank(key.rank)
                .setBaselineRun(baseline)
                .setCandidateRun(candidate)
                .setLaunchId(key.launchId)
                .setCandidateLaunchId(key.launchId)
                .setStep(first.step)
                .setStage(first.stage)
                .setTaskId(first.taskId)
                .setTaskIndex(first.taskIndex)
                .setOwnerId(first.ownerId)
                .setIo(first.io)
                .setPortIndex(first.portIndex)
                .setTensorName(first.tensorName)
                .setDtype(first.dtype)
                .setCandidateDtype(first.dtype)
                .setTruncated(truncated)
                .setCandidateDumpId(first.dumpId)
                .setCandidateRecordIndex(first.recordIndex)
                .setPhase(key.phase)
                .setParameterPosition(key.parameterPosition)
                .setViews(views.size())
                .setVerdict(Verdict.MISSING_BASELINE.name())
                .setDetail("no reference tensor names this one (launch " + key.launchId + ", phase " + key.phase
                        + ", parameter_position " + key.parameterPosition + ", tensor_name '" + first.tensorName + "')")
                .build();
    }

    private PayloadColumn column(Map<Integer, PayloadColumn> columns, Partition p, int f) throws IOException {
        PayloadColumn c = columns.get(f);
        if (c == null) {
            if (columns.size() >= OPEN_COLUMNS) {
                var eldest = columns.entrySet().iterator().next();
                eldest.getValue().close();
                columns.remove(eldest.getKey());
            }
            c = PayloadColumn.open(p.paths[f], open(p.paths[f]), p.lengths[f], maxPageBytes);
            columns.put(f, c);
        }
        return c;
    }

    private static FSDataInputStream open(String file) throws IOException {
        Path path = new Path(file);
        return path.getFileSystem().open(path);
    }

    private static List<Long> boxed(long[] a) {
        List<Long> l = new ArrayList<>(a.length);
        for (long v : a) {
            l.add(v);
        }
        return l;
    }

    @Override
    public void close() {
        referencePages.close();
        viewPages.close();
    }
}
