package io.dumpstream.cli;

import io.dumpstream.options.UsageException;
import io.dumpstream.compare.CompareConfig;
import io.dumpstream.compare.CompareJob;
import io.dumpstream.compare.CompareOptions;

import io.dumpstream.storage.FlinkSettings;
import io.dumpstream.storage.StorageCheck;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

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
        return String.join("\n",
                "usage: compare --root ROOT --baseline RUN_A --candidate RUN_B --out OUT [--report report.html]",
                "               [--tolerances FILE] [--align-by launch|step] [--ignore-placement] [--parallelism N]",
                "       compare --by tensor --root ROOT --baseline REFERENCE --candidate RUN --out OUT [--report report.html]",
                "               [--tolerances FILE] [--parallelism N]",
                "",
                "Pairs the snapshot rows of both runs under ROOT/snapshots (the decode/ingest output) by rank, launch_id,",
                "stage, task_index, owner_id, io, port_index, tensor_name and worker_id, and compares each pair in",
                "float64 from the raw bytes: |c - b| <= atol + rtol * |b| per element (b the baseline; NaN matches only",
                "NaN, an infinity only the same infinity), torch.testing's default tolerances per dtype, integers exact.",
                "",
                "  --align-by step       pair by training step instead of launch_id",
                "  --ignore-placement    leave worker_id out of the key (sides sharing a key pair in worker order)",
                "  --tolerances FILE     rules (stage glob, dtype or *, rtol, atol), first match wins; CSV with the header",
                "                        stage,dtype,rtol,atol, or YAML: a list of {stage, dtype, rtol, atol}",
                "  --report FILE         a self-contained HTML report (verdict counts, first divergence per rank,",
                "                        stage-by-rank heatmap of the worst cosine similarity, sortable failing pairs)",
                "  --parallelism N       default: the number of cores",
                "  --by tensor           the baseline is a reference run (import-reference); each candidate tensor",
                "                        (rank, launch_id, phase, parameter_position) is reassembled from its views and",
                "                        its covered elements compared with the reference's same elements, matched by the",
                "                        reference's parameter_position, else its tensor_name. Writes",
                "                        OUT/tensor_comparisons/baseline=<A>/candidate=<B>/rank=<r>/ (one row per tensor:",
                "                        verdict, coverage, metrics, first mismatch element and the task whose view holds it)",
                "                        and OUT/tensor_first_divergence/baseline=<A>/candidate=<B>/",
                "",
                "Writes OUT/comparisons/baseline=<A>/candidate=<B>/rank=<r>/*.parquet (one row per key: verdict",
                "PASS, FAIL, SHAPE_MISMATCH, DTYPE_MISMATCH, MISSING_BASELINE or MISSING_CANDIDATE, the metrics and the",
                "tolerances used) and OUT/first_divergence/baseline=<A>/candidate=<B>/*.parquet (per rank, the earliest",
                "non-PASS pair in (launch_id, task_id) order). Exit status 0 when the job ran (whatever the verdicts),",
                "2 for unusable arguments, 1 when the job failed. On a cluster: flink run -c " + CompareJob.class.getName(),
                "dumpstream.jar with the same options.");
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        CompareConfig c = CompareOptions.parse(argv);
        org.apache.flink.configuration.Configuration conf = FlinkSettings.current();
        StorageCheck.readable("--root", c.root(), conf);
        StorageCheck.writable("--out", c.out(), conf);
        conf.addAll(CompareJob.configuration(c));
        int parallelism = c.parallelism() > 0 ? c.parallelism() : Runtime.getRuntime().availableProcessors();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism, conf);
        CompareJob.runAndReport(env, c, sourceOrUsage(c), CompareOptions.reportOf(argv), out);
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
