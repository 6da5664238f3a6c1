package io.dumpstream.compare;

import io.dumpstream.job.HeapShare;
import io.dumpstream.schema.FirstDivergence;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.Path;

import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Reads and compares one {@link Partition}, with no Flink in sight (the operator
 * {@link ComparePartitions} wraps it): first the key and metadata columns of every file of both
 * runs ({@link SnapshotRows}), pairing by key in memory; then, pair by pair in file order, the two
 * payloads straight from their Parquet pages ({@link PayloadReader}) and their comparison
 * ({@link PairRows}). At most one pair of payloads (two decoded pages) is held at a time, whatever
 * the partition's size. With {@code readOnly} it reads every payload and emits nothing: the same
 * job's I/O floor. Not thread-safe (one per subtask).
 */
public final class PartitionComparer implements Closeable {
    /** Pairs in the order their payloads are read: the baseline's files and rows, else the candidate's. */
    private static final Comparator<SidePair> READ_ORDER = Comparator
            .comparingInt((SidePair p) -> first(p).file)
            .thenComparingLong(p -> first(p).row);

    private final String baseline;
    private final String candidate;
    private final PairKey keys;
    private final boolean readOnly;
    private final PairRows rows;
    private final PayloadReader baselinePages = new PayloadReader();
    private final PayloadReader candidatePages = new PayloadReader();
    /**
     * Two decoded pages and their compressed reads are held at once: a page larger than an eighth
     * of the heap could not be compared anyway, and a corrupt size must not allocate it.
     */
    private final int maxPageBytes = (int) Math.min(Integer.MAX_VALUE - 64, HeapShare.bytes());
    /** Payload bytes of the pairs compared (both sides). */
    long bytesCompared;
    /** Wall-clock milliseconds of the last payload read (0 before the first). */
    long lastReadMillis;

    public PartitionComparer(String baseline, String candidate, PairKey keys, Tolerances tolerances, boolean readOnly) {
        this.baseline = baseline;
        this.candidate = candidate;
        this.keys = keys;
        this.readOnly = readOnly;
        this.rows = new PairRows(baseline, candidate, tolerances);
    }

    /** Compares partition {@code p}, handing every result row to {@code out} (none when read-only). */
    public void compare(Partition p, Consumer<FirstDivergence> out) throws IOException {
        List<Operand> sides = new ArrayList<>();
        for (int f = 0; f < p.paths.length; f++) {
            try (FSDataInputStream in = open(p.paths[f])) {
                SnapshotRows.read(p.paths[f], in, p.lengths[f], f, baseline, candidate, keys, sides);
            }
        }
        Map<String, List<Operand>> byKey = new HashMap<>();
        for (Operand o : sides) {
            byKey.computeIfAbsent(o.key, k -> new ArrayList<>(2)).add(o);
        }
        List<SidePair> planned = new ArrayList<>(byKey.size());
        for (List<Operand> key : byKey.values()) {
            planned.addAll(PairRows.pairs(key));
        }
        planned.sort(READ_ORDER);
        PayloadColumn[] columns = new PayloadColumn[p.paths.length];
        try {
            for (SidePair pair : planned) {
                Operand b = pair.baseline();
                Operand c = pair.candidate();
                boolean load = readOnly || PairRows.comparable(b, c);
                if (load && b != null) {
                    baselinePages.read(column(columns, p, b.file), b);
                }
                if (load && c != null) {
                    candidatePages.read(column(columns, p, c.file), c);
                }
                if (load) {
                    lastReadMillis = System.currentTimeMillis();
                }
                if (!readOnly) {
                    if (load) {
                        bytesCompared += b.length() + (long) c.length();
                    }
                    out.accept(rows.row(b, c, pair.note()));
                }
                release(b);
                release(c);
            }
        } finally {
            for (PayloadColumn col : columns) {
                if (col != null) {
                    col.close();
                }
            }
        }
    }

    private PayloadColumn column(PayloadColumn[] columns, Partition p, int f) throws IOException {
        if (columns[f] == null) {
            columns[f] = PayloadColumn.open(p.paths[f], open(p.paths[f]), p.lengths[f], maxPageBytes);
        }
        return columns[f];
    }

    private static FSDataInputStream open(String file) throws IOException {
        Path path = new Path(file);
        return path.getFileSystem().open(path);
    }

    /** Drops the view into a page buffer once the pair is done. */
    private static void release(Operand o) {
        if (o != null) {
            o.data = null;
            o.dataLength = -1;
        }
    }

    private static Operand first(SidePair p) {
        return p.baseline() != null ? p.baseline() : p.candidate();
    }

    @Override
    public void close() {
        baselinePages.close();
        candidatePages.close();
    }
}
