package io.dumpstream.compare;

import java.io.Serializable;
import java.util.Objects;

/**
 * The comparison job's settings, parsed and checked once.
 *
 * @param root the snapshot tables' root (the {@code decode}/{@code ingest} output), local path or Flink URI
 * @param baseline baseline run id
 * @param candidate candidate run id
 * @param out output root of the comparisons and first_divergence tables
 * @param keys the pairing key options
 * @param tolerances the tolerance rules
 * @param parallelism 0 for the environment's default
 * @param byTensor {@code --by tensor}: the baseline is a reference run, candidate tensors are reassembled from their views
 */
public record CompareConfig(String root, String baseline, String candidate, String out, PairKey keys, Tolerances tolerances,
                            int parallelism, boolean byTensor) implements Serializable {

    /** A pair comparison ({@code --by pair}). */
    public CompareConfig(String root, String baseline, String candidate, String out, PairKey keys, Tolerances tolerances,
                         int parallelism) {
        this(root, baseline, candidate, out, keys, tolerances, parallelism, false);
    }

    public CompareConfig {
        Objects.requireNonNull(root, "root");
        Objects.requireNonNull(baseline, "baseline");
        Objects.requireNonNull(candidate, "candidate");
        Objects.requireNonNull(out, "out");
        Objects.requireNonNull(keys, "keys");
        Objects.requireNonNull(tolerances, "tolerances");
        if (baseline.equals(candidate)) {
            throw new IllegalArgumentException("--baseline and --candidate name the same run '" + baseline + "'");
        }
        if (parallelism < 0) {
            throw new IllegalArgumentException("--parallelism must be >= 0, got " + parallelism);
        }
    }
}
