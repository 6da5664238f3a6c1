package io.dumpstream.cli;

import io.dumpstream.options.UsageException;
import io.dumpstream.options.Cli;
import io.dumpstream.decode.OfflineDecoder;
import io.dumpstream.storage.FlinkSettings;
import io.dumpstream.storage.TableOutput;
import io.dumpstream.table.TableWriter;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;

import picocli.CommandLine.Option;

/** {@code decode}: the offline decoder, from manifest and buffer files to the three Parquet tables. */
public final class DecodeCommand implements Command {
    private static final String MANIFEST_SUFFIX = ".manifest.json";
    private static final String[] EXAMPLE = {"all_dtypes", "truncation_and_empty", "multi_chunk", "corrupt_unknown_dtype"};

    @Override
    public String name() {
        return "decode";
    }

    @Override
    public String summary() {
        return "decode dump files offline into Parquet tables (snapshots, dumps, rejects)";
    }

    /** The options of decode: one pair (--manifest, --buffer), --dir or --example. */
    static final class Options {
        @Option(names = "--manifest", paramLabel = "M.manifest.json", description = "one dump's manifest (with --buffer)")
        Path manifest;
        @Option(names = "--buffer", paramLabel = "B.bin", description = "... and its buffer file")
        Path buffer;
        @Option(names = "--dir", paramLabel = "DIR", description = "every NAME.manifest.json + NAME.bin pair in DIR")
        Path dir;
        @Option(names = "--example", description = "the bundled example dumps")
        boolean example;
        @Option(names = "--out", paramLabel = "ROOT", required = true, description = "root of the tables: a local path"
                + " or a Flink file system URI such as s3://bucket/path")
        String out;
        /** {@code -D key=value}: settings of the file system of --out (decode runs no Flink job). */
        @Option(names = "-D", paramLabel = Cli.FLINK_CONF_LABEL, description = Cli.FLINK_CONF_STORAGE_HELP)
        Map<String, String> flinkConf = new LinkedHashMap<>();
    }

    @Override
    public String usage() {
        return Cli.usage(name(), String.join("\n",
                "Writes ROOT/snapshots/run=*/rank=*/stage=*/*.parquet, ROOT/dumps/run=*/rank=*/*.parquet and",
                "ROOT/rejects/run=*/rank=*/*.parquet from --manifest with --buffer, every pair of --dir or the bundled",
                "examples, and prints one line per dump."), String.join("\n",
                "Rejected records are data: the exit status is 0 when every input was processed, 2 for unusable",
                "arguments, 1 for unreadable files."), new Options(), new Verbosity());
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Verbosity verbosity = new Verbosity();
        Options o = Cli.parse(new Options(), argv, verbosity);
        verbosity.apply();
        String root = o.out;
        FlinkSettings.install(o.flinkConf);
        List<Path[]> pairs = new ArrayList<>();
        Path exampleDir = null;
        if (o.example) {
            exampleDir = Files.createTempDirectory("dumpstream-example");
            extractExamples(exampleDir);
            pairs.addAll(pairsIn(exampleDir));
        } else if (o.dir != null) {
            Path dir = o.dir;
            if (!Files.isDirectory(dir)) {
                throw new UsageException("--dir " + dir + " is not a directory");
            }
            pairs.addAll(pairsIn(dir));
            if (pairs.isEmpty()) {
                throw new UsageException("--dir " + dir + " holds no NAME.manifest.json + NAME.bin pair");
            }
        } else {
            if (o.manifest == null || o.buffer == null) {
                throw new UsageException("missing required option " + (o.manifest == null ? "--manifest" : "--buffer")
                        + " (or --dir, or --example)");
            }
            for (Path p : List.of(o.manifest, o.buffer)) {
                if (!Files.isRegularFile(p)) {
                    throw new UsageException("file " + p + " does not exist or is not a regular file");
                }
            }
            pairs.add(new Path[]{o.manifest, o.buffer});
        }
        try {
            return decode(root, pairs, exampleDir != null, out, err);
        } finally {
            if (exampleDir != null) {
                deleteExamples(exampleDir);
            }
        }
    }

    private static int decode(String root, List<Path[]> pairs, boolean examples, PrintStream out,
                              PrintStream err) throws Exception {
        long started = System.nanoTime();
        long bytes = 0;
        int done = 0;
        int accepted = 0;
        int rejected = 0;
        String location;
        try (TableOutput tables = TableOutput.open("--out", root, TableWriter.Options.defaults())) {
            location = tables.location();
            OfflineDecoder decoder = new OfflineDecoder(tables.writer(), Clock.systemUTC());
            for (Path[] pair : pairs) {
                OfflineDecoder.Summary s = decoder.decode(pair[0], pair[1]);
                out.println(s);
                done++;
                accepted += s.accepted();
                rejected += s.rejected();
                bytes += Math.max(0, Files.size(pair[1]));
                if (pairs.size() > 1) {
                    double secs = Math.max(1e-9, (System.nanoTime() - started) / 1e9);
                    err.printf("decode: %d/%d dumps, %.1f MiB, %.1f MiB/s%n", done, pairs.size(),
                            bytes / 1048576.0, bytes / 1048576.0 / secs);
                }
            }
        }
        out.printf("decoded %d dump(s): %d records accepted, %d rejected, tables under %s%n", done, accepted,
                rejected, location);
        if (examples) {
            out.println("query them, for example:");
            out.println("  duckdb -c \"SELECT run, rank, stage, tensor_name, dtype, numel, mean FROM read_parquet('"
                    + location + "/snapshots/**/*.parquet', hive_partitioning=true)\"");
        }
        return 0;
    }

    /** Removes the copies {@link #extractExamples} made (they are inputs only: the tables are under --out). */
    private static void deleteExamples(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
        }
        Files.deleteIfExists(dir);
    }

    /** Copies the bundled example dumps (NAME.manifest.json + NAME.bin pairs) into {@code dir}. */
    static void extractExamples(Path dir) throws IOException {
        for (String name : EXAMPLE) {
            for (String suffix : List.of(MANIFEST_SUFFIX, ".bin")) {
                try (InputStream in = DecodeCommand.class.getResourceAsStream("/examples/" + name + suffix)) {
                    if (in == null) {
                        throw new IOException("bundled example " + name + suffix + " is missing from the jar");
                    }
                    Files.copy(in, dir.resolve(name + suffix));
                }
            }
        }
    }

    static List<Path[]> pairsIn(Path dir) throws IOException {
        List<Path[]> pairs = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path m : s.sorted().toList()) {
                String n = m.getFileName().toString();
                if (n.endsWith(MANIFEST_SUFFIX) && !n.startsWith(".")) {
                    Path bin = dir.resolve(n.substring(0, n.length() - MANIFEST_SUFFIX.length()) + ".bin");
                    if (Files.isRegularFile(bin)) {
                        pairs.add(new Path[]{m, bin});
                    }
                }
            }
        }
        return pairs;
    }
}
