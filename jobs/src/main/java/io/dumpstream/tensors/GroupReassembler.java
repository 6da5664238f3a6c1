package io.dumpstream.tensors;

import io.dumpstream.compare.Partition;
import io.dumpstream.compare.PayloadPages;
import io.dumpstream.format.Dtype;
import io.dumpstream.job.HeapShare;
import io.dumpstream.tensor.Reassembler;
import io.dumpstream.tensor.Rejected;
import io.dumpstream.tensor.TensorKey;
import io.dumpstream.tensor.TensorRow;
import io.dumpstream.tensor.View;

import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Reassembles every tensor of one {@link TensorGroups group} (the snapshot files of one run and
 * rank, all stages), with no Flink in sight ({@link ReassembleGroups} wraps it).
 *
 * <p>First the view columns of every file ({@link ViewColumns}, no payload), sorted by tensor key
 * (run, launch, phase, parameter position) and then source offset, task index and task id: each
 * view's place in its tensor's offset order. Then the payloads are visited launch by launch in the
 * files' own row order (each page decoded once when rows of a launch lie in offset order, as a
 * kernel's plan writes them); a view is handed to its tensor's {@link Reassembler} as soon as every
 * view before it in offset order has been reached, read again from its page ({@link PayloadPages})
 * when it was reached earlier. A tensor's row is emitted once its last view is in.
 *
 * <p>Memory: the view columns of the group (about 150 bytes a row, no payload), a few decoded pages,
 * and for each tensor of the current launch that is still open, the views its reassembler holds (those
 * reaching past its latest offset: one per tensor for tiles, W for W broadcast workers); never a tensor
 * or a launch's payloads. Not thread-safe (one per subtask).
 */
public final class GroupReassembler implements Closeable {
    static final Comparator<ViewMeta> TENSOR_ORDER = Comparator.<ViewMeta, String>comparing(v -> v.runId)
            .thenComparingLong(v -> v.launchId)
            .thenComparing(v -> v.phase)
            .thenComparingInt(v -> v.parameterPosition)
            .thenComparingLong(v -> v.sourceOffsetBytes)
            .thenComparingLong(v -> v.taskIndex)
            .thenComparingLong(v -> v.taskId)
            .thenComparingInt(v -> v.file)
            .thenComparingLong(v -> v.row);
    static final Comparator<ViewMeta> READ_ORDER = Comparator.<ViewMeta, String>comparing(v -> v.runId)
            .thenComparingLong(v -> v.launchId)
            .thenComparingInt(v -> v.file)
            .thenComparingLong(v -> v.row);
    /** Decoded pages kept: one large, three small. */
    static final int PAGE_READERS = 4;

    /** Two decoded pages and a copy of a payload at a time at most: an eighth of the heap bounds a page. */
    private final int maxPageBytes = (int) Math.min(Integer.MAX_VALUE - 64, HeapShare.bytes());
    /** Views, payload bytes and tensors done so far (over every group of this instance). */
    long views;
    long payloadBytes;
    long tensors;
    long bytesDecoded;

    /**
     * Reassembles group {@code g} of rank {@code rank}, handing each tensor's row to {@code out} and
     * calling {@code progress} after every view.
     */
    public void reassemble(Partition g, int rank, Consumer<TensorRow> out, Runnable progress) throws IOException {
        List<ViewMeta> metas = new ArrayList<>();
        ViewColumns columns = new ViewColumns();
        for (int f = 0; f < g.paths.length; f++) {
            columns.read(g.paths[f], g.lengths[f], f, metas);
        }
        if (metas.isEmpty()) {
            return;
        }
        ViewMeta[] byTensor = metas.toArray(new ViewMeta[0]);
        java.util.Arrays.sort(byTensor, TENSOR_ORDER);
        List<Integer> starts = new ArrayList<>();
        for (int i = 0; i < byTensor.length; i++) {
            if (i == 0 || !byTensor[i].sameTensor(byTensor[i - 1])) {
                starts.add(i);
            }
            byTensor[i].tensor = starts.size() - 1;
            byTensor[i].seq = i - starts.get(starts.size() - 1);
        }
        starts.add(byTensor.length);
        ViewMeta[] byRow = metas.toArray(new ViewMeta[0]);
        metas = null;
        java.util.Arrays.sort(byRow, READ_ORDER);
        Reassembler[] open = new Reassembler[starts.size() - 1];
        int[] next = new int[open.length];
        Map<Integer, Map<Long, String>> unknown = new HashMap<>();
        try (PayloadPages pages = new PayloadPages(g, PAGE_READERS, maxPageBytes)) {
            for (ViewMeta v : byRow) {
                v.reached = true;
                int t = v.tensor;
                int start = starts.get(t);
                int size = starts.get(t + 1) - start;
                if (open[t] == null) {
                    open[t] = new Reassembler(new TensorKey(v.runId, rank, v.launchId, v.phase, v.parameterPosition));
                }
                while (next[t] < size && byTensor[start + next[t]].reached) {
                    ViewMeta m = byTensor[start + next[t]];
                    byte[] payload = pages.copy(m.file, m.row);
                    Dtype dtype = Dtype.fromName(m.dtype);
                    if (dtype == null) {
                        unknown.computeIfAbsent(t, k -> new HashMap<>()).put(m.taskId, m.dtype);
                    }
                    open[t].add(new View(m.taskId, m.taskIndex, new View.Placement(m.coreType, m.coreId, m.ownerId,
                            m.ownerLabel, m.workerId), m.tensorName, dtype, m.sourceOffsetBytes, m.fullBytes, payload));
                    views++;
                    payloadBytes += payload.length;
                    next[t]++;
                    progress.run();
                }
                if (next[t] == size) {
                    TensorRow row = withDtypeNames(open[t].finish(), unknown.remove(t));
                    open[t] = null;
                    tensors++;
                    out.accept(row);
                }
            }
            bytesDecoded += pages.bytesDecoded();
        }
    }

    /** The dtype values of views rejected as UNKNOWN_DTYPE, named in their messages (the core only sees null). */
    private static TensorRow withDtypeNames(TensorRow r, Map<Long, String> names) {
        if (names == null) {
            return r;
        }
        List<Rejected> rejected = new ArrayList<>(r.rejected().size());
        for (Rejected x : r.rejected()) {
            String name = names.get(x.taskId());
            rejected.add(x.reason().equals(Rejected.UNKNOWN_DTYPE) && name != null
                    ? new Rejected(x.taskId(), x.reason(), x.message() + ": snapshots column 'dtype' is '" + name + "'")
                    : x);
        }
        return new TensorRow(r.key(), r.tensorName(), r.dtype(), r.extentBytes(), r.extentElements(), r.coveredBytes(),
                r.coveredElements(), r.coverage(), r.gapCount(), r.gapBytes(), r.overlapCount(), r.overlapBytes(),
                r.overlapsAgree(), r.disagreements(), r.stats(), r.views(), List.copyOf(rejected));
    }

    @Override
    public void close() {
    }
}
