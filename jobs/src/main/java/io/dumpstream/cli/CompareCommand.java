package io.dumpstream.cli;

import io.dumpstream.options.UsageException;
import io.dumpstream.options.Args;
import io.dumpstream.compare.CompareConfig;
import io.dumpstream.compare.CompareJob;
import io.dumpstream.compare.PairKey;
import io.dumpstream.compare.Tolerances;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

/** {@code compare}: the comparison job of two runs' snapshot tables on a local MiniCluster, with an optional HTML report. */
public final class CompareCommand implements Command {
    static final Set<String> OPTIONS = Set.of("root", "baseline", "candidate", "out", "report", "tolerances", "align-by",
            "ignore-placement", "parallelism");

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
                "",
                "Writes OUT/comparisons/baseline=<A>/candidate=<B>/rank=<r>/*.parquet (one row per key: verdict",
                "PASS, FAIL, SHAPE_MISMATCH, DTYPE_MISMATCH, MISSING_BASELINE or MISSING_CANDIDATE, the metrics and the",
                "tolerances used) and OUT/first_divergence/baseline=<A>/candidate=<B>/*.parquet (per rank, the earliest",
                "non-PASS pair in (launch_id, task_id) order). Exit status 0 when the job ran (whatever the verdicts),",
                "2 for unusable arguments, 1 when the job failed. On a cluster: flink run -c " + CompareJob.class.getName(),
                "dumpstream.jar with the same options.");
    }

    /** Parses and checks the options; every error names the option and the value. */
    public static CompareConfig parse(String[] argv) {
        Args a = Args.parse(argv, Set.of("ignore-placement"));
        a.allowOnly(OPTIONS);
        String alignBy = a.get("align-by", "launch");
        if (!alignBy.equals("launch") && !alignBy.equals("step")) {
            throw new UsageException("option --align-by must be launch or step, got '" + alignBy + "'");
        }
        Tolerances tolerances = Tolerances.defaults();
        if (a.has("tolerances")) {
            Path file = Path.of(a.get("tolerances", null));
            if (!Files.isRegularFile(file)) {
                throw new UsageException("--tolerances " + file + " does not exist or is not a regular file");
            }
            try {
                tolerances = Tolerances.load(file);
            } catch (IOException e) {
                throw new UsageException("--tolerances " + file + " cannot be read: " + e.getMessage());
            } catch (IllegalArgumentException e) {
                throw new UsageException("--tolerances " + e.getMessage());
            }
        }
        try {
            return new CompareConfig(a.require("root"), a.require("baseline"), a.require("candidate"), a.require("out"),
                    new PairKey(alignBy.equals("step"), a.flag("ignore-placement")), tolerances, a.getInt("parallelism", 0));
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        CompareConfig c = parse(argv);
        int parallelism = c.parallelism() > 0 ? c.parallelism() : Runtime.getRuntime().availableProcessors();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism, CompareJob.configuration(c));
        CompareJob.runAndReport(env, c, sourceOrUsage(c), reportOf(argv), out);
        return 0;
    }

    /** The {@code --report} file, or null. */
    public static Path reportOf(String[] argv) {
        Args a = Args.parse(argv, Set.of("ignore-placement"));
        return a.has("report") ? Path.of(a.get("report", null)) : null;
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
