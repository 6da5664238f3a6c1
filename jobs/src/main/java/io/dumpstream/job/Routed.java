package io.dumpstream.job;

/** A row on its way to a table, with the Hive partition path (bucket) it lands in. */
public class Routed<T> {
    /** Relative partition path, e.g. {@code run=a/rank=0/stage=s}, already escaped. */
    public String bucket;
    public T row;
    /** Payload bytes the row carries (for size-based rolling and metrics). */
    public long bytes;

    public Routed() {
    }

    public Routed(String bucket, T row, long bytes) {
        this.bucket = bucket;
        this.row = row;
        this.bytes = bytes;
    }
}
