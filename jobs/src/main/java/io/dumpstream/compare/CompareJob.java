package io.dumpstream.compare;

import io.dumpstream.job.IngestJob;
import io.dumpstream.manifest.AvroTrust;
import io.dumpstream.job.Routed;
import io.dumpstream.schema.FirstDivergence;
import io.dumpstream.schema.TensorComparison;
import io.dumpstream.table.ParquetWriters;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeHint;
import org.apache.flink.api.common.typeinfo.TypeInformation;
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
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.EnumMap;
import java.util.Map;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;

/**
 * The comparison job, a Flink BATCH job over the snapshot tables of two runs:
 *
 * <pre>
 * PartitionSource (one record per snapshots/run=A|B/rank=r/stage=s directory, assigned on request)
 *   -> ComparePartitions (keys read, paired, payloads read page by page and compared; chained, no shuffle)
 *      --rows--> FileSink comparisons/baseline=A/candidate=B/rank=r
 *      \-non-PASS-> keyBy(rank) -> EarliestDivergence -> FileSink first_divergence/baseline=A/candidate=B
 * </pre>
 *
 * Pairing keys include rank and stage and the writers derive the partition directory from them, so
 * every pair lies in one partition and only result rows (no payloads) cross the network.
 */
public final class CompareJob {
    public static final String NAME = "dumpstream-compare";
    /** Row groups of the result tables (rows are small: no payloads). */
    static final long RESULT_ROW_GROUP_BYTES = 8L << 20;
    static final long SINK_BUFFER_BYTES = 64L << 20;

    private CompareJob() {
    }

    /**
     * On a cluster: {@code flink run -c io.dumpstream.compare.CompareJob dumpstream-flink-job.jar --root ... (compare's
     * options)}; {@code --report FILE} is written on the client once the job has finished, as by the local command.
     */
    public static void main(String[] args) throws Exception {
        CompareConfig c = CompareOptions.parse(args);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(configuration(c));
        runAndReport(env, c, source(c), CompareOptions.reportOf(args), System.out);
    }

    /**
     * Runs the job on {@code env}, collecting the result rows (small: no payloads) to print the verdict counts and,
     * when {@code report} is not null, to write the HTML report there (written aside, then moved into place).
     */
    public static List<FirstDivergence> runAndReport(StreamExecutionEnvironment env, CompareConfig c, PartitionSource partitions,
                                                     java.nio.file.Path report, PrintStream out) throws Exception {
        List<FirstDivergence> rows = new ArrayList<>();
        long started = System.nanoTime();
        try (CloseableIterator<FirstDivergence> it = build(env, c, partitions).executeAndCollect(NAME)) {
            while (it.hasNext()) {
                rows.add(it.next());
            }
        }
        double secs = (System.nanoTime() - started) / 1e9;
        Map<Verdict, Integer> counts = new EnumMap<>(Verdict.class);
        for (Verdict v : Verdict.values()) {
            counts.put(v, 0);
        }
        for (FirstDivergence r : rows) {
            counts.merge(Verdict.valueOf(r.getVerdict()), 1, Integer::sum);
        }
        out.printf("compare %s vs %s: %d %s in %.1f s: %s%n", c.baseline(), c.candidate(), rows.size(),
                c.byTensor() ? "tensors" : "pairs", secs, counts);
        out.println("tables under " + (c.out().contains("://") ? c.out() : java.nio.file.Path.of(c.out()).toAbsolutePath())
                + (c.byTensor() ? " (tensor_comparisons/, tensor_first_divergence/)" : " (comparisons/, first_divergence/)"));
        if (report != null) {
            java.nio.file.Path parent = report.toAbsolutePath().getParent();
            Files.createDirectories(parent);
            java.nio.file.Path tmp = Files.createTempFile(parent, ".report-", ".html.tmp");
            try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                Report.write(w, c.baseline(), c.candidate(), rows, Instant.now().toString(), c.byTensor());
            }
            Files.move(tmp, report, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            out.println("report " + report.toAbsolutePath());
        }
        return rows;
    }

    /** Batch mode, object reuse, the job name and the parallelism. */
    public static Configuration configuration(CompareConfig c) {
        Configuration conf = new Configuration();
        conf.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
        conf.set(PipelineOptions.OBJECT_REUSE, true);
        conf.set(PipelineOptions.NAME, NAME);
        if (c.parallelism() > 0) {
            conf.set(CoreOptions.DEFAULT_PARALLELISM, c.parallelism());
        }
        return conf;
    }

