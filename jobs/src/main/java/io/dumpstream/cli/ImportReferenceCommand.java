package io.dumpstream.cli;

import io.dumpstream.options.Args;
import io.dumpstream.options.UsageException;
import io.dumpstream.reference.ReferenceImport;
import io.dumpstream.reference.ReferenceNames;
import io.dumpstream.storage.TableOutput;
import io.dumpstream.table.TableWriter;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Set;

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

    @Override
    public String usage() {
        return String.join("\n",
                "usage: import-reference --safetensors FILE --run NAME --rank R --launch L --out ROOT",
                "                        [--names MAP.json] [--step S] [--max-tensor-bytes N]",
                "",
                "Writes one snapshots row per tensor of FILE under ROOT/snapshots/run=NAME/rank=R/stage=<stage>/ (a full",
                "view: source_offset_bytes 0, full_bytes = payload_bytes = the tensor's bytes, dtype and shape from the",
                "header, the section-5 statistics, note 'safetensors:<key>') and one COMPLETE row under",
                "ROOT/dumps/run=NAME/rank=R/, dump id NAME/R/L. Use the ROOT the candidate run was decoded or ingested",
                "into, then: compare --by tensor --root ROOT --baseline NAME --candidate RUN --out OUT.",
                "The file is read as untrusted input (header length, dtypes, shapes and offsets checked; no pickle).",
                "",
                "  --names MAP.json       per safetensors key: {\"KEY\": {\"tensor_name\": ..., \"stage\": ..., \"phase\":",
                "                         \"before\"|\"after\", \"parameter_position\": N}} or {\"KEY\": \"tensor_name\"};",
                "                         unnamed keys keep tensor_name KEY, stage 'reference', phase 'after' and",
                "                         parameter_position -1 (matched by tensor name)",
                "  --step S               the training step of the reference",
                "  --max-tensor-bytes N   largest tensor accepted (default " + DEFAULT_MAX_TENSOR_BYTES + "); memory holds one",
                "",
                "Exit status 0 when written, 2 for unusable arguments, 1 for an unreadable or invalid file (nothing is",
                "written then).");
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Args a = Args.parse(argv, Set.of());
        a.allowOnly(Set.of("safetensors", "run", "rank", "launch", "out", "names", "step", "max-tensor-bytes"));
        Path file = Path.of(a.require("safetensors"));
        if (!Files.isRegularFile(file)) {
            throw new UsageException("--safetensors " + file + " does not exist or is not a regular file");
        }
        String run = a.require("run");
        if (run.isEmpty()) {
            throw new UsageException("--run must not be empty");
        }
        a.require("rank");
        a.require("launch");
        int rank = a.getInt("rank", 0);
        if (rank < 0) {
            throw new UsageException("--rank must be >= 0, got " + rank);
        }
        long launch = a.getLong("launch", 0);
        Long step = a.has("step") ? a.getLong("step", 0) : null;
        long max = a.getLong("max-tensor-bytes", DEFAULT_MAX_TENSOR_BYTES);
        if (max < 0 || max > Integer.MAX_VALUE - 16) {
            throw new UsageException("--max-tensor-bytes must be in 0.." + (Integer.MAX_VALUE - 16) + ", got " + max);
        }
        ReferenceNames names = ReferenceNames.none();
        if (a.has("names")) {
            Path map = Path.of(a.get("names", null));
            if (!Files.isRegularFile(map)) {
                throw new UsageException("--names " + map + " does not exist or is not a regular file");
            }
            names = ReferenceNames.load(map);
        }
        TableOutput tables = TableOutput.open("--out", a.require("out"), TableWriter.Options.defaults());
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
