package io.dumpstream.cli;

import io.dumpstream.options.Cli;
import io.dumpstream.options.KafkaClientProperties;
import io.dumpstream.job.IngestConfig;
import io.dumpstream.job.IngestJob;
import io.dumpstream.job.LocalIngest;
import io.dumpstream.storage.FlinkSettings;
import io.dumpstream.storage.StorageCheck;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;

import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code ingest}: the ingestion job on an in-process Flink MiniCluster, running until SIGTERM or
 * Ctrl-C, then stopping with a savepoint; a restart with the same arguments resumes from the newest
 * retained checkpoint or savepoint, also after SIGKILL.
 */
public final class IngestCommand implements Command {
    static final Duration STOP_TIMEOUT = Duration.ofSeconds(120);

    @Override
    public String name() {
        return "ingest";
    }

    @Override
    public String summary() {
        return "run the ingestion job (Kafka to Parquet) on a local Flink MiniCluster until stopped";
    }

    @Override
    public String usage() {
        return Cli.usage(name(), String.join("\n",
                "Consumes manifests and chunks from Kafka and writes the snapshots, dumps and rejects tables",
                "under --out, exactly once: files are committed on each checkpoint. Runs until SIGTERM or Ctrl-C,",
                "then stops with a savepoint under <checkpoints>/savepoints. Started again with the same",
                "arguments it resumes from the newest retained checkpoint or savepoint (also after a crash or",
                "SIGKILL). A progress line from the job's metrics goes to stderr every 10 s. On a cluster, run",
                "the same arguments with `flink run dumpstream-cluster.jar` (main class " + IngestJob.class.getName() + ")."),
                "", new IngestConfig(), new Verbosity());
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Verbosity verbosity = new Verbosity();
        IngestConfig c = IngestConfig.parse(argv, System.getenv(), verbosity);
        verbosity.apply();
        CountDownLatch stop = new CountDownLatch(1);
        Signals.onTerminate(stop::countDown);
        // the process's Flink settings ($FLINK_CONF_DIR/config.yaml, -D) and file systems, then the locations
        Configuration settings = FlinkSettings.install(c.flinkConf);
        StorageCheck.writable("--out", c.out, settings);
        StorageCheck.writable("--checkpoints", c.checkpoints, settings);
        LocalIngest job = LocalIngest.start(c, new Configuration());
        // one write of the whole line: log lines from other threads share this stream
        out.println(String.format("ingest: job %s on a local MiniCluster, parallelism %d, %s -> %s%s",
                job.client().getJobID(), job.config().parallelism, c.topic, c.out,
                job.resumedFrom() == null ? "" : ", resumed from " + job.resumedFrom()));
        out.flush();
        LocalIngest.noteCollector(err);
        IngestProgress progress = new IngestProgress();
        while (!stop.await(10, TimeUnit.SECONDS)) {
            JobStatus s = job.status();
            if (s.isGloballyTerminalState()) {
                err.println(progress.line());
                try {
                    job.client().getJobExecutionResult().get();
                } catch (Exception e) {
                    String auth = KafkaClientProperties.authenticationFailure(e, c.bootstrap, c.kafka);
                    err.println("dumpstream ingest: the job ended with " + s + ": "
                            + (auth != null ? auth : rootMessage(e)));
                    return 1;
                }
                err.println("dumpstream ingest: the job ended with " + s);
                return s == JobStatus.FINISHED ? 0 : 1;
            }
            err.println(progress.line());
        }
        err.println(progress.line());
        out.println("ingest: stopping with a savepoint");
        out.flush();
        String savepoint = job.stop(STOP_TIMEOUT);
        out.println(savepoint == null ? "ingest: cancelled; the retained checkpoints are kept for the next start"
                : "ingest: stopped with savepoint " + savepoint);
        if (c.compactCheckpoints > 0) {
            out.println("ingest: compaction is on: snapshot parts of the last checkpoints wait hidden, their merge"
                    + " pending in the " + (savepoint == null ? "retained checkpoint" : "savepoint")
                    + "; the next start from it publishes them");
        }
        return 0;
    }

    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }
}
