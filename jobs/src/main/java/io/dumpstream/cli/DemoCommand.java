package io.dumpstream.cli;

import io.dumpstream.options.UsageException;
import io.dumpstream.options.Cli;
import io.dumpstream.job.IngestConfig;
import io.dumpstream.job.LocalIngest;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.publish.PublisherConfig;
import io.dumpstream.table.HivePartition;
import io.dumpstream.table.LandedTables;

import org.apache.flink.configuration.Configuration;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.LinkedHashMap;
import java.util.stream.Stream;

import picocli.CommandLine.Option;

/**
 * {@code demo}: the whole pipeline on one machine with nothing installed: a local Kafka broker, the
 * ingestion job on a MiniCluster, synthetic ranks and the bundled example dumps (one of them
 * corrupt); it waits until every dump has landed, stops, and prints what landed and how to query it.
 */
public final class DemoCommand implements Command {
    static final String MARKER = ".dumpstream-demo";
    static final String RUN_ID = "demo";
    private static final int MAX_LINES = 12;

    @Override
    public String name() {
        return "demo";
    }

    @Override
    public String summary() {
        return "local broker + ingestion job + synthetic ranks: see dumps land as Parquet, then query them";
    }

    /** The options of demo. */
    static final class Options {
        @Option(names = "--out", paramLabel = "OUT", description = "tables under OUT/{snapshots,dumps,rejects}, broker and"
                + " checkpoints under OUT/_state (default ${DEFAULT-VALUE}); an OUT left by an earlier demo is emptied first")
        Path out = Path.of("out/demo");
        @Option(names = "--ranks", paramLabel = "N", description = "synthetic ranks (default ${DEFAULT-VALUE})")
        int ranks = 4;
        @Option(names = "--launches", paramLabel = "K", description = "dumps per rank (default ${DEFAULT-VALUE})")
        int launches = 6;
        @Option(names = "--records", paramLabel = "R", description = "records per dump (default ${DEFAULT-VALUE})")
        int records = 16;
        @Option(names = "--payload-bytes", paramLabel = "B", description = "typical bytes per record (default"
                + " ${DEFAULT-VALUE})")
        long payloadBytes = 16384;
        @Option(names = "--seed", paramLabel = "S", description = "generator seed (default ${DEFAULT-VALUE})")
        long seed = 1;
        @Option(names = "--parallelism", paramLabel = "N", description = "of the ingestion job (default: the number of"
                + " cores)")
        int parallelism = -1;
        @Option(names = "--timeout", paramLabel = "D", description = "give up when the dumps have not all landed by then"
                + " (default ${DEFAULT-VALUE})")
        Duration timeout = Duration.ofMinutes(5);
        @Option(names = "--dumps", paramLabel = "DIR", description = {"also publish every NAME.manifest.json + NAME.bin"
            + " pair in DIR (your own dumps, damaged ones included: they land with their reason like any rank's) and wait"
            + " for them too"})
        Path dumps;
        /** {@code -D key=value}: Flink configuration settings of the ingestion job. */
        @Option(names = "-D", paramLabel = Cli.FLINK_CONF_LABEL, description = Cli.FLINK_CONF_HELP)
        Map<String, String> flinkConf = new LinkedHashMap<>();
    }

