package io.dumpstream.compare;

import io.dumpstream.schema.TensorSnapshot;

import org.apache.flink.api.common.accumulators.LongMaximum;
import org.apache.flink.api.common.accumulators.LongMinimum;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Snapshot rows of the two runs to operands with their pairing key; rows of any other run are skipped.
 * Records the wall-clock milliseconds of the first and the last row read in the accumulators
 * {@link #FIRST_READ_MILLIS} and {@link #LAST_READ_MILLIS} (the job's time without its start cost).
 */
public final class ToOperands extends RichFlatMapFunction<TensorSnapshot, Operand> {
    /** Accumulator (minimum over subtasks): epoch milliseconds when the first snapshot row reached this function. */
    public static final String FIRST_READ_MILLIS = "dumpstream.compare.firstReadMillis";
    /** Accumulator (maximum over subtasks): epoch milliseconds when the last snapshot row reached this function. */
    public static final String LAST_READ_MILLIS = "dumpstream.compare.lastReadMillis";
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(ToOperands.class);
    private final String baseline;
    private final String candidate;
    private final PairKey keys;

    public ToOperands(String baseline, String candidate, PairKey keys) {
        this.baseline = baseline;
        this.candidate = candidate;
        this.keys = keys;
    }

    private transient LongMinimum firstRead;
    private transient LongMaximum lastRead;

    @Override
    public void open(OpenContext context) {
        firstRead = new LongMinimum();
        lastRead = new LongMaximum();
        getRuntimeContext().addAccumulator(FIRST_READ_MILLIS, firstRead);
        getRuntimeContext().addAccumulator(LAST_READ_MILLIS, lastRead);
    }

    @Override
    public void flatMap(TensorSnapshot s, Collector<Operand> out) {
        long now = System.currentTimeMillis();
        firstRead.add(now);
        lastRead.add(now);
        String run = s.getRunId();
        boolean base = baseline.equals(run);
        if (!base && !candidate.equals(run)) {
            return;
        }
        Operand o;
        try {
            o = Operand.of(s, base, keys);
        } catch (IllegalArgumentException e) {
            // a row not written by our decoders: say which and go on with the rest
            LOG.warn("skipping snapshot row of run '{}' record {}: {}", run, s.getRecordIndex(), e.getMessage());
            return;
        }
        out.collect(o);
    }
}
