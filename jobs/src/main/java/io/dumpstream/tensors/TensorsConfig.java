package io.dumpstream.tensors;

import java.io.Serializable;
import java.util.List;
import java.util.Objects;

/**
 * The tensors job's settings, parsed and checked once.
 *
 * @param in          root holding the {@code snapshots} table (the decode/ingest output), local path or Flink URI
 * @param out         root of the {@code tensors} table
 * @param runs        runs to reassemble; empty for every run under {@code in/snapshots}
 * @param parallelism 0 for the environment's default
 */
public record TensorsConfig(String in, String out, List<String> runs, int parallelism) implements Serializable {

    public TensorsConfig {
        Objects.requireNonNull(in, "in");
        Objects.requireNonNull(out, "out");
        runs = List.copyOf(runs);
        if (parallelism < 0) {
            throw new IllegalArgumentException("--parallelism must be >= 0, got " + parallelism);
        }
    }
}
