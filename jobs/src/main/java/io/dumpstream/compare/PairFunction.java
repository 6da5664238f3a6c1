package io.dumpstream.compare;

import io.dumpstream.manifest.AvroTrust;
import io.dumpstream.schema.FirstDivergence;

import org.apache.flink.api.common.accumulators.LongMaximum;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.util.Collector;

/**
 * All sides of one key (a global window that fires at the end of input) to its result rows. Records the
 * wall-clock milliseconds of the last result emitted in the accumulator {@link #LAST_RESULT_MILLIS}.
 */
public final class PairFunction extends ProcessWindowFunction<Operand, FirstDivergence, String, GlobalWindow> {
    /** Accumulator (maximum over subtasks): epoch milliseconds when the last pair's result rows were emitted. */
    public static final String LAST_RESULT_MILLIS = "dumpstream.compare.lastResultMillis";
    private static final long serialVersionUID = 1L;
    private final String baseline;
    private final String candidate;
    private final Tolerances tolerances;
    private transient PairRows rows;
    private transient Counter pairs;
    private transient Counter bytes;
    private transient LongMaximum lastResult;

    public PairFunction(String baseline, String candidate, Tolerances tolerances) {
        this.baseline = baseline;
        this.candidate = candidate;
        this.tolerances = tolerances;
    }

    @Override
    public void open(org.apache.flink.api.common.functions.OpenContext context) {
        AvroTrust.ensure(); // on a TaskManager of a cluster too
        rows = new PairRows(baseline, candidate, tolerances);
        pairs = getRuntimeContext().getMetricGroup().addGroup("dumpstream").counter("pairsCompared");
        bytes = getRuntimeContext().getMetricGroup().addGroup("dumpstream").counter("payloadBytesCompared");
        lastResult = new LongMaximum();
        getRuntimeContext().addAccumulator(LAST_RESULT_MILLIS, lastResult);
    }

    @Override
    public void process(String key, Context context, Iterable<Operand> sides, Collector<FirstDivergence> out) {
        for (Operand o : sides) {
            bytes.inc(o.data.length);
        }
        for (FirstDivergence r : rows.rows(sides)) {
            pairs.inc();
            out.collect(r);
        }
        lastResult.add(System.currentTimeMillis());
    }
}
