package io.dumpstream.tensors;

import io.dumpstream.options.Cli;
import io.dumpstream.options.UsageException;

import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The options of the tensors job, shared by the {@code tensors} command and {@link TensorsJob#main} on a cluster. */
public final class TensorsOptions {
    @Option(names = "--in", paramLabel = "ROOT", required = true,
            description = "root of the snapshots table (the decode/ingest output): a local path or Flink URI")
    String in;
    @Option(names = "--out", paramLabel = "OUT", description = "root of the tensors table (default: ROOT)")
    String out;
    @Option(names = "--run", paramLabel = "RUN", description = "only this run (repeatable; default: every run under"
            + " ROOT/snapshots)")
    List<String> runs = new ArrayList<>();
    @Option(names = "--parallelism", paramLabel = "N", description = "default: the number of cores")
    int parallelism;
    /** {@code -D key=value}: Flink configuration settings of the job. */
    @Option(names = "-D", paramLabel = Cli.FLINK_CONF_LABEL, description = Cli.FLINK_CONF_HELP)
    public Map<String, String> flinkConf = new LinkedHashMap<>();

    public TensorsOptions() {
    }

    /** Parses the options ({@code mixins}: option groups of the command line around the job, such as --verbose). */
    public static TensorsOptions of(String[] argv, Object... mixins) {
        return Cli.parse(new TensorsOptions(), argv, mixins);
    }

    /** Parses and checks the options; every error names the option and the value. */
    public static TensorsConfig parse(String[] argv) {
        return of(argv).config();
    }

    /** The checked settings; every error names the option and the value. */
    public TensorsConfig config() {
        Set<String> distinct = new LinkedHashSet<>();
        for (String r : runs) {
            if (r.isEmpty()) {
                throw new UsageException("option --run needs a run id, got ''");
            }
            distinct.add(r);
        }
        try {
            return new TensorsConfig(in, out == null ? in : out, List.copyOf(distinct), parallelism);
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }
}
