package io.dumpstream.tensors;

import io.dumpstream.compare.Partition;
import io.dumpstream.compare.PartitionSplit;
import io.dumpstream.compare.PartitionSplitSerializer;

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
 * A bounded source of the {@link TensorGroups} of some runs: the enumerator lists them when the job
 * starts and hands one to a reader each time it asks (dynamic assignment; the compare job's splits
 * and serializers); each group is one record. Only file names and lengths travel.
 */
public final class TensorSource implements Source<Partition, PartitionSplit, Collection<PartitionSplit>>,
        ResultTypeQueryable<Partition> {
    private static final long serialVersionUID = 1L;
    /** {@code snapshots/run=<run>} directory URIs. */
    private final List<String> runDirs;

    public TensorSource(List<String> runDirs) {
        this.runDirs = List.copyOf(runDirs);
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
        for (Partition p : TensorGroups.list(dirs)) {
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
