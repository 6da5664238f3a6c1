package io.dumpstream.iceberg;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.connector.file.sink.FileSinkCommittable;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.parquet.ParquetUtil;
import org.apache.iceberg.util.SnapshotUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * Commits the files the FileSink published into one Iceberg table, exactly once: one append per
 * completed checkpoint, as Iceberg's own Flink committer does (its rule is public, its classes are
 * not, and no release supports Flink 2.2).
 *
 * <p>The FileSink's committer publishes a checkpoint's files when that checkpoint completes and then
 * passes them on (Flink's post-commit topology); they reach this operator after that checkpoint's
 * barrier, so they enter this operator's state with the next checkpoint, and are appended to the
 * table when that one completes, with the snapshot summary {@value #MAX_COMMITTED_CHECKPOINT_ID},
 * {@value #JOB_ID} and {@value #OPERATOR_ID}. A file is in exactly one of the two operators' states
 * at any checkpoint (the committer emits a file in the same step as it forgets it), so after a crash:
 * <ul>
 *   <li>a file published but not yet in this operator's state is published again (a no-op) and passed
 *       on again by the FileSink's committer when it restores;</li>
 *   <li>a file in this operator's restored state is appended on restore unless the table already has
 *       a snapshot of the restored job and this operator with a {@value #MAX_COMMITTED_CHECKPOINT_ID}
 *       at least the checkpoint that held it (the append had happened before the crash).</li>
 * </ul>
 * The job id in the summary is the one in state: a job started again from a retained checkpoint has a
 * new Flink job id, and finds the commits of the job it continues. Parallelism 1.
 */
public final class IcebergCommitter extends AbstractStreamOperator<Void>
        implements OneInputStreamOperator<CommittableMessage<FileSinkCommittable>, Void> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(IcebergCommitter.class);

    public static final String MAX_COMMITTED_CHECKPOINT_ID = "flink.max-committed-checkpoint-id";
    public static final String JOB_ID = "flink.job-id";
    public static final String OPERATOR_ID = "flink.operator-id";

    private final IcebergSettings settings;
    private final String table;
    private final String root;
    private final String operatorId;

    private transient Catalog catalog;
    private transient Table iceberg;
    private transient NameMapping mapping;
    private transient List<CommittedFile> incoming;
    private transient NavigableMap<Long, List<CommittedFile>> pending;
    private transient ListState<CommittedFile> pendingState;
    private transient ListState<String> jobState;
    private transient String jobId;
    private transient Counter commits;
    private transient Counter files;
    private transient volatile long lastCommitMillis;

    /**
     * @param root       the output root as {@link IcebergTables#location} gives it
     * @param operatorId recorded in each snapshot's summary; stable across restarts (the operator's uid)
     */
    public IcebergCommitter(IcebergSettings settings, String table, String root, String operatorId) {
        this.settings = settings;
        this.table = table;
        this.root = root;
        this.operatorId = operatorId;
    }

    @Override
    public void initializeState(StateInitializationContext context) throws Exception {
        super.initializeState(context);
        incoming = new ArrayList<>();
        pending = new TreeMap<>();
        pendingState = context.getOperatorStateStore().getListState(
                new ListStateDescriptor<>("iceberg-pending-files", TypeInformation.of(CommittedFile.class)));
        jobState = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("iceberg-job-id", Types.STRING));
        commits = getMetricGroup().counter("icebergCommits");
        files = getMetricGroup().counter("icebergCommittedFiles");
        getMetricGroup().gauge("icebergLastCommitMillis", () -> lastCommitMillis);
        jobId = getRuntimeContext().getJobInfo().getJobId().toString();
        if (!context.isRestored()) {
            return;
        }
        String restoredJob = null;
        for (String j : jobState.get()) {
            restoredJob = j;
        }
        NavigableMap<Long, List<CommittedFile>> restored = new TreeMap<>();
        for (CommittedFile f : pendingState.get()) {
            restored.computeIfAbsent(f.checkpoint, k -> new ArrayList<>()).add(f);
        }
        if (restoredJob == null || restored.isEmpty()) {
            return;
        }
        long committed = maxCommittedCheckpointId(table(), restoredJob, operatorId);
        NavigableMap<Long, List<CommittedFile>> left = restored.tailMap(committed, false);
        LOG.info("{}: restored {} checkpoint(s) of files of job {}, committed up to checkpoint {}: {} to commit",
                table, restored.size(), restoredJob, committed, left.size());
        if (!left.isEmpty()) {
            commit(left, restoredJob);
        }
    }

    @Override
    public void processElement(StreamRecord<CommittableMessage<FileSinkCommittable>> element) {
        if (element.getValue() instanceof CommittableWithLineage<FileSinkCommittable> c) {
            FileSinkCommittable f = c.getCommittable();
            if (f.hasPendingFile()) {
                // not the compacted inputs cleaned up nor in-progress files discarded: those were never published
                incoming.add(new CommittedFile(f.getBucketId(), f.getPendingFile().getPath().getName(),
                        f.getPendingFile().getSize(), -1));
            }
        }
    }

    @Override
    public void snapshotState(StateSnapshotContext context) throws Exception {
        super.snapshotState(context);
        long checkpoint = context.getCheckpointId();
        if (!incoming.isEmpty()) {
            for (CommittedFile f : incoming) {
                f.checkpoint = checkpoint;
            }
            pending.computeIfAbsent(checkpoint, k -> new ArrayList<>()).addAll(incoming);
            incoming = new ArrayList<>();
        }
        List<CommittedFile> all = new ArrayList<>();
        pending.values().forEach(all::addAll);
        pendingState.update(all);
        jobState.update(List.of(jobId));
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) throws Exception {
        super.notifyCheckpointComplete(checkpointId);
        NavigableMap<Long, List<CommittedFile>> done = pending.headMap(checkpointId, true);
        if (!done.isEmpty()) {
            commit(new TreeMap<>(done), jobId);
            done.clear();
        }
    }

    /** One append of every file of {@code byCheckpoint}, recording the largest checkpoint id. */
    private void commit(NavigableMap<Long, List<CommittedFile>> byCheckpoint, String job) {
        long t0 = System.nanoTime();
        List<CommittedFile> all = new ArrayList<>();
        byCheckpoint.values().forEach(all::addAll);
        int n = append(table(), mapping, table, root, all, byCheckpoint.lastKey(), job, operatorId);
        if (n == 0) {
            return;
        }
        lastCommitMillis = (System.nanoTime() - t0) / 1_000_000;
        commits.inc();
        files.inc(n);
        LOG.debug("{}: appended {} files up to checkpoint {} in {} ms", table, n, byCheckpoint.lastKey(),
                lastCommitMillis);
    }

    /**
     * Appends {@code files} (each once) to {@code t} in one snapshot whose summary records
     * {@code checkpoint}, {@code job} and {@code operator}; their metrics from their Parquet footers.
     * Returns the number of files appended (none: no snapshot).
     */
    static int append(Table t, NameMapping mapping, String table, String root, List<CommittedFile> files,
                      long checkpoint, String job, String operator) {
        Map<String, CommittedFile> unique = new LinkedHashMap<>();
        for (CommittedFile f : files) {
            unique.putIfAbsent(f.location(root), f);
        }
        if (unique.isEmpty()) {
            return 0;
        }
        MetricsConfig metrics = MetricsConfig.forTable(t);
        AppendFiles append = t.newAppend();
        for (Map.Entry<String, CommittedFile> e : unique.entrySet()) {
            append.appendFile(dataFile(t, mapping, table, metrics, e.getKey(), e.getValue()));
        }
        append.set(MAX_COMMITTED_CHECKPOINT_ID, Long.toString(checkpoint))
                .set(JOB_ID, job)
                .set(OPERATOR_ID, operator)
                .commit();
        return unique.size();
    }

    private static DataFile dataFile(Table t, NameMapping mapping, String table, MetricsConfig metricsConfig,
                                     String location, CommittedFile f) {
        InputFile in = t.io().newInputFile(location, f.size);
        Metrics m = ParquetUtil.fileMetrics(in, metricsConfig, mapping);
        return DataFiles.builder(t.spec())
                .withPath(location)
                .withFormat(FileFormat.PARQUET)
                .withFileSizeInBytes(f.size)
                .withPartition(IcebergTables.partition(table, f.bucket))
                .withMetrics(m)
                .build();
    }

    /**
     * The {@value #MAX_COMMITTED_CHECKPOINT_ID} of the newest snapshot that {@code job}'s {@code operator}
     * committed, walking back from the current snapshot; -1 if there is none.
     */
    public static long maxCommittedCheckpointId(Table t, String job, String operator) {
        Snapshot current = t.currentSnapshot();
        if (current == null) {
            return -1;
        }
        for (Snapshot s : SnapshotUtil.ancestorsOf(current.snapshotId(), t::snapshot)) {
            Map<String, String> summary = s.summary();
            if (job.equals(summary.get(JOB_ID)) && operator.equals(summary.get(OPERATOR_ID))) {
                String id = summary.get(MAX_COMMITTED_CHECKPOINT_ID);
                if (id != null) {
                    return Long.parseLong(id);
                }
            }
        }
        return -1;
    }

    private Table table() {
        if (iceberg == null) {
            catalog = IcebergTables.open(settings, System.getenv());
            iceberg = catalog.loadTable(IcebergTables.id(settings, table));
            mapping = IcebergTables.mapping(iceberg);
        }
        return iceberg;
    }

    @Override
    public void close() throws Exception {
        try {
            IcebergTables.close(catalog);
        } finally {
            super.close();
        }
    }
}
