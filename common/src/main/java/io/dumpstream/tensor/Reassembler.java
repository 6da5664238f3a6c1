package io.dumpstream.tensor;

import io.dumpstream.format.Dtype;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.function.Consumer;

/**
 * Rebuilds one tensor (one {@link TensorKey}) from its task views, streaming.
 *
 * <p>Use: {@code new Reassembler(key, walker)}, then {@link #add} every view of the key in
 * ascending {@code sourceOffsetBytes} (ties in any order, e.g. by task index), then {@link #finish}
 * for the {@link TensorRow}. The optional walker receives the covered bytes as {@link Interval}s in
 * ascending offset, each covered byte exactly once (the first view to cover a byte supplies it), so a
 * comparer can line the tensor's elements up with a reference without holding the tensor; gaps are
 * the offsets no interval reaches. Interval arrays belong to the views: copy what must outlive the call.
 *
 * <p>Checks, all on untrusted values and before any use: unknown dtype, a dtype differing from the
 * first accepted view's, a negative offset or full size, stored bytes beyond the full size, an end past
 * {@code Long.MAX_VALUE}, offsets or sizes not whole elements, and a view offered out of offset
 * order are each a {@link Rejected} with its reason code; the view counts nowhere else.
 *
 * <p>Where two views overlap the later one's bytes are compared with those already covered, byte for
 * byte, per element; a difference is a {@link Disagreement} naming both task ids. Agreeing overlaps
 * (broadcast workers) count once in the statistics.
 *
 * <p>Memory: the reassembler holds references to the views whose stored bytes reach past the offset
 * of the latest view (the only ones a later view can overlap), plus one small {@link TensorRow.ViewRef}
 * per view and the disagreements; never a copy of the tensor. With non-overlapping tiles that is one
 * view; with W broadcast workers over the same range, W.
 */
public final class Reassembler {
    private final TensorKey key;
    private final Consumer<Interval> walker;
    private final StatsSum stats = new StatsSum();
    private final List<TensorRow.ViewRef> views = new ArrayList<>();
    private final List<Rejected> rejected = new ArrayList<>();
    private final List<Disagreement> disagreements = new ArrayList<>();
    /** Emitted intervals that end after the latest view's offset, in offset order. */
    private final ArrayDeque<Interval> live = new ArrayDeque<>();
    private Dtype dtype;
    private String tensorName;
    private long lastOffset = Long.MIN_VALUE;
    private long frontier;
    private long extent;
    private long covered;
    private long gapCount;
    private long gapBytes;
    private long overlapCount;
    private long overlapBytes;

    public Reassembler(TensorKey key, Consumer<Interval> walker) {
        this.key = key;
        this.walker = walker;
    }

    public Reassembler(TensorKey key) {
        this(key, null);
    }

    /** Adds the next view in offset order; returns false when it was rejected (see {@link #finish}). */
    public boolean add(View v) {
        String problem = check(v);
        boolean ok = problem == null;
        views.add(new TensorRow.ViewRef(v.taskId(), v.taskIndex(), v.placement(), v.sourceOffsetBytes(),
                v.payloadLen(), v.fullBytes(), ok));
        if (!ok) {
            return false;
        }
        if (dtype == null) {
            dtype = v.dtype();
            tensorName = v.tensorName();
        }
        long o = v.sourceOffsetBytes();
        lastOffset = o;
        long end = o + v.payloadLen();
        extent = Math.max(extent, o + v.fullBytes());
        if (o > frontier) {
            gapCount++;
            gapBytes += o - frontier;
        }
        while (!live.isEmpty() && live.peekFirst().end() <= o) {
            live.pollFirst();
        }
        long overlapEnd = Math.min(end, frontier);
        if (overlapEnd > o) {
            overlapCount++;
            overlapBytes += overlapEnd - o;
            compare(v, o, overlapEnd);
        }
        if (end > frontier) {
            long from = Math.max(o, frontier);
            int off = v.payloadOff() + (int) (from - o);
            int len = (int) (end - from);
            Interval iv = new Interval(from, v.payload(), off, len, v.taskId());
            stats.add(dtype, v.payload(), off, len);
            covered += len;
            frontier = end;
            live.addLast(iv);
            if (walker != null) {
                walker.accept(iv);
            }
        }
        return true;
    }

