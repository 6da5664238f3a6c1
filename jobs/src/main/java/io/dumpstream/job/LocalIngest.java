package io.dumpstream.job;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The ingestion job on an in-process Flink MiniCluster: what {@code ingest} and {@code demo} run.
 *
 * <p>On start it resumes by itself from the newest retained checkpoint or savepoint under
 * {@code --checkpoints} (unless {@code --no-resume}), so that a process killed with SIGKILL and
 * started again with the same arguments continues exactly once: the files pending at the crash
 * are committed from the restored state, not lost, and nothing is written twice.
 */
public final class LocalIngest implements AutoCloseable {
    /** Savepoints taken on stop go here, below the checkpoint directory. */
    public static final String SAVEPOINTS = "savepoints";

    /**
     * Tells the user on {@code err} when this JVM collects garbage with G1: every payload passes
     * through a few short-lived multi-MiB arrays, which G1 allocates as humongous objects and reclaims
     * with concurrent cycles, so the job costs 1.4-2x the CPU per MiB it costs with the parallel
     * collector (BENCHMARKS.md, "Ingest end to end"). Says nothing under any other collector.
     */
    public static void noteCollector(java.io.PrintStream err) {
        for (java.lang.management.GarbageCollectorMXBean gc
                : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc.getName().startsWith("G1")) {
                err.println("note: this JVM collects garbage with G1, under which the ingest job takes 1.4-2x the CPU"
                        + " per MiB it takes with the parallel collector: java -XX:+UseParallelGC -jar dumpstream.jar ...");
                return;
            }
        }
    }

    private final IngestConfig config;
    private final JobClient client;
    private final String resumedFrom;

    private LocalIngest(IngestConfig config, JobClient client, String resumedFrom) {
        this.config = config;
        this.client = client;
        this.resumedFrom = resumedFrom;
    }

    /**
     * Starts the job; {@code extra} settings (tests: restart strategy) override the job's own.
     *
     * <p>A job that has just finished (stop-with-savepoint) discards its checkpoints asynchronously, a
     * moment after it reports FINISHED: the newest complete one found here can vanish before the new
     * job reads it. The start then picks the next newest and tries again (a few times), so a restart
     * right after a stop restores from the savepoint instead of failing on the discarded checkpoint.
     */
    public static LocalIngest start(IngestConfig c, Configuration extra) throws Exception {
        IngestConfig local = c;
        if (local.parallelism < 1) {
            local.parallelism = Runtime.getRuntime().availableProcessors();
        }
        java.util.Set<String> vanished = new java.util.HashSet<>();
        for (int attempt = 1; ; attempt++) {
            // the process's Flink settings ($FLINK_CONF_DIR/config.yaml, -D) under the job's own
            Configuration conf = io.dumpstream.storage.FlinkSettings.current();
            conf.addAll(IngestJob.configuration(local));
            ProgressReporter.enable(conf);
            String from = local.resume ? latestRetained(IngestJob.uri(local.checkpoints), vanished) : null;
            if (from != null) {
                conf.set(StateRecoveryOptions.SAVEPOINT_PATH, from);
            }
            conf.addAll(extra);
            StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(local.parallelism, conf);
            IngestJob.build(env, local);
            try {
                JobClient client = env.executeAsync(IngestJob.NAME);
                return new LocalIngest(local, client, from);
            } catch (Exception e) {
                if (from == null || attempt >= 5 || !vanishedBelow(e, from)) {
                    throw e;
                }
                vanished.add(from);
            }
        }
    }

    /** True when {@code e} says a file of the checkpoint or savepoint at {@code from} does not exist. */
    static boolean vanishedBelow(Throwable e, String from) {
        String dir = new Path(from).toUri().getPath();
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if ((t instanceof java.io.FileNotFoundException || t instanceof java.nio.file.NoSuchFileException)
                    && t.getMessage() != null && t.getMessage().contains(dir)) {
                return true;
            }
        }
        return false;
    }

    public JobClient client() {
        return client;
    }

    /** The checkpoint or savepoint this run restored from, or null for a fresh start. */
    public String resumedFrom() {
        return resumedFrom;
    }

    public IngestConfig config() {
        return config;
    }

    public JobStatus status() throws Exception {
        return client.getJobStatus().get(30, TimeUnit.SECONDS);
    }

    /**
     * Stops the job with a savepoint under {@code <checkpoints>/savepoints} (the next start resumes
     * from it); falls back to cancelling, which keeps the retained checkpoints, when the savepoint
     * does not complete within {@code timeout}. Returns the savepoint path, or null after a cancel.
     */
    public String stop(Duration timeout) throws Exception {
        if (ended()) {
            return null;
        }
        String dir = new Path(IngestJob.uri(config.checkpoints), SAVEPOINTS).toString();
        try {
            String path = client.stopWithSavepoint(false, dir, SavepointFormatType.CANONICAL)
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            awaitTerminal(timeout);
            return path;
        } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
            cancel(timeout);
            return null;
        }
    }

    /** Cancels the job (checkpoints are retained on cancellation) and waits until it has ended. */
    public void cancel(Duration timeout) throws Exception {
        if (!ended()) {
            try {
                client.cancel().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                // it ended meanwhile
            }
        }
        awaitTerminal(timeout);
    }

    /** True once the job has reached a terminal state (or its MiniCluster is gone with it). */
    public boolean ended() throws Exception {
        try {
            return status().isGloballyTerminalState();
        } catch (java.util.concurrent.ExecutionException | IllegalStateException e) {
            return true;
        }
    }

    private void awaitTerminal(Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline && !ended()) {
            Thread.sleep(100);
        }
    }

    @Override
    public void close() throws Exception {
        cancel(Duration.ofSeconds(60));
    }

    /**
     * The newest complete checkpoint or savepoint below {@code root}: {@code <root>/<job id>/chk-N}
     * or {@code <root>/savepoints/savepoint-*}, each complete once its {@code _metadata} exists
     * (Flink writes it last); newest by checkpoint id, then by write time. Null when there is none.
     */
    public static String latestRetained(String root) throws IOException {
        return latestRetained(root, java.util.Set.of());
    }

    /** As {@link #latestRetained(String)}, skipping the paths in {@code skip}. */
    static String latestRetained(String root, java.util.Set<String> skip) throws IOException {
        Path base = new Path(root);
        FileSystem fs = base.getFileSystem();
        if (!fs.exists(base)) {
            return null;
        }
        String best = null;
        long bestId = Long.MIN_VALUE;
        long bestTime = Long.MIN_VALUE;
        for (FileStatus parent : list(fs, base)) {
            if (!parent.isDir()) {
                continue;
            }
            boolean savepoints = parent.getPath().getName().equals(SAVEPOINTS);
            for (FileStatus d : list(fs, parent.getPath())) {
                String name = d.getPath().getName();
                if (!d.isDir() || !(savepoints ? name.startsWith("savepoint-") : name.startsWith("chk-"))
                        || skip.contains(d.getPath().toString())) {
                    continue;
                }
                Path metadata = new Path(d.getPath(), "_metadata");
                long id;
                long t;
                try {
                    t = fs.getFileStatus(metadata).getModificationTime();
                    id = checkpointId(fs, metadata);
                } catch (IOException incompleteOrGone) {
                    continue;
                }
                if (id > bestId || (id == bestId && t > bestTime)) {
                    bestId = id;
                    bestTime = t;
                    best = d.getPath().toString();
                }
            }
        }
        return best;
    }

    /**
     * The checkpoint id recorded in a {@code _metadata} file. Ids order checkpoints and savepoints by
     * the position of their barrier in the stream (a job restored from id N counts on from N + 1);
     * write times do not: a checkpoint pending when a stop-with-savepoint is triggered can complete
     * after the savepoint, and restoring from it would replay what the savepoint already committed.
     */
    private static long checkpointId(FileSystem fs, Path metadata) throws IOException {
        try (java.io.DataInputStream in = new java.io.DataInputStream(
                new java.io.BufferedInputStream(fs.open(metadata)))) {
            return org.apache.flink.runtime.checkpoint.Checkpoints
                    .loadCheckpointMetadata(in, LocalIngest.class.getClassLoader(), metadata.getParent().toString())
                    .getCheckpointId();
        }
    }

    /**
     * The entries of {@code dir}, none if it is gone. Flink discards subsumed checkpoints
     * asynchronously, possibly of the job that just stopped: the local file system's listing reads
     * each entry's status after listing the names, and fails when one was deleted in between (CI:
     * {@code chk-3 does not exist} while a restart looked for the newest retained checkpoint), so the
     * listing is taken again; a deleted checkpoint was never a candidate.
     */
    private static FileStatus[] list(FileSystem fs, Path dir) throws IOException {
        for (int attempt = 1; ; attempt++) {
            try {
                FileStatus[] s = fs.listStatus(dir);
                return s == null ? new FileStatus[0] : s;
            } catch (java.io.FileNotFoundException vanished) {
                if (!fs.exists(dir)) {
                    return new FileStatus[0];
                }
                if (attempt == 5) {
                    throw vanished;
                }
            }
        }
    }
}
