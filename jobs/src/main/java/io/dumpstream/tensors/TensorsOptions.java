package io.dumpstream.tensors;

import io.dumpstream.options.Args;
import io.dumpstream.options.UsageException;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** The options of the tensors job, shared by the {@code tensors} command and {@link TensorsJob#main} on a cluster. */
public final class TensorsOptions {
    static final Set<String> OPTIONS = Set.of("in", "out", "run", "parallelism");

    private TensorsOptions() {
    }

    /** Parses and checks the options; every error names the option and the value. */
    public static TensorsConfig parse(String[] argv) {
        Args a = Args.parse(argv, Set.of());
        a.allowOnly(OPTIONS);
        if (!a.positional().isEmpty()) {
            throw new UsageException("unexpected argument '" + a.positional().get(0) + "' (options are --in, --out, --run,"
                    + " --parallelism)");
        }
        String in = a.require("in");
        Set<String> runs = new LinkedHashSet<>();
        for (String r : a.all("run")) {
            if (r.isEmpty()) {
                throw new UsageException("option --run needs a run id, got ''");
            }
            runs.add(r);
        }
        try {
            return new TensorsConfig(in, a.get("out", in), List.copyOf(runs), a.getInt("parallelism", 0));
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }
}