    /** The partitions of both runs' snapshot tables; a run without snapshots is an error naming it. */
    public static PartitionSource source(CompareConfig c) throws IOException {
        List<String> dirs = new ArrayList<>();
        for (String run : List.of(c.baseline(), c.candidate())) {
            Path dir = new Path(uri(c.root()) + "/" + ComparePaths.snapshotsOf(run));
            FileSystem fs = dir.getFileSystem();
            if (!fs.exists(dir)) {
                throw new IllegalArgumentException("--root " + c.root() + " has no snapshots of run '" + run + "' (no directory "
                        + dir + ")");
            }
            dirs.add(dir.toString());
        }
        return new PartitionSource(dirs, c.byTensor());
    }

    /** The graph from the given partition source to both sinks; returns the result rows (for a report). */
    public static DataStream<FirstDivergence> build(StreamExecutionEnvironment env, CompareConfig c, PartitionSource partitions) {
        AvroTrust.ensure();
        SingleOutputStreamOperator<FirstDivergence> results = partitions(env, partitions)
                .flatMap(new ComparePartitions(c.baseline(), c.candidate(), c.keys(), c.tolerances(), false, c.byTensor()),
                        TypeInformation.of(FirstDivergence.class))
                .uid("compare-pairs").name(c.byTensor()
                        ? "reassemble tensors per rank, compare with the reference"
                        : "read and compare partitions of " + c.baseline() + " and " + c.candidate());
        ParquetWriters.Settings parquet = ParquetWriters.Settings.defaults().withRowGroupBytes(RESULT_ROW_GROUP_BYTES);
        String out = uri(c.out());
        results.map(new ToComparison(c.baseline(), c.candidate(), c.byTensor()))
                .returns(new TypeHint<Routed<TensorComparison>>() { })
                .uid("compare-route").name("route comparisons")
                .sinkTo(IngestJob.fileSink(out, TensorComparison.class, parquet, SINK_BUFFER_BYTES))
                .uid("compare-sink-comparisons").name("comparisons");
        boolean byTensor = c.byTensor();
        results.filter(r -> PairRows.diverged(r, byTensor))
                .uid("compare-diverged").name("non-PASS")
                .keyBy(FirstDivergence::getRank, TypeInformation.of(Integer.class))
                .reduce(new EarliestDivergence())
                .uid("compare-earliest").name("earliest divergence per rank")
                .map(new ToDivergence(c.baseline(), c.candidate(), c.byTensor()))
                .returns(new TypeHint<Routed<FirstDivergence>>() { })
                .uid("compare-route-first").name("route first divergence")
                .sinkTo(IngestJob.fileSink(out, FirstDivergence.class, parquet, SINK_BUFFER_BYTES))
                .uid("compare-sink-first").name("first_divergence");
        return results;
    }

    /** The partitions as a stream (one record per partition, handed out to the subtasks on request). */
    public static DataStream<Partition> partitions(StreamExecutionEnvironment env, PartitionSource partitions) {
        return env.fromSource(partitions, WatermarkStrategy.noWatermarks(), "snapshot partitions")
                .uid("compare-partitions");
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

    /** A result row to its comparisons partition. */
    public static final class ToComparison implements MapFunction<FirstDivergence, Routed<TensorComparison>> {
        private static final long serialVersionUID = 1L;
        private final String baseline;
        private final String candidate;
        private final boolean byTensor;

        public ToComparison(String baseline, String candidate) {
            this(baseline, candidate, false);
        }

        /** With {@code byTensor}, to the {@code tensor_} tables of {@code compare --by tensor}. */
        public ToComparison(String baseline, String candidate, boolean byTensor) {
            this.baseline = baseline;
            this.candidate = candidate;
            this.byTensor = byTensor;
        }

        @Override
        public Routed<TensorComparison> map(FirstDivergence r) {
            return new Routed<>(byTensor ? ComparePaths.tensorComparisons(baseline, candidate, r.getRank())
                    : ComparePaths.comparisons(baseline, candidate, r.getRank()), PairRows.comparison(r), 0);
        }
    }

    /** A first-divergence row to its table directory. */
    public static final class ToDivergence implements MapFunction<FirstDivergence, Routed<FirstDivergence>> {
        private static final long serialVersionUID = 1L;
        private final String baseline;
        private final String candidate;
        private final boolean byTensor;

        public ToDivergence(String baseline, String candidate) {
            this(baseline, candidate, false);
        }

        /** With {@code byTensor}, to the {@code tensor_} tables of {@code compare --by tensor}. */
        public ToDivergence(String baseline, String candidate, boolean byTensor) {
            this.baseline = baseline;
            this.candidate = candidate;
            this.byTensor = byTensor;
        }

        @Override
        public Routed<FirstDivergence> map(FirstDivergence r) {
            return new Routed<>(byTensor ? ComparePaths.tensorFirstDivergence(baseline, candidate)
                    : ComparePaths.firstDivergence(baseline, candidate), r, 0);
        }
    }
}