    @Override
    public String usage() {
        return Cli.usage(name(), String.join("\n",
                "Starts a Kafka broker on a free loopback port, the ingestion job on a local Flink MiniCluster",
                "(checkpoint every 2 s) and RANKS synthetic ranks publishing LAUNCHES dumps each (run_id '" + RUN_ID + "'),",
                "plus the four bundled example dumps (one has an unknown dtype and is rejected). When every",
                "dump has landed it stops, prints the counts read back from the Parquet files and the DuckDB,",
                "Spark and Trino queries to run on them."), "", new Options(), new Verbosity());
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Verbosity verbosity = new Verbosity();
        Options o = Cli.parse(new Options(), argv, verbosity);
        verbosity.apply();
        Path root = o.out.toAbsolutePath().normalize();
        int ranks = o.ranks;
        int launches = o.launches;
        if (ranks < 1 || launches < 1) {
            throw new UsageException("--ranks and --launches must be >= 1, got " + ranks + " and " + launches);
        }
        Duration timeout = o.timeout;
        Path dumps = o.dumps != null ? o.dumps.toAbsolutePath().normalize() : null;
        int own = 0;
        if (dumps != null) {
            if (!Files.isDirectory(dumps)) {
                throw new UsageException("--dumps " + dumps + " is not a directory");
            }
            own = DecodeCommand.pairsIn(dumps).size();
            if (own == 0) {
                throw new UsageException("--dumps " + dumps + " holds no NAME.manifest.json + NAME.bin pair");
            }
            if (dumps.startsWith(root)) {
                throw new UsageException("--dumps " + dumps + " lies inside --out " + root + ", which demo empties first");
            }
        }
        prepare(root);
        Path state = root.resolve("_state");
        Path examples = Files.createDirectories(state.resolve("examples"));
        DecodeCommand.extractExamples(examples);
        int expected = ranks * launches + DecodeCommand.pairsIn(examples).size() + own;

        long t0 = System.nanoTime();
        try (LocalKafka kafka = LocalKafka.builder().dataDir(state.resolve("kafka")).defaultPartitions(2).build()) {
            kafka.start();
            kafka.createTopic(PublisherConfig.DEFAULT_TOPIC, 2);
            out.printf("demo: Kafka broker at %s%n", kafka.bootstrapServers());
            IngestConfig c = new IngestConfig();
            c.bootstrap = kafka.bootstrapServers();
            c.out = root.toString();
            c.checkpoints = state.resolve("checkpoints").toString();
            c.group = "dumpstream-demo";
            c.checkpointInterval = Duration.ofSeconds(2);
            c.assemblyTimeout = Duration.ofMinutes(2);
            c.parallelism = o.parallelism;
            c.resume = false;
            c.validate();
            io.dumpstream.storage.FlinkSettings.install(o.flinkConf);
            try (LocalIngest job = LocalIngest.start(c, new Configuration())) {
                out.printf("demo: ingestion job %s on a local MiniCluster, parallelism %d, tables under %s%n",
                        job.client().getJobID(), job.config().parallelism, root);
                out.flush();
                LocalIngest.noteCollector(err);
                String[] sim = {"--bootstrap", c.bootstrap, "--ranks", Integer.toString(ranks),
                    "--launches", Integer.toString(launches), "--records", Integer.toString(o.records),
                    "--payload-bytes", Long.toString(o.payloadBytes), "--seed", Long.toString(o.seed),
                    "--run-id", RUN_ID};
                if (new SimulateCommand().run(sim, out, err) != 0) {
                    return 1;
                }
                if (new PublishCommand().run(new String[] {"--bootstrap", c.bootstrap, "--dir", examples.toString()},
                        out, err) != 0) {
                    return 1;
                }
                if (dumps != null && new PublishCommand().run(new String[] {"--bootstrap", c.bootstrap, "--dir",
                    dumps.toString()}, out, err) != 0) {
                    return 1;
                }
                if (!awaitLanded(root, expected, job, timeout, err)) {
                    err.printf("dumpstream demo: only %d of %d dumps landed within %s%n",
                            new LandedTables(root).rowCount(HivePartition.DUMPS), expected, timeout);
                    return 1;
                }
                job.cancel(Duration.ofSeconds(60));
            }
        }
        out.printf("demo: all %d dumps landed in %.1f s; the job and the broker are stopped%n%n", expected,
                (System.nanoTime() - t0) / 1e9);
        printSummary(root, out);
        return 0;
    }

