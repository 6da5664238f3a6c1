package io.dumpstream.job;

import org.apache.flink.api.common.serialization.BulkWriter;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.SupportsWriterState;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.connector.file.sink.FileSink;
import org.apache.flink.connector.file.sink.FileSinkCommittable;
import org.apache.flink.connector.file.sink.compactor.FileCompactStrategy;
import org.apache.flink.connector.file.sink.compactor.FileCompactor;
import org.apache.flink.connector.file.sink.compactor.operator.CompactCoordinatorFactory;
import org.apache.flink.connector.file.sink.compactor.operator.CompactorOperatorFactory;
import org.apache.flink.connector.file.sink.compactor.operator.CompactorRequest;
import org.apache.flink.connector.file.sink.compactor.operator.CompactorRequestTypeInfo;
import org.apache.flink.connector.file.sink.writer.FileWriterBucketState;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.RecoverableWriter;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessageTypeInfo;
import org.apache.flink.streaming.api.connector.sink2.SupportsPreCommitTopology;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.sink.filesystem.BucketWriter;
import org.apache.flink.streaming.api.functions.sink.filesystem.BulkBucketWriter;
import org.apache.flink.util.function.SerializableSupplierWithException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collection;

/**
 * Flink's {@link FileSink} with its compaction topology (coordinator, compactor) built here so that
 * every committable crossing an operator or a checkpoint goes through {@link LosslessCommittableSerializer}.
 *
 * <p>Why: Flink 2.2's committable serializers write a pending file's path (and a compacted input to
 * delete) as {@code path.toUri().toString()} and read it back with {@code new Path(String)}, which
 * quotes '%' once more: a Hive-escaped partition such as {@code run=a%2Fb} becomes {@code run=a%252Fb}
 * after one hop, and the compactor reads, writes and deletes in a directory that does not exist.
 * Writer, committer and writer state are {@code FileSink}'s own (built with {@code enableCompact}, so
 * its parts are hidden until compacted); only the serializer and the wiring around it are ours.
 */
public final class CompactingFileSink<IN> implements Sink<IN>, SupportsWriterState<IN, FileWriterBucketState>,
        SupportsWriterState.WithCompatibleState, SupportsCommitter<FileSinkCommittable>,
        SupportsPreCommitTopology<FileSinkCommittable, FileSinkCommittable> {
    private static final long serialVersionUID = 1L;

    private final FileSink<IN> sink;
    private final Path root;
    private final BulkWriter.Factory<IN> writerFactory;
    private final FileCompactStrategy strategy;
    private final FileCompactor compactor;
    private final String uid;

    /**
     * @param sink a {@code FileSink} over {@code root} and {@code writerFactory}, built with
     *             {@code enableCompact(strategy, compactor)}
     * @param uid  prefix of the compaction operators' uids (keep it stable: it names their state)
     */
    public CompactingFileSink(FileSink<IN> sink, Path root, BulkWriter.Factory<IN> writerFactory,
                              FileCompactStrategy strategy, FileCompactor compactor, String uid) {
        this.sink = sink;
        this.root = root;
        this.writerFactory = writerFactory;
        this.strategy = strategy;
        this.compactor = compactor;
        this.uid = uid;
    }

    /**
     * The compactor's bucket writer: it opens the compacted file and recovers the parts to merge. Its
     * bulk writer writes nothing: Flink opens a compacting file of a bulk format as an in-progress part
     * through the format's factory, so with the table's factory our part writer would put its magic and
     * an empty footer after the merged file the compactor streams in (readers then saw a file of 0 rows).
     */
    public BucketWriter<IN, String> bucketWriter() throws IOException {
        return new BulkBucketWriter<>(recoverableWriter(), new Passthrough<>());
    }

    /** A bulk writer that leaves the stream to whoever writes it (the compactor). */
    static final class Passthrough<IN> implements BulkWriter.Factory<IN> {
        private static final long serialVersionUID = 1L;

        @Override
        public BulkWriter<IN> create(org.apache.flink.core.fs.FSDataOutputStream out) {
            return new BulkWriter<>() {
                @Override
                public void addElement(IN element) {
                    throw new UnsupportedOperationException("a compacted file is written by the compactor only");
                }

                @Override
                public void flush() {
                }

                @Override
                public void finish() {
                }
            };
        }
    }

    private RecoverableWriter recoverableWriter() throws IOException {
        return FileSystem.get(root.toUri()).createRecoverableWriter();
    }

    @Override
    public SinkWriter<IN> createWriter(WriterInitContext context) throws IOException {
        return sink.createWriter(context);
    }

    @Override
    public StatefulSinkWriter<IN, FileWriterBucketState> restoreWriter(WriterInitContext context,
                                                                      Collection<FileWriterBucketState> state)
            throws IOException {
        return sink.restoreWriter(context, state);
    }

    @Override
    public SimpleVersionedSerializer<FileWriterBucketState> getWriterStateSerializer() {
        return sink.getWriterStateSerializer();
    }

    @Override
    public Collection<String> getCompatibleWriterStateNames() {
        return sink.getCompatibleWriterStateNames();
    }

    @Override
    public Committer<FileSinkCommittable> createCommitter(CommitterInitContext context) throws IOException {
        return sink.createCommitter(context);
    }

    @Override
    public SimpleVersionedSerializer<FileSinkCommittable> getCommittableSerializer() {
        try {
            RecoverableWriter w = recoverableWriter();
            return new LosslessCommittableSerializer(sink.getCommittableSerializer(),
                    new BulkBucketWriter<>(w, writerFactory), w);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a recoverable writer on " + root, e);
        }
    }

    @Override
    public SimpleVersionedSerializer<FileSinkCommittable> getWriteResultSerializer() {
        return getCommittableSerializer();
    }

    @Override
    public DataStream<CommittableMessage<FileSinkCommittable>> addPreCommitTopology(
            DataStream<CommittableMessage<FileSinkCommittable>> written) {
        SerializableSupplierWithException<SimpleVersionedSerializer<FileSinkCommittable>, IOException> serializer =
                this::getCommittableSerializer;
        SerializableSupplierWithException<BucketWriter<?, String>, IOException> writer = this::bucketWriter;
        SingleOutputStreamOperator<CompactorRequest> requests = written.rebalance()
                .transform("compaction coordinator", new CompactorRequestTypeInfo(serializer),
                        new CompactCoordinatorFactory(strategy, serializer))
                .setParallelism(1)
                .setMaxParallelism(1)
                .uid(uid + "-compact-coordinator");
        return requests
                .transform("compactor", CommittableMessageTypeInfo.of(this::getCommittableSerializer),
                        new CompactorOperatorFactory(strategy, compactor, serializer, writer))
                .setParallelism(written.getParallelism())
                .uid(uid + "-compactor");
    }
}
