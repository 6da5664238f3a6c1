package io.dumpstream.iceberg;

import java.util.Objects;

/**
 * A file the FileSink committed (published under its final name), waiting for its Iceberg commit: the
 * committer's state holds these (a Flink POJO). The file's location is the output root, the bucket
 * and the name: the bucket travels as a plain string, whereas Flink's committable serializer quotes
 * the '%' of a Hive-escaped path once more per hop; the name has no '%'.
 */
public class CommittedFile {
    /** Relative partition path, e.g. {@code snapshots/run=a%2Fb/rank=0/stage=s}. */
    public String bucket;
    /** File name, e.g. {@code part-3f2c...-0.parquet}. */
    public String name;
    public long size;
    /** The committer's checkpoint whose state first held the file (its Iceberg commit records it). */
    public long checkpoint;

    public CommittedFile() {
    }

    public CommittedFile(String bucket, String name, long size, long checkpoint) {
        this.bucket = bucket;
        this.name = name;
        this.size = size;
        this.checkpoint = checkpoint;
    }

    /** Where the file is under {@code root} (an {@link IcebergTables#location} form). */
    public String location(String root) {
        return root + "/" + bucket + "/" + name;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CommittedFile f && f.size == size && f.checkpoint == checkpoint
                && Objects.equals(f.bucket, bucket) && Objects.equals(f.name, name);
    }

    @Override
    public int hashCode() {
        return Objects.hash(bucket, name, size, checkpoint);
    }

    @Override
    public String toString() {
        return bucket + "/" + name + " (" + size + " bytes, checkpoint " + checkpoint + ")";
    }
}