    private String check(View v) {
        String at = "task " + v.taskId() + " of " + key + ": ";
        if (v.dtype() == null) {
            return reject(v, Rejected.UNKNOWN_DTYPE, at + "dtype unknown");
        }
        if (dtype != null && v.dtype() != dtype) {
            return reject(v, Rejected.DTYPE_MISMATCH, at + "dtype " + v.dtype().torchName() + " differs from "
                    + dtype.torchName() + " of the views before it");
        }
        long o = v.sourceOffsetBytes();
        long full = v.fullBytes();
        int len = v.payloadLen();
        byte[] p = v.payload();
        if (o < 0 || full < 0 || len < 0 || len > full || o > Long.MAX_VALUE - full || p == null
                || v.payloadOff() < 0 || v.payloadOff() > p.length - len) {
            return reject(v, Rejected.BAD_EXTENT, at + "source_offset_bytes " + o + ", full_bytes " + full
                    + ", stored bytes " + len + " do not describe a view");
        }
        int es = v.dtype().elementSize();
        if (o % es != 0 || full % es != 0 || len % es != 0) {
            return reject(v, Rejected.MISALIGNED, at + "source_offset_bytes " + o + ", full_bytes " + full
                    + " or stored bytes " + len + " is not a whole number of " + es + "-byte "
                    + v.dtype().torchName() + " elements");
        }
        if (o < lastOffset) {
            return reject(v, Rejected.OUT_OF_ORDER, at + "source_offset_bytes " + o
                    + " comes after a view at " + lastOffset);
        }
        return null;
    }

    private String reject(View v, String reason, String message) {
        rejected.add(new Rejected(v.taskId(), reason, message));
        return message;
    }

    /** Compares v's bytes over [o, overlapEnd) with the live intervals covering them. */
    private void compare(View v, long o, long overlapEnd) {
        int es = dtype.elementSize();
        Iterator<Interval> it = live.iterator();
        while (it.hasNext()) {
            Interval s = it.next();
            long a = Math.max(o, s.offset());
            long b = Math.min(overlapEnd, s.end());
            if (a >= b) {
                continue;
            }
            int vi = v.payloadOff() + (int) (a - o);
            int si = s.off() + (int) (a - s.offset());
            int n = (int) (b - a);
            long differing = 0;
            long first = -1;
            int i = 0;
            while (i < n) {
                int m = Arrays.mismatch(v.payload(), vi + i, vi + n, s.bytes(), si + i, si + n);
                if (m < 0) {
                    break;
                }
                int elem = (i + m) / es * es;
                if (first < 0) {
                    first = a + elem;
                }
                differing++;
                i = elem + es;
            }
            if (differing > 0) {
                Disagreement last = disagreements.isEmpty() ? null : disagreements.get(disagreements.size() - 1);
                if (last != null && last.earlierTaskId() == s.taskId() && last.laterTaskId() == v.taskId()
                        && last.offset() + last.length() == a) {
                    disagreements.set(disagreements.size() - 1, new Disagreement(s.taskId(), v.taskId(),
                            last.offset(), last.length() + n, last.differingElements() + differing,
                            last.firstDifferenceOffset()));
                } else {
                    disagreements.add(new Disagreement(s.taskId(), v.taskId(), a, n, differing, first));
                }
            }
        }
    }

    /** The tensor's row; call once, after the last view. */
    public TensorRow finish() {
        if (extent > frontier) {
            gapCount++;
            gapBytes += extent - frontier;
        }
        live.clear();
        int es = dtype == null ? 1 : dtype.elementSize();
        double coverage = extent == 0 ? 0.0 : (double) covered / extent;
        return new TensorRow(key, tensorName, dtype == null ? null : dtype.torchName(), extent, extent / es,
                covered, covered / es, coverage, gapCount, gapBytes, overlapCount, overlapBytes,
                disagreements.isEmpty(), List.copyOf(disagreements), stats.stats(), List.copyOf(views),
                List.copyOf(rejected));
    }
}
