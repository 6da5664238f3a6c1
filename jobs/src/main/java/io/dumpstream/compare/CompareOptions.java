package io.dumpstream.compare;

import io.dumpstream.options.Cli;
import io.dumpstream.options.UsageException;

import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** The options of the comparison job, shared by the {@code compare} command and {@link CompareJob#main} on a cluster. */
public final class CompareOptions {
    @Option(names = "--root", paramLabel = "ROOT", required = true,
            description = "the snapshot tables' root (the decode/ingest output): a local path or Flink URI")
    String root;
    @Option(names = "--baseline", paramLabel = "RUN_A", required = true,
            description = "the baseline run (with --by tensor: a reference run, see import-reference)")
    String baseline;
    @Option(names = "--candidate", paramLabel = "RUN_B", required = true, description = "the candidate run")
    String candidate;
    @Option(names = "--out", paramLabel = "OUT", required = true, description = "root of the result tables")
    String out;
    @Option(names = "--report", paramLabel = "FILE", description = {"a self-contained HTML report (verdict counts, first"
        + " divergence per rank, stage-by-rank heatmap of the worst cosine similarity, sortable failing pairs), written"
        + " on the client when the job ends"})
    Path report;
    @Option(names = "--tolerances", paramLabel = "FILE", description = {"rules (stage glob, dtype or *, rtol, atol),"
        + " first match wins; CSV with the header stage,dtype,rtol,atol, or YAML: a list of {stage, dtype, rtol, atol}"})
    Path tolerances;
    @Option(names = "--align-by", paramLabel = "launch|step", description = "pair by launch_id (default) or by training"
            + " step")
    String alignBy;
    @Option(names = "--ignore-placement", description = "leave worker_id out of the key (sides sharing a key pair in"
            + " worker order)")
    boolean ignorePlacement;
    @Option(names = "--parallelism", paramLabel = "N", description = "default: the number of cores")
    int parallelism;
    @Option(names = "--by", paramLabel = "pair|tensor", description = {"pair (default): snapshot rows by key; tensor: the"
        + " baseline is a reference run (import-reference); each candidate tensor (rank, launch_id, phase,"
        + " parameter_position) is reassembled from its views and its covered elements compared with the reference's"
        + " same elements, matched by the reference's parameter_position, else its tensor_name"})
    String by = "pair";
    /** {@code -D key=value}: Flink configuration settings of the job. */
    @Option(names = "-D", paramLabel = Cli.FLINK_CONF_LABEL, description = Cli.FLINK_CONF_HELP)
    public Map<String, String> flinkConf = new LinkedHashMap<>();

    public CompareOptions() {
    }

    /** Parses the options ({@code mixins}: option groups of the command line around the job, such as --verbose). */
    public static CompareOptions of(String[] argv, Object... mixins) {
        return Cli.parse(new CompareOptions(), argv, mixins);
    }

    /** Parses and checks the options; every error names the option and the value. */
    public static CompareConfig parse(String[] argv) {
        return of(argv).config();
    }

    /** The {@code --report} file, or null. */
    public static Path reportOf(String[] argv) {
        return of(argv).report;
    }

    /** The {@code --report} file, or null. */
    public Path report() {
        return report;
    }

    /** The checked settings; every error names the option and the value. */
    public CompareConfig config() {
        if (alignBy != null && !alignBy.equals("launch") && !alignBy.equals("step")) {
            throw new UsageException("option --align-by must be launch or step, got '" + alignBy + "'");
        }
        if (!by.equals("pair") && !by.equals("tensor")) {
            throw new UsageException("option --by must be pair or tensor, got '" + by + "'");
        }
        boolean byTensor = by.equals("tensor");
        if (byTensor && (alignBy != null || ignorePlacement)) {
            throw new UsageException("--by tensor pairs tensors by (rank, launch_id, phase, parameter_position or tensor_name):"
                    + " --align-by and --ignore-placement do not apply");
        }
        Tolerances rules = Tolerances.defaults();
        if (tolerances != null) {
            if (!Files.isRegularFile(tolerances)) {
                throw new UsageException("--tolerances " + tolerances + " does not exist or is not a regular file");
            }
            try {
                rules = Tolerances.load(tolerances);
            } catch (IOException e) {
                throw new UsageException("--tolerances " + tolerances + " cannot be read: " + e.getMessage());
            } catch (IllegalArgumentException e) {
                throw new UsageException("--tolerances " + e.getMessage());
            }
        }
        try {
            return new CompareConfig(root, baseline, candidate, out, new PairKey("step".equals(alignBy), ignorePlacement),
                    rules, parallelism, byTensor);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }
}
