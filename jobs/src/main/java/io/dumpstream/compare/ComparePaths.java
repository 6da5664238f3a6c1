package io.dumpstream.compare;

import io.dumpstream.table.HivePartition;

/** Root-relative, escaped Hive partition paths of the comparison tables. */
public final class ComparePaths {
    public static final String COMPARISONS = "comparisons";
    public static final String FIRST_DIVERGENCE = "first_divergence";
    /** The tables of {@code compare --by tensor}: one row per tensor, and the earliest non-PASS tensor per rank. */
    public static final String TENSOR_COMPARISONS = "tensor_comparisons";
    public static final String TENSOR_FIRST_DIVERGENCE = "tensor_first_divergence";

    private ComparePaths() {
    }

    /** {@code comparisons/baseline=<A>/candidate=<B>/rank=<r>}. */
    public static String comparisons(String baseline, String candidate, int rank) {
        return COMPARISONS + '/' + pair(baseline, candidate) + '/' + HivePartition.segment(HivePartition.RANK, Integer.toString(rank));
    }

    /** {@code first_divergence/baseline=<A>/candidate=<B>}. */
    public static String firstDivergence(String baseline, String candidate) {
        return FIRST_DIVERGENCE + '/' + pair(baseline, candidate);
    }

    /** {@code tensor_comparisons/baseline=<A>/candidate=<B>/rank=<r>}. */
    public static String tensorComparisons(String baseline, String candidate, int rank) {
        return TENSOR_COMPARISONS + '/' + pair(baseline, candidate) + '/' + HivePartition.segment(HivePartition.RANK, Integer.toString(rank));
    }

    /** {@code tensor_first_divergence/baseline=<A>/candidate=<B>}. */
    public static String tensorFirstDivergence(String baseline, String candidate) {
        return TENSOR_FIRST_DIVERGENCE + '/' + pair(baseline, candidate);
    }

    /** {@code snapshots/run=<run>}: every rank and stage of one run. */
    public static String snapshotsOf(String run) {
        return HivePartition.SNAPSHOTS + '/' + HivePartition.segment(HivePartition.RUN, run);
    }

    private static String pair(String baseline, String candidate) {
        return HivePartition.segment("baseline", baseline) + '/' + HivePartition.segment("candidate", candidate);
    }
}
