package io.dumpstream.compare;

import org.apache.flink.api.connector.source.lib.util.IteratorSourceSplit;

import java.util.Iterator;
import java.util.List;

/**
 * A source split of {@link PartitionSource}: one {@link Partition}, emitted as one record to the
 * operator that reads and compares it. Readers ask for the next split when done (dynamic
 * assignment), so a large partition does not hold back the others.
 */
public final class PartitionSplit implements IteratorSourceSplit<Partition, Iterator<Partition>> {
    private final String id;
    private final Partition partition;

    public PartitionSplit(String id, Partition partition) {
        this.id = id;
        this.partition = partition;
    }

    public Partition partition() {
        return partition;
    }

    @Override
    public String splitId() {
        return id;
    }

    @Override
    public Iterator<Partition> getIterator() {
        return List.of(partition).iterator();
    }

    @Override
    public IteratorSourceSplit<Partition, Iterator<Partition>> getUpdatedSplitForIterator(Iterator<Partition> iterator) {
        // batch jobs restart a failed region from the start of its splits: the split never shrinks
        return this;
    }

    @Override
    public String toString() {
        return id + ": " + partition;
    }
}
