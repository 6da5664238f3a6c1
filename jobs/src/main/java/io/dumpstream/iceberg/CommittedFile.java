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
    /** What the commit does with the file: {@link #APPEND}, {@link #MERGED} or {@link #MERGED_PART}. */
    public int kind;

    /** A file to append: a published file, or (with compaction) a part as soon as its checkpoint completed. */
    public static final int APPEND = 0;
    /** A compacted file: added by the rewrite of its checkpoint. */
    public static final int MERGED = 1;
    /** A part the compactor merged: removed by the rewrite of its checkpoint (its bytes stay for older snapshots). */
    public static final int MERGED_PART = 2;

    public CommittedFile() {
    }

    public CommittedFile(String bucket, String name, long size, long checkpoint) {
        this.bucket = bucket;
        this.name = name;
        this.size = size;
        this.checkpoint = checkpoint;
    }

    public CommittedFile(String bucket, String name, long size, long checkpoint, int kind) {
        this(bucket, name, size, checkpoint);
        this.kind = kind;
    }

    /** Where the file is under {@code root} (an {@link IcebergTables#location} form). */
    public String location(String root) {
        return root + "/" + bucket + "/" + name;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CommittedFile f && f.size == size && f.checkpoint == checkpoint && f.kind == kind
                && Objects.equals(f.bucket, bucket) && Objects.equals(f.name, name);
    }

    @Override
    public int hashCode() {
        return Objects.hash(bucket, name, size, checkpoint, kind);
    }

    @Override
    public String toString() {
        return (kind == MERGED ? "merged " : kind == MERGED_PART ? "merged part " : "") + bucket + "/" + name + " ("
                + size + " bytes, checkpoint " + checkpoint + ")";
    }
}
