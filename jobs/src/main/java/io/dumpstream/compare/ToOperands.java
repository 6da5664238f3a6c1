package io.dumpstream.compare;

import io.dumpstream.schema.TensorSnapshot;

import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.util.Collector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Snapshot rows of the two runs to operands with their pairing key; rows of any other run are skipped. */
public final class ToOperands implements FlatMapFunction<TensorSnapshot, Operand> {
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

    @Override
    public void flatMap(TensorSnapshot s, Collector<Operand> out) {
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
