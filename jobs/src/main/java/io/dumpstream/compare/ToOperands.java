package io.dumpstream.compare;

import io.dumpstream.schema.TensorSnapshot;

import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.util.Collector;

/** Snapshot rows of the two runs to operands with their pairing key; rows of any other run are skipped. */
public final class ToOperands implements FlatMapFunction<TensorSnapshot, Operand> {
    private static final long serialVersionUID = 1L;
    private final String baseline;
    private final String candidate;
    private final PairKey keys;

    public ToOperands(String baseline, String candidate, PairKey keys) {
        this.baseline = baseline;
        this.candidate = candidate;
        this.keys = keys;
    }

    @Override
    public void flatMap(TensorSnapshot s, Collector<Operand> out) {
        String run = s.getRunId();
        if (baseline.equals(run)) {
            out.collect(Operand.of(s, true, keys));
        } else if (candidate.equals(run)) {
            out.collect(Operand.of(s, false, keys));
        }
    }
}