    /** Creates ROOT, or empties it when an earlier demo left it; refuses any other non-empty directory. */
    static void prepare(Path root) throws IOException {
        if (Files.isDirectory(root)) {
            boolean empty;
            try (Stream<Path> s = Files.list(root)) {
                empty = s.findAny().isEmpty();
            }
            if (!empty && !Files.exists(root.resolve(MARKER))) {
                throw new UsageException("--out " + root + " is not empty and was not written by an earlier demo;"
                        + " give an empty or new directory");
            }
            try (Stream<Path> s = Files.walk(root)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                    if (!p.equals(root)) {
                        Files.delete(p);
                    }
                }
            }
        }
        Files.createDirectories(root);
        Files.writeString(root.resolve(MARKER), "written by dumpstream demo; the next demo empties this directory\n");
    }

    private static boolean awaitLanded(Path root, int expected, LocalIngest job, Duration timeout, PrintStream err)
            throws Exception {
        LandedTables tables = new LandedTables(root);
        IngestProgress progress = new IngestProgress();
        long deadline = System.nanoTime() + timeout.toNanos();
        long nextLine = 0;
        while (System.nanoTime() < deadline) {
            long landed = tables.rowCount(HivePartition.DUMPS);
            if (landed >= expected) {
                return true;
            }
            if (job.status().isGloballyTerminalState()) {
                job.client().getJobExecutionResult().get();
                throw new IOException("the ingestion job ended with " + job.status());
            }
            if (System.nanoTime() >= nextLine) {
                err.printf("demo: %d/%d dumps committed | %s%n", landed, expected, progress.line());
                nextLine = System.nanoTime() + 5_000_000_000L;
            }
            Thread.sleep(250);
        }
        return false;
    }

    static void printSummary(Path root, PrintStream out) throws IOException {
        LandedTables t = new LandedTables(root);
        out.println("landed (read back from the committed Parquet files):");
        section(out, "dumps by run / outcome", t.countBy(HivePartition.DUMPS, "run_id", "outcome"));
        Map<String, Long> perPartition = t.rowsPerPartition(HivePartition.SNAPSHOTS);
        section(out, "snapshot rows by run / rank", byPrefix(perPartition, 2));
        section(out, "snapshot rows by stage (run / stage)", byRunAndStage(perPartition));
        section(out, "rejects by reason", t.countBy(HivePartition.REJECTS, "reason"));
        String g = root.toString().replace("'", "''");
        out.println();
        out.println("query it:");
        out.println("  DuckDB:  duckdb -c \"SELECT run, rank, stage, tensor_name, dtype, stored_shape, mean, l2_norm"
                + " FROM read_parquet('" + g + "/snapshots/**/*.parquet', hive_partitioning = true,"
                + " hive_types = {'run': VARCHAR, 'rank': INTEGER, 'stage': VARCHAR}) LIMIT 20\"");
        out.println("           duckdb -c \"SELECT run, rank, outcome, count(*) FROM read_parquet('" + g
                + "/dumps/**/*.parquet', hive_partitioning = true) GROUP BY ALL ORDER BY ALL\"");
        out.println("           duckdb -c \"SELECT reason, detail, tensor_name FROM read_parquet('" + g
                + "/rejects/**/*.parquet', hive_partitioning = true)\"");
        out.println("  Spark:   spark.read.parquet(\"file://" + root + "/snapshots\").groupBy(\"run\", \"rank\", \"stage\")"
                + ".count().show()");
        // the README's statements (TrinoReadsTablesIT runs those), ROOT filled in
        out.println("  Trino:   CREATE SCHEMA IF NOT EXISTS hive.default;");
        out.println("           CREATE TABLE hive.default.snapshots (run_id varchar, stage_name varchar, tensor_name varchar,"
                + " dtype varchar, numel bigint, nan_count bigint, mean double, l2_norm double, run varchar, rank integer,"
                + " stage varchar) WITH (format = 'PARQUET', external_location = 'local://" + root + "/snapshots',"
                + " partitioned_by = ARRAY['run', 'rank', 'stage']);");
        out.println("           CALL hive.system.sync_partition_metadata('default', 'snapshots', 'FULL');");
        out.println("           (dumps and rejects: README.md, \"Decode a dump from files\", the Trino block)");
    }

    private static Map<String, Long> byPrefix(Map<String, Long> perPartition, int parts) {
        Map<String, Long> m = new java.util.TreeMap<>();
        perPartition.forEach((k, v) -> {
            String[] p = k.split(" / ", -1);
            m.merge(String.join(" / ", java.util.Arrays.copyOf(p, Math.min(parts, p.length))), v, Long::sum);
        });
        return m;
    }

    private static Map<String, Long> byRunAndStage(Map<String, Long> perPartition) {
        Map<String, Long> m = new java.util.TreeMap<>();
        perPartition.forEach((k, v) -> {
            String[] p = k.split(" / ", -1);
            m.merge(p[0] + " / " + p[p.length - 1], v, Long::sum);
        });
        return m;
    }

    private static void section(PrintStream out, String title, Map<String, Long> counts) {
        out.println("  " + title + ":");
        if (counts.isEmpty()) {
            out.println("    (none)");
        }
        int shown = 0;
        long rest = 0;
        for (Map.Entry<String, Long> e : counts.entrySet()) {
            if (shown++ < MAX_LINES) {
                out.printf("    %-48s %8d%n", e.getKey(), e.getValue());
            } else {
                rest += e.getValue();
            }
        }
        if (shown > MAX_LINES) {
            out.printf("    %-48s %8d%n", "... " + (shown - MAX_LINES) + " more", rest);
        }
    }
}
