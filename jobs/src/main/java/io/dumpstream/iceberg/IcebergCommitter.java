package io.dumpstream.iceberg;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.MetricsConfig;
import org.apache.iceberg.RewriteFiles;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.InputFile;
import org.apache.iceberg.mapping.NameMapping;
import org.apache.iceberg.parquet.ParquetUtil;
import org.apache.iceberg.util.SnapshotUtil;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
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
 *
 * <p>With compaction, the parts come from the {@link PartPublisher} (appended as above), and what the
 * FileSink's committer publishes is merged files and the parts they merged: those of a checkpoint are
 * one rewrite ({@code replace} snapshot: the merged parts out, the merged files in), after that
 * checkpoint's append, recorded with the operator id {@code <uid>}{@value #REWRITE_SUFFIX} so that a restart
 * repeats neither. A rewrite whose parts are no longer all in the table, or whose merged files already
 * are, is skipped and logged. The merged parts' bytes stay for the snapshots before the rewrite (time
 * travel); snapshot expiry deletes them once no snapshot left references them.
 */
public final class IcebergCommitter extends AbstractStreamOperator<Void>
        implements OneInputStreamOperator<CommittedFile, Void> {
    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(IcebergCommitter.class);

    public static final String MAX_COMMITTED_CHECKPOINT_ID = "flink.max-committed-checkpoint-id";
    public static final String JOB_ID = "flink.job-id";
    public static final String OPERATOR_ID = "flink.operator-id";
    /** Appended to the operator id in the summary of a rewrite (compaction) snapshot. */
    public static final String REWRITE_SUFFIX = "/rewrite";
    /**
     * {@link #rewrite}'s answer when some parts are not in the table and none of the merged files is: the
     * parts' append may still be on its way (the {@link PartPublisher} hands a checkpoint's parts on when it
     * hears the checkpoint completed, and that notice can reach it after the merged files reached this
     * operator), so the caller tries again at its next checkpoints before it gives the rewrite up.
     */
    static final int PARTS_NOT_YET = -1;
    /** Checkpoints a rewrite waits for its parts' append before it is skipped (rows stay right; the merge is lost). */
    static final int REWRITE_ATTEMPTS = 5;

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
    private transient Counter rewrites;
    private transient volatile long lastCommitMillis;
    /** Attempts so far of rewrites waiting for their parts, by the first merged file's name (not in state). */
    private transient Map<String, Integer> waitingRewrites;

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
        waitingRewrites = new HashMap<>();
        pendingState = context.getOperatorStateStore().getListState(
                new ListStateDescriptor<>("iceberg-pending-files", TypeInformation.of(CommittedFile.class)));
        jobState = context.getOperatorStateStore().getListState(new ListStateDescriptor<>("iceberg-job-id", Types.STRING));
        commits = getMetricGroup().counter("icebergCommits");
        files = getMetricGroup().counter("icebergCommittedFiles");
        rewrites = getMetricGroup().counter("icebergRewrites");
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
        long appended = maxCommittedCheckpointId(table(), restoredJob, operatorId);
        long rewritten = maxCommittedCheckpointId(table(), restoredJob, operatorId + REWRITE_SUFFIX);
        NavigableMap<Long, List<CommittedFile>> left = new TreeMap<>();
        for (Map.Entry<Long, List<CommittedFile>> e : restored.entrySet()) {
            for (CommittedFile f : e.getValue()) {
                if (e.getKey() > (f.kind == CommittedFile.APPEND ? appended : rewritten)) {
                    left.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).add(f);
                }
            }
        }
        LOG.info("{}: restored {} checkpoint(s) of files of job {}, appended up to checkpoint {}, rewritten up to {}:"
                + " {} to commit", table, restored.size(), restoredJob, appended, rewritten, left.size());
        if (!left.isEmpty()) {
            commit(left, restoredJob);
        }
    }

    @Override
    public void processElement(StreamRecord<CommittedFile> element) {
        incoming.add(element.getValue());
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

    /**
     * One append of every file to append of {@code byCheckpoint}, recording the largest checkpoint id of
     * those; then one rewrite of the merged files and parts, recording the largest checkpoint id of those.
     */
    private void commit(NavigableMap<Long, List<CommittedFile>> byCheckpoint, String job) {
        long t0 = System.nanoTime();
        List<CommittedFile> appends = new ArrayList<>();
        List<CommittedFile> merged = new ArrayList<>();
        List<CommittedFile> mergedParts = new ArrayList<>();
        long lastAppend = -1;
        long lastRewrite = -1;
        for (Map.Entry<Long, List<CommittedFile>> e : byCheckpoint.entrySet()) {
            for (CommittedFile f : e.getValue()) {
                switch (f.kind) {
                    case CommittedFile.APPEND -> {
                        appends.add(f);
                        lastAppend = e.getKey();
                    }
                    case CommittedFile.MERGED -> {
                        merged.add(f);
                        lastRewrite = e.getKey();
                    }
                    case CommittedFile.MERGED_PART -> {
                        mergedParts.add(f);
                        lastRewrite = e.getKey();
                    }
                    default -> throw new IllegalStateException("unknown kind of file " + f.kind + ": " + f);
                }
            }
        }
        int n = appends.isEmpty() ? 0 : append(table(), mapping, table, root, appends, lastAppend, job, operatorId);
        int r = lastRewrite < 0 ? 0
                : rewrite(table(), mapping, table, root, mergedParts, merged, lastRewrite, job, operatorId + REWRITE_SUFFIX);
        String key = !merged.isEmpty() ? merged.get(0).name : !mergedParts.isEmpty() ? mergedParts.get(0).name : "";
        if (r == PARTS_NOT_YET) {
            r = 0;
            int attempts = waitingRewrites.merge(key, 1, Integer::sum);
            if (attempts < REWRITE_ATTEMPTS) {
                // again with the next checkpoint's files, after their append
                incoming.addAll(merged);
                incoming.addAll(mergedParts);
                LOG.info("{}: rewrite of checkpoint {} waits for its parts' append (attempt {} of {})", table,
                        lastRewrite, attempts, REWRITE_ATTEMPTS);
            } else {
                waitingRewrites.remove(key);
                LOG.warn("{}: rewrite of checkpoint {} skipped after {} checkpoints: its parts are not in the table"
                        + " (first merged file {}); the rows stay right, the merge is not in the table", table,
                        lastRewrite, attempts, key);
            }
        } else {
            waitingRewrites.remove(key);
        }
        if (n == 0 && r == 0) {
            return;
        }
        lastCommitMillis = (System.nanoTime() - t0) / 1_000_000;
        commits.inc();
        files.inc(n);
        rewrites.inc(r > 0 ? 1 : 0);
        LOG.debug("{}: appended {} files, rewrote {} up to checkpoint {} in {} ms", table, n, r, byCheckpoint.lastKey(),
                lastCommitMillis);
    }

    /**
     * Replaces {@code parts} with {@code merged} in {@code t} in one rewrite whose summary records
     * {@code checkpoint}, {@code job} and {@code operator}, validated from the snapshot that added the
     * oldest of the parts. Skipped (0) when the merged files are already in the table (the rewrite
     * happened); {@link #PARTS_NOT_YET} when none of them is and some part is not (its append may still
     * come; if it never does, adding the merged file would show the other parts' rows twice). Returns the
     * number of files the rewrite added.
     */
    static int rewrite(Table t, NameMapping mapping, String table, String root, List<CommittedFile> parts,
                       List<CommittedFile> merged, long checkpoint, String job, String operator) {
        Set<String> out = new HashSet<>();
        parts.forEach(f -> out.add(f.location(root)));
        Map<String, CommittedFile> in = new LinkedHashMap<>();
        merged.forEach(f -> in.putIfAbsent(f.location(root), f));
        Set<String> buckets = new HashSet<>();
        parts.forEach(f -> buckets.add(f.bucket));
        merged.forEach(f -> buckets.add(f.bucket));
        Map<String, DataFile> live = liveFiles(t, table, buckets);
        List<String> already = in.keySet().stream().filter(live::containsKey).toList();
        List<String> gone = out.stream().filter(l -> !live.containsKey(l)).sorted().toList();
        if (already.isEmpty() && !gone.isEmpty() && !in.isEmpty()) {
            return PARTS_NOT_YET;
        }
        if (!already.isEmpty() || !gone.isEmpty()) {
            LOG.warn("{}: rewrite of checkpoint {} skipped: {} of its {} merged files already in the table, {} of its"
                    + " {} parts not in it (first: {})", table, checkpoint, already.size(), in.size(), gone.size(),
                    out.size(), gone.isEmpty() ? already.get(0) : gone.get(0));
            return 0;
        }
        if (out.isEmpty() || in.isEmpty()) {
            if (!out.isEmpty() || !in.isEmpty()) {
                LOG.warn("{}: rewrite of checkpoint {} skipped: {} merged files for {} parts", table, checkpoint,
                        in.size(), out.size());
            }
            return 0;
        }
        RewriteFiles rewrite = t.newRewrite();
        long oldest = Long.MAX_VALUE;
        for (String l : out) {
            DataFile f = live.get(l);
            rewrite.deleteFile(f);
            if (f.dataSequenceNumber() != null) {
                oldest = Math.min(oldest, f.dataSequenceNumber());
            }
        }
        for (Snapshot s : t.snapshots()) {
            if (s.sequenceNumber() == oldest) {
                rewrite.validateFromSnapshot(s.snapshotId());
            }
        }
        MetricsConfig metrics = MetricsConfig.forTable(t);
        for (Map.Entry<String, CommittedFile> e : in.entrySet()) {
            rewrite.addFile(dataFile(t, mapping, table, metrics, e.getKey(), e.getValue()));
        }
        rewrite.set(MAX_COMMITTED_CHECKPOINT_ID, Long.toString(checkpoint))
                .set(JOB_ID, job)
                .set(OPERATOR_ID, operator)
                .commit();
        return in.size();
    }

    /** The current snapshot's data files in {@code buckets}, by location. */
    private static Map<String, DataFile> liveFiles(Table t, String table, Set<String> buckets) {
        Map<String, DataFile> out = new HashMap<>();
        if (t.currentSnapshot() == null || buckets.isEmpty()) {
            return out;
        }
        List<String> columns = IcebergTables.partitionColumns(table);
        Expression any = Expressions.alwaysFalse();
        for (String b : buckets) {
            StructLike p = IcebergTables.partition(table, b);
            Expression one = Expressions.alwaysTrue();
            for (int i = 0; i < columns.size(); i++) {
                Object v = p.get(i, Object.class);
                one = Expressions.and(one, v == null ? Expressions.isNull(columns.get(i))
                        : Expressions.equal(columns.get(i), v));
            }
            any = Expressions.or(any, one);
        }
        try (CloseableIterable<FileScanTask> tasks = t.newScan().filter(any).planFiles()) {
            for (FileScanTask task : tasks) {
                out.put(task.file().location(), task.file().copyWithoutStats());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list the files of " + table, e);
        }
        return out;
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
        InputFile in = f.size >= 0 ? t.io().newInputFile(location, f.size) : t.io().newInputFile(location);
        Metrics m = ParquetUtil.fileMetrics(in, metricsConfig, mapping);
        return DataFiles.builder(t.spec())
                .withPath(location)
                .withFormat(FileFormat.PARQUET)
                .withFileSizeInBytes(in.getLength())
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
