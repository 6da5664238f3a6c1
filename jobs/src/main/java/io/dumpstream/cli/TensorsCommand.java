package io.dumpstream.cli;

import io.dumpstream.job.ProgressReporter;
import io.dumpstream.options.Cli;
import io.dumpstream.options.UsageException;
import io.dumpstream.tensors.TensorSource;
import io.dumpstream.tensors.TensorsConfig;
import io.dumpstream.tensors.TensorsJob;
import io.dumpstream.tensors.TensorsOptions;
import io.dumpstream.storage.FlinkSettings;
import io.dumpstream.storage.StorageCheck;

import org.apache.flink.configuration.Configuration;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/** {@code tensors}: reassembles each tensor of a run from its task views (Flink batch job on a local MiniCluster). */
public final class TensorsCommand implements Command {
    static final long PROGRESS_SECONDS = 5;
    private static final double MIB = 1024.0 * 1024.0;

    @Override
    public String name() {
        return "tensors";
    }

    @Override
    public String summary() {
        return "reassemble whole tensors from their task views (Flink batch job): coverage, gaps, overlaps, statistics";
    }

    @Override
    public String usage() {
        return Cli.usage(name(), String.join("\n",
                "Reads ROOT/snapshots (the decode/ingest output) and rebuilds every tensor, one per (run, rank, launch_id,",
                "phase, parameter_position), from its task views in source_offset_bytes order: the extent covered (bytes,",
                "elements, coverage), gaps, overlaps and whether overlapping views agree byte for byte, and the",
                "statistics over the covered elements, each once. Views that disagree where they overlap are printed",
                "with both task ids; so are views left out (unknown or mixed dtype, misaligned, bad extent)."),
                String.join("\n",
                "Writes OUT/tensors/run=<run>/rank=<r>/*.parquet (schema ReassembledTensor: the counts, the statistics,",
                "every view with its placement, the disagreements). Refuses a run whose tensors already exist under OUT.",
                "A progress line goes to stderr every " + PROGRESS_SECONDS + " s. Exit status 0 when the job ran (whatever",
                "it found), 2 for unusable arguments, 1 when the job failed. On a cluster: flink run -c "
                        + TensorsJob.class.getName() + " dumpstream.jar with the same options."),
                new TensorsOptions(), new Verbosity());
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Verbosity verbosity = new Verbosity();
        TensorsOptions o = TensorsOptions.of(argv, verbosity);
        verbosity.apply();
        TensorsConfig c = o.config();
        // the process's Flink settings ($FLINK_CONF_DIR/config.yaml, -D) under the job's own
        Configuration conf = FlinkSettings.install(o.flinkConf);
        StorageCheck.readable("--in", c.in(), conf);
        StorageCheck.writable("--out", c.out(), conf);
        TensorSource source;
        try {
            source = TensorsJob.source(c);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
        int parallelism = c.parallelism() > 0 ? c.parallelism() : Runtime.getRuntime().availableProcessors();
        conf.addAll(TensorsJob.configuration(c));
        ProgressReporter.enable(conf);
        ProgressReporter.forgetRetired();
        long t0 = System.nanoTime();
        ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "tensors-progress");
            t.setDaemon(true);
            return t;
        });
        ticker.scheduleAtFixedRate(() -> err.println(progress(t0)), PROGRESS_SECONDS, PROGRESS_SECONDS, TimeUnit.SECONDS);
        try (LocalCluster cluster = new LocalCluster(parallelism, conf)) {
            try {
                TensorsJob.runAndReport(cluster.env(), c, source, out);
            } catch (Exception e) {
                ticker.shutdownNow(); // the verdict before the cluster's shutdown, no progress line after it
                err.println("dumpstream tensors: the job failed: " + cause(e));
                return 1;
            } finally {
                ticker.shutdownNow();
            }
        }
        return 0;
    }

    /**
     * The first exception of the chain thrown by our own code (it names the file, the field and the value),
     * past Flink's wrappers ("Job execution failed", "Recovery is suppressed ..."); else the root cause.
     */
    static String cause(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            StackTraceElement[] st = t.getStackTrace();
            if (st.length > 0 && st[0].getClassName().startsWith("io.dumpstream.")) {
                return t.getMessage();
            }
        }
        return IngestCommand.rootMessage(e);
    }

    static String progress(long t0) {
        long secs = (System.nanoTime() - t0) / 1_000_000_000L;
        double mib = ProgressReporter.count("tensors.payloadBytes") / MIB;
        return String.format(Locale.ROOT, "tensors %02d:%02d:%02d  run/rank partitions done %d  views %d (%.1f MiB, %.1f MiB/s)"
                        + "  tensors %d", secs / 3600, secs / 60 % 60, secs % 60, ProgressReporter.count("tensors.groups"),
                ProgressReporter.count("tensors.views"), mib, mib / Math.max(1, secs), ProgressReporter.count("tensors.tensors"));
    }
}
