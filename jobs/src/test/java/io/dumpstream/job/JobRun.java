package io.dumpstream.job;

import io.dumpstream.table.DuckDb;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** The ingestion job on a local MiniCluster for a test, with checkpoints every second and bounded restarts. */
final class JobRun implements AutoCloseable {
    final IngestConfig config;
    final JobClient client;
    final Path out;

    private JobRun(IngestConfig config, JobClient client, Path out) {
        this.config = config;
        this.client = client;
        this.out = out;
    }

    static IngestConfig config(String bootstrap, String topic, Path dir) {
        IngestConfig c = new IngestConfig();
        c.bootstrap = bootstrap;
        c.topic = topic;
        c.group = "it-" + topic;
        c.out = dir.resolve("out").toString();
        c.checkpoints = dir.resolve("checkpoints").toString();
        c.checkpointInterval = Duration.ofSeconds(1);
        c.parallelism = 2;
        c.assemblyTimeout = Duration.ofSeconds(6);
        c.restartAttempts = 0;
        c.dlqTopic = topic + ".dlq";
        return c.validate();
    }

    static JobRun start(IngestConfig c) throws Exception {
        Configuration conf = IngestJob.configuration(c);
        if (c.restartAttempts == 0) {
            conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(c.parallelism, conf);
        IngestJob.build(env, c);
        JobClient client = env.executeAsync(IngestJob.NAME);
        return new JobRun(c, client, Path.of(c.out));
    }

    /** Rows of {@code sql} once {@code done} holds for them; fails with the last rows after the timeout. */
    List<Map<String, Object>> await(Supplier<String> sql, java.util.function.Predicate<List<Map<String, Object>>> done,
                                    Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        List<Map<String, Object>> rows = List.of();
        while (System.nanoTime() < deadline) {
            JobStatus status = client.getJobStatus().get();
            if (status.isGloballyTerminalState()) {
                client.getJobExecutionResult().get(); // throws the job's failure
                throw new AssertionError("job ended with " + status);
            }
            if (Files.isDirectory(out)) {
                try {
                    rows = DuckDb.query(sql.get());
                    if (done.test(rows)) {
                        return rows;
                    }
                } catch (java.sql.SQLException e) {
                    // no files yet for this glob
                }
            }
            Thread.sleep(500);
        }
        throw new AssertionError("timed out after " + timeout + " waiting on " + sql.get() + "; last rows " + rows);
    }

    /** Waits until the dumps table has {@code n} rows. */
    void awaitDumps(long n, Duration timeout) throws Exception {
        awaitRows("dumps", n, timeout);
    }

    /**
     * Waits until {@code table} has at least {@code n} visible rows (with compaction, rows become visible
     * only when the merge of their checkpoint publishes, later than the dumps row of the same dump).
     */
    void awaitRows(String table, long n, Duration timeout) throws Exception {
        await(() -> "SELECT count(*) AS n FROM read_parquet(" + DuckDb.glob(out, table + "/**/[!.]*.parquet") + ")",
                rows -> ((Number) rows.get(0).get("n")).longValue() >= n, timeout);
    }

    @Override
    public void close() throws Exception {
        if (!client.getJobStatus().get().isGloballyTerminalState()) {
            client.cancel().get();
        }
    }
}
