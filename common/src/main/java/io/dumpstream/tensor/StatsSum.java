package io.dumpstream.tensor;

import io.dumpstream.decode.TensorStats;
import io.dumpstream.format.Dtype;

/**
 * Section-5 statistics over a tensor's covered elements, accumulated interval by interval through
 * {@link TensorStats#compute}: counts add, min and max fold, the finite sum and sum of squares are
 * recovered from each interval's mean and L2 norm (mean x finite, norm squared), so the result equals
 * one pass over the concatenated bytes up to float64 rounding of those sums.
 */
final class StatsSum {
    private long numel;
    private long nan;
    private long inf;
    private long zero;
    private long finite;
    private double sum;
    private double sumSq;
    private double min = Double.POSITIVE_INFINITY;
    private double max = Double.NEGATIVE_INFINITY;

    void add(Dtype dtype, byte[] b, int off, int len) {
        if (len == 0) {
            return;
        }
        TensorStats.Stats s = TensorStats.compute(dtype, b, off, len);
        numel += s.numel();
        nan += s.nanCount();
        inf += s.infCount();
        zero += s.zeroCount();
        long fin = s.numel() - s.nanCount() - s.infCount();
        if (fin > 0 && s.mean() != null) {
            finite += fin;
            sum += s.mean() * fin;
            sumSq += s.l2Norm() * s.l2Norm();
            min = Math.min(min, s.min());
            max = Math.max(max, s.max());
        }
    }

    TensorStats.Stats stats() {
        if (finite == 0) {
            return new TensorStats.Stats(numel, nan, inf, zero, null, null, null, null);
        }
        return new TensorStats.Stats(numel, nan, inf, zero, min, max, sum / finite, Math.sqrt(sumSq));
    }
}
