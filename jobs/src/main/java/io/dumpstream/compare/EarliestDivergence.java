package io.dumpstream.compare;

import io.dumpstream.schema.FirstDivergence;

import org.apache.flink.api.common.functions.ReduceFunction;

/** Of two non-PASS rows of a rank, the earlier in {@link PairRows#EARLIEST} order. */
public final class EarliestDivergence implements ReduceFunction<FirstDivergence> {
    private static final long serialVersionUID = 1L;

    @Override
    public FirstDivergence reduce(FirstDivergence a, FirstDivergence b) {
        return PairRows.EARLIEST.compare(a, b) <= 0 ? a : b;
    }
}
