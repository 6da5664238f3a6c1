package io.dumpstream.cli;

import io.dumpstream.options.UsageException;
import io.dumpstream.options.Args;
import io.dumpstream.decode.OfflineDecoder;
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
import java.util.Set;
import java.util.stream.Stream;

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

    @Override
    public String usage() {
        return String.join("\n",
                "usage: decode --manifest M.manifest.json --buffer B.bin --out ROOT",
                "       decode --dir DIR --out ROOT        every NAME.manifest.json + NAME.bin pair in DIR",
                "       decode --example --out ROOT        the bundled example dumps",
                "",
                "Writes ROOT/snapshots/run=*/rank=*/stage=*/*.parquet, ROOT/dumps/run=*/rank=*/*.parquet and",
                "ROOT/rejects/run=*/rank=*/*.parquet, and prints one line per dump. Rejected records are data:",
                "the exit status is 0 when every input was processed, 2 for unusable arguments, 1 for unreadable",
                "files.");
    }

    @Override
    public int run(String[] argv, PrintStream out, PrintStream err) throws Exception {
        Args a = Args.parse(argv, Set.of("example"));
        a.allowOnly(Set.of("manifest", "buffer", "dir", "out", "example"));
        String root = a.require("out");
        List<Path[]> pairs = new ArrayList<>();
        Path exampleDir = null;
        if (a.flag("example")) {
            exampleDir = Files.createTempDirectory("dumpstream-example");
            extractExamples(exampleDir);
            pairs.addAll(pairsIn(exampleDir));
        } else if (a.has("dir")) {
            Path dir = Path.of(a.get("dir", null));
            if (!Files.isDirectory(dir)) {
                throw new UsageException("--dir " + dir + " is not a directory");
            }
            pairs.addAll(pairsIn(dir));
            if (pairs.isEmpty()) {
                throw new UsageException("--dir " + dir + " holds no NAME.manifest.json + NAME.bin pair");
            }
        } else {
            Path manifest = Path.of(a.require("manifest"));
            Path buffer = Path.of(a.require("buffer"));
            for (Path p : List.of(manifest, buffer)) {
                if (!Files.isRegularFile(p)) {
                    throw new UsageException("file " + p + " does not exist or is not a regular file");
                }
            }
            pairs.add(new Path[]{manifest, buffer});
        }
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
        if (exampleDir != null) {
            out.println("query them, for example:");
            out.println("  duckdb -c \"SELECT run, rank, stage, tensor_name, dtype, numel, mean FROM read_parquet('"
                    + location + "/snapshots/**/*.parquet', hive_partitioning=true)\"");
        }
        return 0;
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
