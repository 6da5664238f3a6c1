package io.dumpstream.tensors;

import io.dumpstream.compare.Partition;
import io.dumpstream.job.IngestJob;
import io.dumpstream.job.Routed;
import io.dumpstream.manifest.AvroTrust;
import io.dumpstream.schema.ReassembledTensor;
import io.dumpstream.table.HivePartition;
import io.dumpstream.table.ParquetWriters;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeHint;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The tensors job, a Flink BATCH job over the snapshots table of some runs:
 *
 * <pre>
 * TensorSource (one record per snapshots/run=R/rank=r group: every stage's files of the rank)
 *   -> ReassembleGroups (view columns read and sorted, payloads read page by page, one Reassembler
 *      per tensor; chained, no shuffle)
 *      --rows--> FileSink tensors/run=R/rank=r
 *      \-notes (group summaries, disagreements, rejected views)-> the client
 * </pre>
 */
public final class TensorsJob {
    public static final String NAME = "dumpstream-tensors";
    /** Row groups of the tensors table (rows are small: no payloads). */
    static final long ROW_GROUP_BYTES = 8L << 20;
    static final long SINK_BUFFER_BYTES = 64L << 20;
    private static final double MIB = 1024.0 * 1024.0;

    private TensorsJob() {
    }

    /** On a cluster: {@code flink run -c io.dumpstream.tensors.TensorsJob dumpstream.jar --in ... (the command's options)}. */
    public static void main(String[] args) throws Exception {
        TensorsConfig c = TensorsOptions.parse(args);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(configuration(c));
        runAndReport(env, c, source(c), System.out);
    }

    /** What a run found: the totals and the finding lines printed. */
    public record Result(long groups, long tensors, long views, long payloadBytes, long partial, long disagreeing,
                         long disagreements, long rejectedViews, List<String> lines) {
    }

    /**
     * Runs the job on {@code env}, printing a line per group as it finishes, a line per disagreement and
     * rejected view, and the totals.
     */
    public static Result runAndReport(StreamExecutionEnvironment env, TensorsConfig c, TensorSource source, PrintStream out)
            throws Exception {
        long started = System.nanoTime();
        long groups = 0;
        long tensors = 0;
        long views = 0;
        long bytes = 0;
        long partial = 0;
        long disagreeing = 0;
        long disagreements = 0;
        long rejected = 0;
        long dropped = 0;
        List<String> lines = new ArrayList<>();
        try (CloseableIterator<TensorNote> it = build(env, c, source).executeAndCollect(NAME)) {
            while (it.hasNext()) {
                TensorNote n = it.next();
                if (n.line != null) {
                    lines.add(n.line);
                    out.println(n.line);
                    continue;
                }
                groups++;
                tensors += n.tensors;
                views += n.views;
                bytes += n.payloadBytes;
                partial += n.partial;
                disagreeing += n.disagreeing;
                disagreements += n.disagreements;
                rejected += n.rejectedViews;
                dropped += n.linesDropped;
                out.printf(Locale.ROOT, "tensors: %s done: %d tensors from %d views (%.1f MiB)%n", n.group, n.tensors, n.views,
                        n.payloadBytes / MIB);
            }
        }
        double secs = (System.nanoTime() - started) / 1e9;
        if (dropped > 0) {
            out.println("... " + dropped + " more findings (at most " + ReassembleGroups.LINES_PER_GROUP
                    + " lines per run and rank): see the tensors table's disagreements and views columns");
        }
        out.printf(Locale.ROOT, "tensors: %d tensors of %d run/rank partitions from %d views (%.1f MiB) in %.1f s:"
                        + " %d with coverage < 1, %d with disagreeing overlaps (%d disagreements), %d views rejected%n",
                tensors, groups, views, bytes / MIB, secs, partial, disagreeing, disagreements, rejected);
        out.println("table under " + location(c.out()) + " (" + TensorPaths.TENSORS + "/run=*/rank=*/*.parquet)");
        return new Result(groups, tensors, views, bytes, partial, disagreeing, disagreements, rejected, List.copyOf(lines));
    }

    private static String location(String out) {
        return out.contains("://") ? out : java.nio.file.Path.of(out).toAbsolutePath().toString();
    }

    /** Batch mode, object reuse, the job name and the parallelism. */
    public static Configuration configuration(TensorsConfig c) {
        Configuration conf = new Configuration();
        conf.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
        conf.set(PipelineOptions.OBJECT_REUSE, true);
        conf.set(PipelineOptions.NAME, NAME);
        if (c.parallelism() > 0) {
            conf.set(CoreOptions.DEFAULT_PARALLELISM, c.parallelism());
        }
        return conf;
    }

    /**
     * The run directories to read: every {@code --run} (each must have snapshots) or every run under
     * {@code in/snapshots}. A run whose tensors already exist under {@code out} is an error (a second
     * run would add every row again).
     */
    public static TensorSource source(TensorsConfig c) throws IOException {
        Path snapshots = new Path(uri(c.in()) + "/" + HivePartition.SNAPSHOTS);
        FileSystem fs = snapshots.getFileSystem();
        if (!fs.exists(snapshots)) {
            throw new IllegalArgumentException("--in " + c.in() + " has no snapshots table (no directory " + snapshots + ")");
        }
        List<Path> runs = new ArrayList<>();
        if (c.runs().isEmpty()) {
            runs.addAll(TensorGroups.runDirs(snapshots));
            if (runs.isEmpty()) {
                throw new IllegalArgumentException("--in " + c.in() + ": " + snapshots + " holds no run=<run> directory");
            }
        } else {
            for (String run : c.runs()) {
                Path dir = new Path(snapshots, HivePartition.segment(HivePartition.RUN, run));
                if (!fs.exists(dir)) {
                    throw new IllegalArgumentException("--run '" + run + "': --in " + c.in() + " has no snapshots of it (no"
                            + " directory " + dir + ")");
                }
                runs.add(dir);
            }
        }
        List<String> dirs = new ArrayList<>();
        for (Path run : runs) {
            Path existing = new Path(uri(c.out()) + "/" + TensorPaths.TENSORS + "/" + run.getName());
            if (existing.getFileSystem().exists(existing)) {
                throw new IllegalArgumentException("--out " + c.out() + " already holds tensors of " + run.getName() + " ("
                        + existing + "): remove that directory or choose another --out");
            }
            dirs.add(run.toString());
        }
        return new TensorSource(dirs);
    }

    /** The graph from the source to the sink; returns the notes for the client. */
    public static DataStream<TensorNote> build(StreamExecutionEnvironment env, TensorsConfig c, TensorSource source) {
        AvroTrust.ensure();
        SingleOutputStreamOperator<Routed<ReassembledTensor>> rows = groups(env, source)
                .process(new ReassembleGroups())
                .returns(new TypeHint<Routed<ReassembledTensor>>() { })
                .uid("tensors-reassemble").name("read and reassemble tensors of each run and rank");
        ParquetWriters.Settings parquet = ParquetWriters.Settings.defaults().withRowGroupBytes(ROW_GROUP_BYTES);
        rows.sinkTo(IngestJob.fileSink(uri(c.out()), ReassembledTensor.class, parquet, SINK_BUFFER_BYTES))
                .uid("tensors-sink").name("tensors");
        return rows.getSideOutput(ReassembleGroups.NOTES);
    }

    static DataStream<Partition> groups(StreamExecutionEnvironment env, TensorSource source) {
        return env.fromSource(source, WatermarkStrategy.noWatermarks(), "snapshot run/rank groups").uid("tensors-groups");
    }

    /** A local path as a file URI; a URI as it is. */
    static String uri(String location) {
        if (location.contains("://")) {
            return location.endsWith("/") ? location.substring(0, location.length() - 1) : location;
        }
        URI u = java.nio.file.Path.of(location).toAbsolutePath().normalize().toUri();
        String s = u.toString();
        return s.endsWith("/") ? s.substring(0, s.length() - 1) : s;
    }
}
