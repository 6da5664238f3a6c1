package io.dumpstream.compare;

import io.dumpstream.table.HivePartition;

/** Root-relative, escaped Hive partition paths of the comparison tables. */
public final class ComparePaths {
    public static final String COMPARISONS = "comparisons";
    public static final String FIRST_DIVERGENCE = "first_divergence";

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

    /** {@code snapshots/run=<run>}: every rank and stage of one run. */
    public static String snapshotsOf(String run) {
        return HivePartition.SNAPSHOTS + '/' + HivePartition.segment(HivePartition.RUN, run);
    }

    private static String pair(String baseline, String candidate) {
        return HivePartition.segment("baseline", baseline) + '/' + HivePartition.segment("candidate", candidate);
    }
}
