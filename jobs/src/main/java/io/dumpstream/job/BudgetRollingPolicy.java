package io.dumpstream.job;

import org.apache.flink.streaming.api.functions.sink.filesystem.PartFileInfo;
import org.apache.flink.streaming.api.functions.sink.filesystem.rollingpolicies.CheckpointRollingPolicy;

import java.io.IOException;

/**
 * Parts roll on every checkpoint (files are committed with it) and, between checkpoints, whenever
 * the sink subtask's open parts hold more than their {@link SinkBudget}: the part being written
 * rolls on its next row, and parts idle for a second roll on the next bucket check. Rolling closes
 * the Parquet writer, which writes its buffered row group out and frees it. So the sink's memory is
 * bounded by the budget plus one row group per open part, however many partitions a checkpoint
 * interval touches.
 */
final class BudgetRollingPolicy<T> extends CheckpointRollingPolicy<Routed<T>, String> {
    private static final long serialVersionUID = 1L;
    static final long IDLE_MILLIS = 1000;

    private final SinkBudget budget;

    BudgetRollingPolicy(SinkBudget budget) {
        this.budget = budget;
    }

    @Override
    public boolean shouldRollOnEvent(PartFileInfo<String> part, Routed<T> element) throws IOException {
        return budget.over() && budget.of(part.getBucketId()) > SinkBudget.PART_OVERHEAD;
    }

    @Override
    public boolean shouldRollOnProcessingTime(PartFileInfo<String> part, long now) throws IOException {
        return budget.total() > budget.limitBytes() / 2 && now - part.getLastUpdateTime() >= IDLE_MILLIS;
    }
}
