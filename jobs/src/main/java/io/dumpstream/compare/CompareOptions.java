package io.dumpstream.compare;

import io.dumpstream.options.Args;
import io.dumpstream.options.UsageException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

/** The options of the comparison job, shared by the {@code compare} command and {@link CompareJob#main} on a cluster. */
public final class CompareOptions {
    static final Set<String> OPTIONS = Set.of("root", "baseline", "candidate", "out", "report", "tolerances", "align-by",
            "ignore-placement", "parallelism", "by");

    private CompareOptions() {
    }

    /** Parses and checks the options; every error names the option and the value. */
    public static CompareConfig parse(String[] argv) {
        Args a = Args.parse(argv, Set.of("ignore-placement"));
        a.allowOnly(OPTIONS);
        String alignBy = a.get("align-by", "launch");
        if (!alignBy.equals("launch") && !alignBy.equals("step")) {
            throw new UsageException("option --align-by must be launch or step, got '" + alignBy + "'");
        }
        String by = a.get("by", "pair");
        if (!by.equals("pair") && !by.equals("tensor")) {
            throw new UsageException("option --by must be pair or tensor, got '" + by + "'");
        }
        boolean byTensor = by.equals("tensor");
        if (byTensor && (a.has("align-by") || a.flag("ignore-placement"))) {
            throw new UsageException("--by tensor pairs tensors by (rank, launch_id, phase, parameter_position or tensor_name):"
                    + " --align-by and --ignore-placement do not apply");
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
                    new PairKey(alignBy.equals("step"), a.flag("ignore-placement")), tolerances, a.getInt("parallelism", 0), byTensor);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    /** The {@code --report} file, or null. */
    public static Path reportOf(String[] argv) {
        Args a = Args.parse(argv, Set.of("ignore-placement"));
        return a.has("report") ? Path.of(a.get("report", null)) : null;
    }
}
