package io.dumpstream.cli;

import io.dumpstream.options.Cli;
import io.dumpstream.options.UsageException;
import io.dumpstream.compare.CompareConfig;
import io.dumpstream.compare.CompareJob;
import io.dumpstream.compare.CompareOptions;
import io.dumpstream.storage.FlinkSettings;
import io.dumpstream.storage.StorageCheck;

import org.apache.flink.configuration.Configuration;

import java.io.IOException;
import java.io.PrintStream;

/** {@code compare}: the comparison job of two runs' snapshot tables on a local MiniCluster, with an optional HTML report. */
public final class CompareCommand implements Command {

    @Override
    public String name() {
        return "compare";
    }

    @Override
    public String summary() {
        return "compare a candidate run against a baseline run (Flink batch job): verdicts, first divergence, report";
    }

    @Override
    public String usage() {
        return Cli.usage(name(), String.join("\n",
                "Pairs the snapshot rows of both runs under ROOT/snapshots (the decode/ingest output) by rank, launch_id,",
                "stage, task_index, owner_id, io, port_index, tensor_name and worker_id, and compares each pair in",
                "float64 from the raw bytes: |c - b| <= atol + rtol * |b| per element (b the baseline; NaN matches only",
                "NaN, an infinity only the same infinity), torch.testing's default tolerances per dtype, integers exact."),
                String.join("\n",
                "Writes OUT/comparisons/baseline=<A>/candidate=<B>/rank=<r>/*.parquet (one row per key: verdict",
                "PASS, FAIL, SHAPE_MISMATCH, DTYPE_MISMATCH, MISSING_BASELINE or MISSING_CANDIDATE, the metrics and the",
                "tolerances used) and OUT/first_divergence/baseline=<A>/candidate=<B>/*.parquet (per rank, the earliest",
                "non-PASS pair in (launch_id, task_id) order); with --by tensor",
                "OUT/tensor_comparisons/baseline=<A>/candidate=<B>/rank=<r>/ (one row per tensor: verdict, coverage, metrics, first mismatch element and the",
                "task whose view holds it) and OUT/tensor_first_divergence/baseline=<A>/candidate=<B>/. Exit status 0",
                "when the job ran (whatever the verdicts), 2 for unusable arguments, 1 when the job failed. On a cluster:",
                "flink run -c " + CompareJob.class.getName() + " dumpstream.jar with the same options."),
                new CompareOptions(), new Verbosity());
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Verbosity verbosity = new Verbosity();
        CompareOptions o = CompareOptions.of(argv, verbosity);
        verbosity.apply();
        CompareConfig c = o.config();
        int parallelism = c.parallelism() > 0 ? c.parallelism() : Runtime.getRuntime().availableProcessors();
        // the process's Flink settings ($FLINK_CONF_DIR/config.yaml, -D) under the job's own
        Configuration conf = FlinkSettings.install(o.flinkConf);
        StorageCheck.readable("--root", c.root(), conf);
        StorageCheck.writable("--out", c.out(), conf);
        conf.addAll(CompareJob.configuration(c));
        try (LocalCluster cluster = new LocalCluster(parallelism, conf)) {
            CompareJob.runAndReport(cluster.env(), c, sourceOrUsage(c), o.report(), out);
        }
        return 0;
    }

    private static io.dumpstream.compare.PartitionSource sourceOrUsage(CompareConfig c)
            throws IOException {
        try {
            return CompareJob.source(c);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }
}
