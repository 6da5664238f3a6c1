package io.dumpstream.job;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;

/**
 * The memory a file sink subtask holds in open Parquet part files: per open part, what its writer
 * holds (deferred rows, or column writers and the unflushed row group) plus a fixed cost. The writer factory
 * reports, the rolling policy reads: both hold this one object, and since the sink is serialized
 * as one object graph, every sink subtask gets its own instance shared by its factory and policy.
 * Both run in the subtask's task thread.
 */
final class SinkBudget implements Serializable {
    private static final long serialVersionUID = 1L;
    /**
     * What an open part costs beyond what its writer reports ({@code PartWriter.memoryBytes}: its
     * rows, and its column writers once it has them): the part's 8 KiB stream buffer once it
     * writes and Flink's in-progress file and bucket state. Before part writers deferred their rows
     * this was 128 KiB, most of it the column writers (105 KiB measured per open snapshots part).
     */
    static final long PART_OVERHEAD = 16 << 10;

    /** Smallest limit chosen when the limit follows the heap. */
    static final long MIN_AUTO_LIMIT = 32L << 20;

    /** The configured limit; 0 means an eighth of the heap of the JVM the subtask runs in. */
    final long configuredBytes;
    private transient long limit;
    private transient Map<String, Long> perPart;
    private transient long total;

    SinkBudget(long configuredBytes) {
        this.configuredBytes = configuredBytes;
    }

    /** The limit in bytes, decided where the subtask runs. */
    long limitBytes() {
        if (limit == 0) {
            limit = configuredBytes > 0 ? configuredBytes
                    : Math.max(MIN_AUTO_LIMIT, HeapShare.bytes());
        }
        return limit;
    }

    private Map<String, Long> parts() {
        if (perPart == null) {
            perPart = new HashMap<>();
        }
        return perPart;
    }

    /** The open part of {@code bucket} now holds {@code bufferedBytes} in memory. */
    void update(String bucket, long bufferedBytes) {
        long v = Math.max(0, bufferedBytes) + PART_OVERHEAD;
        Long old = parts().put(bucket, v);
        total += v - (old == null ? 0 : old);
    }

    /** The part of {@code bucket} was closed. */
    void closed(String bucket) {
        Long old = parts().remove(bucket);
        if (old != null) {
            total -= old;
        }
    }

    long total() {
        return total;
    }

    long of(String bucket) {
        return parts().getOrDefault(bucket, 0L);
    }

    int openParts() {
        return parts().size();
    }

    boolean over() {
        return total > limitBytes();
    }
}
