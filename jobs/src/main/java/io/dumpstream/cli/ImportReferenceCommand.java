package io.dumpstream.cli;

import io.dumpstream.options.Cli;
import io.dumpstream.options.UsageException;
import io.dumpstream.reference.ReferenceImport;
import io.dumpstream.reference.ReferenceNames;
import io.dumpstream.storage.FlinkSettings;
import io.dumpstream.storage.TableOutput;
import io.dumpstream.table.TableWriter;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import picocli.CommandLine.Option;

/** {@code import-reference}: a safetensors file (an eager framework run's tensors) as a reference run in the snapshot tables. */
public final class ImportReferenceCommand implements Command {
    /** The pipeline's max_record_bytes: a reference tensor is one snapshot row. */
    static final long DEFAULT_MAX_TENSOR_BYTES = 512L << 20;

    @Override
    public String name() {
        return "import-reference";
    }

    @Override
    public String summary() {
        return "write a safetensors file's tensors as a reference run (for compare --by tensor)";
    }

    /** The options of import-reference. */
    static final class Options {
        @Option(names = "--safetensors", paramLabel = "FILE", required = true, description = "the reference's tensors")
        Path safetensors;
        @Option(names = "--run", paramLabel = "NAME", required = true, description = "run id of the reference")
        String run;
        @Option(names = "--rank", paramLabel = "R", required = true, description = "its rank")
        int rank;
        @Option(names = "--launch", paramLabel = "L", required = true, description = "its launch_id")
        long launch;
        @Option(names = "--out", paramLabel = "ROOT", required = true, description = "the ROOT the candidate run was"
                + " decoded or ingested into: a local path or a Flink file system URI such as s3://bucket/path")
        String out;
        @Option(names = "--names", paramLabel = "MAP.json", description = {"per safetensors key: {\"KEY\":"
            + " {\"tensor_name\": ..., \"stage\": ..., \"phase\": \"before\"|\"after\", \"parameter_position\": N}} or"
            + " {\"KEY\": \"tensor_name\"}; unnamed keys keep tensor_name KEY, stage 'reference', phase 'after' and"
            + " parameter_position -1 (matched by tensor name)"})
        Path names;
        @Option(names = "--step", paramLabel = "S", description = "the training step of the reference")
        Long step;
        @Option(names = "--max-tensor-bytes", paramLabel = "N", description = "largest tensor accepted (default"
                + " ${DEFAULT-VALUE}); memory holds one")
        long maxTensorBytes = DEFAULT_MAX_TENSOR_BYTES;
        /** {@code -D key=value}: settings of the file system of --out (import-reference runs no Flink job). */
        @Option(names = "-D", paramLabel = Cli.FLINK_CONF_LABEL, description = Cli.FLINK_CONF_STORAGE_HELP)
        Map<String, String> flinkConf = new LinkedHashMap<>();
    }

    @Override
    public String usage() {
        return Cli.usage(name(), String.join("\n",
                "Writes one snapshots row per tensor of FILE under ROOT/snapshots/run=NAME/rank=R/stage=<stage>/ (a full",
                "view: source_offset_bytes 0, full_bytes = payload_bytes = the tensor's bytes, dtype and shape from the",
                "header, the section-5 statistics, note 'safetensors:<key>') and one COMPLETE row under",
                "ROOT/dumps/run=NAME/rank=R/, dump id NAME/R/L. Then: compare --by tensor --root ROOT --baseline NAME",
                "--candidate RUN --out OUT. The file is read as untrusted input (header length, dtypes, shapes and",
                "offsets checked; no pickle)."), String.join("\n",
                "Exit status 0 when written, 2 for unusable arguments, 1 for an unreadable or invalid file (nothing is",
                "written then)."), new Options(), new Verbosity());
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Verbosity verbosity = new Verbosity();
        Options o = Cli.parse(new Options(), argv, verbosity);
        verbosity.apply();
        Path file = o.safetensors;
        if (!Files.isRegularFile(file)) {
            throw new UsageException("--safetensors " + file + " does not exist or is not a regular file");
        }
        String run = o.run;
        if (run.isEmpty()) {
            throw new UsageException("--run must not be empty");
        }
        int rank = o.rank;
        if (rank < 0) {
            throw new UsageException("--rank must be >= 0, got " + rank);
        }
        long launch = o.launch;
        Long step = o.step;
        long max = o.maxTensorBytes;
        if (max < 0 || max > Integer.MAX_VALUE - 16) {
            throw new UsageException("--max-tensor-bytes must be in 0.." + (Integer.MAX_VALUE - 16) + ", got " + max);
        }
        ReferenceNames names = ReferenceNames.none();
        if (o.names != null) {
            Path map = o.names;
            if (!Files.isRegularFile(map)) {
                throw new UsageException("--names " + map + " does not exist or is not a regular file");
            }
            names = ReferenceNames.load(map);
        }
        FlinkSettings.install(o.flinkConf);
        TableOutput tables = TableOutput.open("--out", o.out, TableWriter.Options.defaults());
        ReferenceImport.Summary s;
        try {
            s = ReferenceImport.run(file, run, rank, launch, step, names, max, tables.writer(), Instant.now(), err::println);
            tables.close();
        } catch (Exception e) {
            tables.abort(); // nothing of a failed import lands
            throw e;
        }
        out.println(s);
        out.println("reference run '" + run + "' rank " + rank + " launch " + launch + " under " + tables.location()
                + " (snapshots/, dumps/)");
        return 0;
    }
}
