package io.dumpstream.compare;

import io.dumpstream.manifest.AvroTrust;
import io.dumpstream.schema.FirstDivergence;

import org.apache.flink.api.common.accumulators.LongMaximum;
import org.apache.flink.api.common.accumulators.LongMinimum;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.Path;
import org.apache.flink.metrics.Counter;
import org.apache.flink.util.Collector;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads and compares one {@link Partition} at a time, with no shuffle of payloads: first the key and
 * metadata columns of every file of both runs ({@link SnapshotRows}), pairing by key in memory;
 * then, pair by pair in file order, the two payloads straight from their Parquet pages
 * ({@link PayloadReader}) and their comparison ({@link PairRows}). At most one pair of payloads
 * (the two decoded pages) is held at a time, whatever the partition's size. With {@code readOnly}
 * it reads every payload and emits nothing: the same job's I/O floor, for the benchmark.
 *
 * <p>Accumulators: {@link #FIRST_READ_MILLIS} and {@link #LAST_READ_MILLIS} (wall clock of the first
 * and last payload read) and {@link #LAST_RESULT_MILLIS} (of the last result row), so the job's time
 * can be told apart from its start cost.
 */
public final class ComparePartitions extends RichFlatMapFunction<Partition, FirstDivergence> {
    /** Accumulator (minimum over subtasks): epoch milliseconds when the first partition started being read. */
    public static final String FIRST_READ_MILLIS = "dumpstream.compare.firstReadMillis";
    /** Accumulator (maximum over subtasks): epoch milliseconds when the last payload was read. */
    public static final String LAST_READ_MILLIS = "dumpstream.compare.lastReadMillis";
    /** Accumulator (maximum over subtasks): epoch milliseconds when the last pair's result row was emitted. */
    public static final String LAST_RESULT_MILLIS = "dumpstream.compare.lastResultMillis";
    private static final long serialVersionUID = 1L;
    /** Pairs in the order their payloads are read: the baseline's files and rows, else the candidate's. */
    private static final Comparator<SidePair> READ_ORDER = Comparator
            .comparingInt((SidePair p) -> first(p).file)
            .thenComparingLong(p -> first(p).row);

    private final String baseline;
    private final String candidate;
    private final PairKey keys;
    private final Tolerances tolerances;
    private final boolean readOnly;
    private transient PairRows rows;
    private transient PayloadReader baselinePages;
    private transient PayloadReader candidatePages;
    private transient int maxPageBytes;
    private transient Counter pairs;
    private transient Counter bytes;
    private transient LongMinimum firstRead;
    private transient LongMaximum lastRead;
    private transient LongMaximum lastResult;

    public ComparePartitions(String baseline, String candidate, PairKey keys, Tolerances tolerances, boolean readOnly) {
        this.baseline = baseline;
        this.candidate = candidate;
        this.keys = keys;
        this.tolerances = tolerances;
        this.readOnly = readOnly;
    }

    @Override
    public void open(OpenContext context) {
        AvroTrust.ensure(); // on a TaskManager of a cluster too
        rows = new PairRows(baseline, candidate, tolerances);
        baselinePages = new PayloadReader();
        candidatePages = new PayloadReader();
        // two decoded pages and their compressed reads are held at once: a page larger than an
        // eighth of the heap could not be compared anyway, and a corrupt size must not allocate it
        maxPageBytes = (int) Math.min(Integer.MAX_VALUE - 64, Runtime.getRuntime().maxMemory() / 8);
        pairs = getRuntimeContext().getMetricGroup().addGroup("dumpstream").counter("pairsCompared");
        bytes = getRuntimeContext().getMetricGroup().addGroup("dumpstream").counter("payloadBytesCompared");
        firstRead = new LongMinimum();
        lastRead = new LongMaximum();
        lastResult = new LongMaximum();
        getRuntimeContext().addAccumulator(FIRST_READ_MILLIS, firstRead);
        getRuntimeContext().addAccumulator(LAST_READ_MILLIS, lastRead);
        getRuntimeContext().addAccumulator(LAST_RESULT_MILLIS, lastResult);
    }

    @Override
    public void flatMap(Partition p, Collector<FirstDivergence> out) throws IOException {
        firstRead.add(System.currentTimeMillis());
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
                    lastRead.add(System.currentTimeMillis());
                }
                if (!readOnly) {
                    if (load) {
                        bytes.inc(b.length() + (long) c.length());
                    }
                    out.collect(rows.row(b, c, pair.note()));
                    pairs.inc();
                    lastResult.add(System.currentTimeMillis());
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
        if (baselinePages != null) {
            baselinePages.close();
            candidatePages.close();
        }
    }
}
