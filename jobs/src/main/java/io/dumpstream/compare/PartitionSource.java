package io.dumpstream.compare;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.connector.source.lib.util.IteratorSourceEnumerator;
import org.apache.flink.api.connector.source.lib.util.IteratorSourceReader;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.io.SimpleVersionedSerializer;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * A bounded FLIP-27 source of the {@link Partition}s of two runs' snapshot tables: the enumerator
 * lists the partition directories when the job starts and hands one partition to a reader each
 * time it asks (so parallel subtasks balance themselves); each partition is emitted as one record.
 * Only file names and lengths travel; the files are read by the operator the record reaches.
 */
public final class PartitionSource implements Source<Partition, PartitionSplit, Collection<PartitionSplit>>,
        ResultTypeQueryable<Partition> {
    private static final long serialVersionUID = 1L;
    /** {@code snapshots/run=<run>} directory URIs of the runs. */
    private final List<String> runDirs;
    /** One partition per rank ({@link SnapshotPartitions#byRank}) instead of per stage directory. */
    private final boolean byRank;

    public PartitionSource(List<String> runDirs) {
        this(runDirs, false);
    }

    public PartitionSource(List<String> runDirs, boolean byRank) {
        this.runDirs = List.copyOf(runDirs);
        this.byRank = byRank;
    }

    @Override
    public Boundedness getBoundedness() {
        return Boundedness.BOUNDED;
    }

    @Override
    public SourceReader<Partition, PartitionSplit> createReader(SourceReaderContext context) {
        return new IteratorSourceReader<>(context);
    }

    @Override
    public SplitEnumerator<PartitionSplit, Collection<PartitionSplit>> createEnumerator(SplitEnumeratorContext<PartitionSplit> context)
            throws Exception {
        List<Path> dirs = new ArrayList<>();
        for (String d : runDirs) {
            dirs.add(new Path(d));
        }
        List<PartitionSplit> splits = new ArrayList<>();
        List<Partition> partitions = SnapshotPartitions.list(dirs);
        for (Partition p : byRank ? SnapshotPartitions.byRank(partitions) : partitions) {
            splits.add(new PartitionSplit(Integer.toString(splits.size()), p));
        }
        return new IteratorSourceEnumerator<>(context, splits);
    }

    @Override
    public SplitEnumerator<PartitionSplit, Collection<PartitionSplit>> restoreEnumerator(
            SplitEnumeratorContext<PartitionSplit> context, Collection<PartitionSplit> pending) {
        return new IteratorSourceEnumerator<>(context, pending);
    }

    @Override
    public SimpleVersionedSerializer<PartitionSplit> getSplitSerializer() {
        return PartitionSplitSerializer.splits();
    }

    @Override
    public SimpleVersionedSerializer<Collection<PartitionSplit>> getEnumeratorCheckpointSerializer() {
        return PartitionSplitSerializer.pending();
    }

    @Override
    public TypeInformation<Partition> getProducedType() {
        return TypeInformation.of(Partition.class);
    }
}
