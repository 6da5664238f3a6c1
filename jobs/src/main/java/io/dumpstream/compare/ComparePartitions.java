package io.dumpstream.compare;

import io.dumpstream.manifest.AvroTrust;
import io.dumpstream.schema.FirstDivergence;

import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.accumulators.LongMaximum;
import org.apache.flink.api.common.accumulators.LongMinimum;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.metrics.Counter;
import org.apache.flink.util.Collector;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.function.Consumer;

/**
 * The operator that reads and compares each {@link Partition} it receives ({@link PartitionComparer}),
 * chained to the source: payloads never leave the subtask that reads them. With {@code readOnly} it
 * reads every payload and emits nothing (the benchmark's I/O floor).
 *
 * <p>Accumulators: {@link #FIRST_READ_MILLIS} and {@link #LAST_READ_MILLIS} (wall clock when the
 * first partition started and when the last payload was read) and {@link #LAST_RESULT_MILLIS} (of
 * the last result row), so the job's time can be told apart from its start cost, and
 * {@link #CPU_NANOS} (CPU time spent in partitions), its cost on a machine shared with other work.
 */
public final class ComparePartitions extends RichFlatMapFunction<Partition, FirstDivergence> {
    /** Accumulator (minimum over subtasks): epoch milliseconds when the first partition started being read. */
    public static final String FIRST_READ_MILLIS = "dumpstream.compare.firstReadMillis";
    /** Accumulator (maximum over subtasks): epoch milliseconds when the last payload was read. */
    public static final String LAST_READ_MILLIS = "dumpstream.compare.lastReadMillis";
    /** Accumulator (maximum over subtasks): epoch milliseconds when the last pair's result row was emitted. */
    public static final String LAST_RESULT_MILLIS = "dumpstream.compare.lastResultMillis";
    /** Accumulator (sum over subtasks): CPU nanoseconds the subtasks spent reading and comparing partitions. */
    public static final String CPU_NANOS = "dumpstream.compare.cpuNanos";
    private static final long serialVersionUID = 1L;
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final String baseline;
    private final String candidate;
    private final PairKey keys;
    private final Tolerances tolerances;
    private final boolean readOnly;
    private final boolean byTensor;
    private transient PartitionComparer comparer;
    private transient TensorComparer tensors;
    private transient Counter pairs;
    private transient Counter bytes;
    private transient LongMinimum firstRead;
    private transient LongMaximum lastRead;
    private transient LongMaximum lastResult;
    private transient LongCounter cpu;

    public ComparePartitions(String baseline, String candidate, PairKey keys, Tolerances tolerances, boolean readOnly) {
        this(baseline, candidate, keys, tolerances, readOnly, false);
    }

    /** With {@code byTensor}, each partition is a rank's files and {@link TensorComparer} compares its tensors. */
    public ComparePartitions(String baseline, String candidate, PairKey keys, Tolerances tolerances, boolean readOnly,
                             boolean byTensor) {
        if (byTensor && readOnly) {
            throw new IllegalArgumentException("read-only applies to the pair comparison only");
        }
        this.byTensor = byTensor;
        this.baseline = baseline;
        this.candidate = candidate;
        this.keys = keys;
        this.tolerances = tolerances;
        this.readOnly = readOnly;
    }

    @Override
    public void open(OpenContext context) {
        AvroTrust.ensure(); // on a TaskManager of a cluster too
        if (byTensor) {
            tensors = new TensorComparer(baseline, candidate, tolerances);
        } else {
            comparer = new PartitionComparer(baseline, candidate, keys, tolerances, readOnly);
        }
        pairs = getRuntimeContext().getMetricGroup().addGroup("dumpstream").counter("pairsCompared");
        bytes = getRuntimeContext().getMetricGroup().addGroup("dumpstream").counter("payloadBytesCompared");
        firstRead = new LongMinimum();
        lastRead = new LongMaximum();
        lastResult = new LongMaximum();
        getRuntimeContext().addAccumulator(FIRST_READ_MILLIS, firstRead);
        getRuntimeContext().addAccumulator(LAST_READ_MILLIS, lastRead);
        getRuntimeContext().addAccumulator(LAST_RESULT_MILLIS, lastResult);
        cpu = new LongCounter();
        getRuntimeContext().addAccumulator(CPU_NANOS, cpu);
    }

    @Override
    public void flatMap(Partition p, Collector<FirstDivergence> out) throws IOException {
        firstRead.add(System.currentTimeMillis());
        long cpu0 = THREADS.getCurrentThreadCpuTime();
        long before = byTensor ? tensors.bytesCompared : comparer.bytesCompared;
        Consumer<FirstDivergence> emit = r -> {
            out.collect(r);
            pairs.inc();
        };
        if (byTensor) {
            tensors.compare(p, emit);
        } else {
            comparer.compare(p, emit);
        }
        bytes.inc((byTensor ? tensors.bytesCompared : comparer.bytesCompared) - before);
        long lastMillis = byTensor ? tensors.lastReadMillis : comparer.lastReadMillis;
        if (lastMillis > 0) {
            lastRead.add(lastMillis);
        }
        if (!readOnly) {
            lastResult.add(System.currentTimeMillis());
        }
        // the emitted rows' downstream work runs chained in this thread too (the sink's serialization)
        cpu.add(THREADS.getCurrentThreadCpuTime() - cpu0);
    }

    @Override
    public void close() {
        if (comparer != null) {
            comparer.close();
        }
        if (tensors != null) {
            tensors.close();
        }
    }
}
