package io.dumpstream.compare;

import java.util.Arrays;

/**
 * One unit of comparison work: the snapshot files of both runs under one partition directory
 * ({@code rank=<r>/stage=<s>}, relative to {@code snapshots/run=<run>}). Pairing keys include rank
 * and stage and the writers derive the directory from them, so every pair lies inside one
 * partition. A Flink POJO (public fields, no-arg constructor).
 */
public class Partition {
    /** The directory relative to the run directory, '/'-separated ("" for files directly in it). */
    public String dir;
    /** File URIs of both runs, and their lengths in bytes. */
    public String[] paths;
    public long[] lengths;

    public Partition() {
    }

    public Partition(String dir, String[] paths, long[] lengths) {
        this.dir = dir;
        this.paths = paths;
        this.lengths = lengths;
    }

    /** Total bytes of the partition's files (larger partitions are handed out first). */
    public long bytes() {
        long n = 0;
        for (long l : lengths) {
            n += l;
        }
        return n;
    }

    @Override
    public String toString() {
        return "partition " + dir + " (" + paths.length + " files, " + bytes() + " bytes): " + Arrays.toString(paths);
    }
}
