package io.dumpstream.iceberg;

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
import org.apache.flink.streaming.api.connector.sink2.SupportsPostCommitTopology;
import org.apache.flink.streaming.api.connector.sink2.SupportsPreCommitTopology;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

import java.io.IOException;
import java.util.Collection;

/**
 * A file sink of one table (Flink's {@code FileSink}, or the compacting one) whose committed files are
 * then committed into the table's Iceberg twin by an {@link IcebergCommitter} (parallelism 1) in the
 * sink's post-commit topology. Writer, committer, their state and the pre-commit topology (compaction)
 * are the wrapped sink's own, so the Hive-layout files are exactly those written without Iceberg, and
 * the Iceberg table references them where they are.
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

    @Override
    public Committer<FileSinkCommittable> createCommitter(CommitterInitContext context) throws IOException {
        return committing().createCommitter(context);
    }

    @Override
    public SimpleVersionedSerializer<FileSinkCommittable> getCommittableSerializer() {
        return committing().getCommittableSerializer();
    }

    @Override
    public DataStream<CommittableMessage<FileSinkCommittable>> addPreCommitTopology(
            DataStream<CommittableMessage<FileSinkCommittable>> committables) {
        return preCommit().addPreCommitTopology(committables);
    }

    @Override
    public SimpleVersionedSerializer<FileSinkCommittable> getWriteResultSerializer() {
        return preCommit().getWriteResultSerializer();
    }

    @Override
    public void addPostCommitTopology(DataStream<CommittableMessage<FileSinkCommittable>> committed) {
        String uid = uid(table);
        committed
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
}
