package io.dumpstream.iceberg;

import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.StatefulSinkWriter;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.SupportsWriterState;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.connector.file.sink.FileSinkCommittable;
import org.apache.flink.connector.file.sink.writer.FileWriterBucketState;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.apache.flink.streaming.api.connector.sink2.SupportsPostCommitTopology;
import org.apache.flink.streaming.api.connector.sink2.SupportsPreCommitTopology;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;

import io.dumpstream.job.CompactingFileSink;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * A file sink of one table (Flink's {@code FileSink}, or the compacting one) whose committed files are
 * then committed into the table's Iceberg twin by an {@link IcebergCommitter} (parallelism 1) in the
 * sink's post-commit topology. Writer, committer, their state and the pre-commit topology (compaction)
 * are the wrapped sink's own, so the Hive-layout files are exactly those written without Iceberg, and
 * the Iceberg table references them where they are.
 *
 * <p>With compaction: a {@link PartPublisher} before the compaction coordinator publishes each
 * checkpoint's parts (hidden names) when it completes and hands them to the committer, which appends
 * them; the FileSink's committer publishes the merged files and the committer replaces the merged parts
 * with them in one rewrite. The FileSink's committer no longer deletes the merged parts: older snapshots
 * still reference them; snapshot expiry deletes them ({@link IcebergMaintenance}).
 */
public final class IcebergFileSink<IN> implements Sink<IN>, SupportsWriterState<IN, FileWriterBucketState>,
        SupportsWriterState.WithCompatibleState, SupportsCommitter<FileSinkCommittable>,
        SupportsPreCommitTopology<FileSinkCommittable, FileSinkCommittable>,
        SupportsPostCommitTopology<FileSinkCommittable> {
    private static final long serialVersionUID = 1L;

    private final Sink<IN> files;
    private final IcebergSettings settings;
    private final String table;
    private final String root;
    /** The published parts' stream, from the pre-commit topology to the post-commit one (compaction only). */
    private transient DataStream<CommittedFile> parts;

    /**
     * @param files a {@code FileSink} or {@code CompactingFileSink} over the output root
     * @param root  the output root as {@link IcebergTables#location} gives it
     */
    public IcebergFileSink(Sink<IN> files, IcebergSettings settings, String table, String root) {
        if (!(files instanceof SupportsWriterState<?, ?> && files instanceof SupportsCommitter<?>
                && files instanceof SupportsPreCommitTopology<?, ?>
                && files instanceof SupportsWriterState.WithCompatibleState)) {
            throw new IllegalArgumentException("not a file sink: " + files.getClass().getName());
        }
        this.files = files;
        this.settings = settings;
        this.table = table;
        this.root = root;
    }

    /**
     * {@code files}, its committed files also committed into the Iceberg table {@code table}; or
     * {@code files} itself when {@code settings} is null (Iceberg off).
     *
     * @param out the output root (a local path or URI)
     */
    public static <IN> Sink<IN> wrap(Sink<IN> files, IcebergSettings settings, String table, String out) {
        return settings == null ? files : new IcebergFileSink<>(files, settings, table, IcebergTables.location(out));
    }

    /**
     * Opens the catalog and creates the namespace and tables if missing, before the job starts: a
     * catalog that cannot be reached or used stops it with one line naming it (the cause's message,
     * never a credential). Nothing when {@code settings} is null.
     */
    public static void prepare(IcebergSettings settings, String out) {
        if (settings == null) {
            return;
        }
        org.apache.iceberg.catalog.Catalog catalog;
        try {
            catalog = IcebergTables.open(settings, System.getenv());
        } catch (RuntimeException e) {
            throw new io.dumpstream.options.UsageException("--iceberg-catalog "
                    + IcebergSettings.masked(settings.catalogUri) + ": cannot open the catalog (user from $"
                    + IcebergSettings.USER_ENV + ", password from $" + IcebergSettings.PASSWORD_ENV + "): "
                    + rootMessage(e));
        }
        try {
            IcebergTables.ensure(catalog, settings, IcebergTables.location(out));
        } catch (RuntimeException e) {
            throw new io.dumpstream.options.UsageException("--iceberg-catalog "
                    + IcebergSettings.masked(settings.catalogUri) + ", namespace " + settings.namespace
                    + ": cannot create or update the tables: " + rootMessage(e));
        } finally {
            IcebergTables.close(catalog);
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    }

    /** The uid of the committer operator of {@code table} (it names the state and the snapshots' operator id). */
    public static String uid(String table) {
        return "iceberg-commit-" + table;
    }

    @SuppressWarnings("unchecked")
    private SupportsWriterState<IN, FileWriterBucketState> stateful() {
        return (SupportsWriterState<IN, FileWriterBucketState>) files;
    }

    @SuppressWarnings("unchecked")
    private SupportsCommitter<FileSinkCommittable> committing() {
        return (SupportsCommitter<FileSinkCommittable>) files;
    }

    @SuppressWarnings("unchecked")
    private SupportsPreCommitTopology<FileSinkCommittable, FileSinkCommittable> preCommit() {
        return (SupportsPreCommitTopology<FileSinkCommittable, FileSinkCommittable>) files;
    }

    @Override
    public SinkWriter<IN> createWriter(WriterInitContext context) throws IOException {
        return files.createWriter(context);
    }

    @Override
    public StatefulSinkWriter<IN, FileWriterBucketState> restoreWriter(WriterInitContext context,
                                                                      Collection<FileWriterBucketState> state)
            throws IOException {
        return stateful().restoreWriter(context, state);
    }

    @Override
    public SimpleVersionedSerializer<FileWriterBucketState> getWriterStateSerializer() {
        return stateful().getWriterStateSerializer();
    }

    @Override
    public Collection<String> getCompatibleWriterStateNames() {
        return ((SupportsWriterState.WithCompatibleState) files).getCompatibleWriterStateNames();
    }

    private boolean compacting() {
        return files instanceof CompactingFileSink<?>;
    }

    @Override
    public Committer<FileSinkCommittable> createCommitter(CommitterInitContext context) throws IOException {
        Committer<FileSinkCommittable> committer = committing().createCommitter(context);
        return compacting() ? new KeepMergedParts(committer) : committer;
    }

    /**
     * The FileSink's committer but for the merged parts it would delete: the Iceberg table's snapshots before
     * the rewrite reference them. Their requests count as done and reach the post-commit topology.
     */
    static final class KeepMergedParts implements Committer<FileSinkCommittable> {
        private final Committer<FileSinkCommittable> committer;

        KeepMergedParts(Committer<FileSinkCommittable> committer) {
            this.committer = committer;
        }

        @Override
        public void commit(Collection<CommitRequest<FileSinkCommittable>> requests)
                throws IOException, InterruptedException {
            List<CommitRequest<FileSinkCommittable>> rest = new ArrayList<>(requests.size());
            for (CommitRequest<FileSinkCommittable> r : requests) {
                if (!r.getCommittable().hasCompactedFileToCleanup()) {
                    rest.add(r);
                }
            }
            committer.commit(rest);
        }

        @Override
        public void close() throws Exception {
            committer.close();
        }
    }

    @Override
    public SimpleVersionedSerializer<FileSinkCommittable> getCommittableSerializer() {
        return committing().getCommittableSerializer();
    }

    @Override
    public DataStream<CommittableMessage<FileSinkCommittable>> addPreCommitTopology(
            DataStream<CommittableMessage<FileSinkCommittable>> committables) {
        if (!compacting()) {
            return preCommit().addPreCommitTopology(committables);
        }
        SingleOutputStreamOperator<CommittableMessage<FileSinkCommittable>> tapped = committables
                .transform("Iceberg parts " + table, committables.getType(),
                        new PartPublisher((CompactingFileSink<?>) files))
                .uid(uid(table) + "-parts")
                .setParallelism(committables.getParallelism());
        parts = tapped.getSideOutput(PartPublisher.PARTS);
        return preCommit().addPreCommitTopology(tapped);
    }

    @Override
    public SimpleVersionedSerializer<FileSinkCommittable> getWriteResultSerializer() {
        return preCommit().getWriteResultSerializer();
    }

    @Override
    public void addPostCommitTopology(DataStream<CommittableMessage<FileSinkCommittable>> committed) {
        String uid = uid(table);
        DataStream<CommittedFile> toCommit = committed
                .flatMap(new Published(compacting()), TypeInformation.of(CommittedFile.class))
                .uid(uid + "-published")
                .name("Iceberg files " + table)
                .setParallelism(committed.getParallelism());
        if (parts != null) {
            toCommit = toCommit.union(parts);
        }
        toCommit
                .global()
                .transform("Iceberg commit " + table, Types.VOID, new IcebergCommitter(settings, table, root, uid))
                .uid(uid)
                .setParallelism(1)
                .setMaxParallelism(1)
                .sinkTo(new DiscardingSink<>())
                .uid(uid + "-end")
                .name("Iceberg commit " + table + " (end)")
                .setParallelism(1);
    }

    /**
     * What the FileSink's committer published, for the Iceberg committer: without compaction each file, to
     * append; with it, the merged files and the merged parts of the rewrite. Not in-progress files
     * discarded: those were never published.
     */
    static final class Published implements FlatMapFunction<CommittableMessage<FileSinkCommittable>, CommittedFile> {
        private static final long serialVersionUID = 1L;
        private final boolean compacting;

        Published(boolean compacting) {
            this.compacting = compacting;
        }

        @Override
        public void flatMap(CommittableMessage<FileSinkCommittable> message, Collector<CommittedFile> out) {
            if (!(message instanceof CommittableWithLineage<FileSinkCommittable> c)) {
                return;
            }
            FileSinkCommittable f = c.getCommittable();
            if (f.hasPendingFile() && compacting && f.getPendingFile().getPath().getName().startsWith(".")) {
                // a part passed through uncompacted: the PartPublisher published it and handed it on
                return;
            }
            if (f.hasPendingFile()) {
                out.collect(new CommittedFile(f.getBucketId(), f.getPendingFile().getPath().getName(),
                        f.getPendingFile().getSize(), -1, compacting ? CommittedFile.MERGED : CommittedFile.APPEND));
            } else if (compacting && f.hasCompactedFileToCleanup()) {
                out.collect(new CommittedFile(f.getBucketId(), f.getCompactedFileToCleanup().getName(), -1, -1,
                        CommittedFile.MERGED_PART));
            }
        }
    }
}
