package io.dumpstream.iceberg;

import io.dumpstream.testing.IcebergRead;
import io.dumpstream.testing.Postgres;

import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * What the Iceberg commit of one checkpoint costs (the committer's {@code append}: footers read for the
 * metrics, a manifest, a manifest list, a metadata file, the catalog row updated in PostgreSQL), in ms
 * and in metadata bytes written, for 4, 16 and 64 files per checkpoint (the job commits one file per
 * partition and sink subtask touched in the checkpoint), 40 commits each on one table, medians. Then
 * the same with compaction on ({@code --compact-checkpoints 1}): each checkpoint an append of k parts and
 * the rewrite of the previous checkpoint's k parts into k merged files (the job merges the parts of one
 * partition, and with a compaction per checkpoint that is one part per partition and subtask); the
 * rewrite's cost (the scan of the partitions' live files, the footers of the merged files, a manifest
 * for the removed parts and one for the added files) is reported apart.
 *
 * <pre>mvn -pl jobs -am test -Dtest=IcebergCommitBenchmark -Dsurefire.failIfNoSpecifiedTests=false -DexcludedTags=none</pre>
 */
@Tag("benchmark")
class IcebergCommitBenchmark {
    private static final int COMMITS = 40;

    @TempDir
    Path dir;

    /**
     * Files per checkpoint to measure: {@code -Diceberg.bench.files=4,16,64} (the default); today's dump shapes
     * close about 7 (64 MiB dumps) and 89 (1 MiB dumps) files per checkpoint across the three tables
     * (IngestOnS3Benchmark), so {@code -Diceberg.bench.files=7,89} puts all of them in one table's commit: an
     * upper bound of a checkpoint's cost for each shape.
     */
    static int[] sizes() {
        return java.util.Arrays.stream(System.getProperty("iceberg.bench.files", "4,16,64").split(","))
                .map(String::trim).mapToInt(Integer::parseInt).toArray();
    }

    @Test
    void commitCostPerCheckpoint() throws Exception {
        Path out = IcebergMaintenanceTest.vectorTables(dir);
        List<CommittedFile> base = IcebergMaintenanceTest.files(out, "snapshots");
        String root = IcebergTables.location(out.toString());
        Postgres pg = Postgres.get();
        for (int k : sizes()) {
            IcebergSettings s = new IcebergSettings(pg.url(), root + "/_iceberg", "bench" + k).validate();
            Catalog catalog = IcebergTables.open(s, Map.of());
            IcebergTables.ensure(catalog, s, root);
            Table t = IcebergRead.load(catalog, s, "snapshots");
            Path metadata = IcebergMaintenanceTest.local(t.location() + "/metadata");
            // k distinct files per commit: hard links of the vectors' snapshot files under new names
            List<Long> millis = new ArrayList<>();
            List<Long> bytes = new ArrayList<>();
            for (int c = 0; c < COMMITS; c++) {
                List<CommittedFile> files = new ArrayList<>();
                for (int i = 0; i < k; i++) {
                    CommittedFile f = base.get(i % base.size());
                    String name = "part-bench-" + k + "-" + c + "-" + i + ".parquet";
                    Path src = out.resolve(f.bucket).resolve(f.name);
                    Files.createLink(src.resolveSibling(name), src);
                    files.add(new CommittedFile(f.bucket, name, f.size, c));
                }
                long before = size(metadata);
                long t0 = System.nanoTime();
                IcebergCommitter.append(t, IcebergTables.mapping(t), "snapshots", root, files, c + 1, "bench", "bench");
                millis.add((System.nanoTime() - t0) / 1_000_000);
                bytes.add(size(metadata) - before);
            }
            long lastMetadata;
            try (Stream<Path> m = Files.list(metadata)) {
                lastMetadata = m.filter(p -> p.toString().endsWith(".metadata.json"))
                        .mapToLong(p -> p.toFile().length()).max().orElse(0);
            }
            System.out.printf("iceberg commit, %d files per checkpoint: median %d ms (p90 %d ms, first %d ms), metadata"
                            + " written per commit median %d bytes (last metadata.json %d bytes after %d commits)%n", k,
                    median(millis), p90(millis), millis.get(0), median(bytes), lastMetadata, COMMITS);
            IcebergTables.close(catalog);
        }
        for (int k : sizes()) {
            IcebergSettings s = new IcebergSettings(pg.url(), root + "/_iceberg", "benchc" + k).validate();
            Catalog catalog = IcebergTables.open(s, Map.of());
            IcebergTables.ensure(catalog, s, root);
            Table t = IcebergRead.load(catalog, s, "snapshots");
            Path metadata = IcebergMaintenanceTest.local(t.location() + "/metadata");
            List<Long> appendMillis = new ArrayList<>();
            List<Long> rewriteMillis = new ArrayList<>();
            List<Long> rewriteBytes = new ArrayList<>();
            List<CommittedFile> previous = List.of();
            for (int c = 0; c < COMMITS; c++) {
                List<CommittedFile> parts = new ArrayList<>();
                List<CommittedFile> merged = new ArrayList<>();
                for (int i = 0; i < k; i++) {
                    CommittedFile f = base.get(i % base.size());
                    Path src = out.resolve(f.bucket).resolve(f.name);
                    String part = ".part-benchc-" + k + "-" + c + "-" + i + ".parquet";
                    Files.createLink(src.resolveSibling(part), src);
                    parts.add(new CommittedFile(f.bucket, part, f.size, c + 1, CommittedFile.APPEND));
                    if (!previous.isEmpty()) {
                        CommittedFile p = previous.get(i);
                        String name = "compacted-" + p.name.substring(1);
                        Files.createLink(src.resolveSibling(name), src);
                        merged.add(new CommittedFile(f.bucket, name, f.size, c + 1, CommittedFile.MERGED));
                    }
                }
                long t0 = System.nanoTime();
                IcebergCommitter.append(t, IcebergTables.mapping(t), "snapshots", root, parts, c + 1, "bench", "bench");
                appendMillis.add((System.nanoTime() - t0) / 1_000_000);
                if (!previous.isEmpty()) {
                    long before = size(metadata);
                    long t1 = System.nanoTime();
                    int n = IcebergCommitter.rewrite(t, IcebergTables.mapping(t), "snapshots", root, previous, merged,
                            c + 1, "bench", "bench" + IcebergCommitter.REWRITE_SUFFIX);
                    rewriteMillis.add((System.nanoTime() - t1) / 1_000_000);
                    rewriteBytes.add(size(metadata) - before);
                    if (n != k) {
                        throw new AssertionError("rewrite " + c + " added " + n + " files, not " + k);
                    }
                }
                previous = parts;
            }
            System.out.printf("iceberg commit with compaction, %d parts per checkpoint: append median %d ms; rewrite of"
                            + " %d parts into %d merged files median %d ms (p90 %d ms), metadata written per rewrite"
                            + " median %d bytes%n", k, median(appendMillis), k, k, median(rewriteMillis),
                    p90(rewriteMillis), median(rewriteBytes));
            IcebergTables.close(catalog);
        }
    }

    private static long size(Path dir) throws Exception {
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        }
    }

    private static long median(List<Long> v) {
        List<Long> s = new ArrayList<>(v);
        s.sort(null);
        return s.get(s.size() / 2);
    }

    private static long p90(List<Long> v) {
        List<Long> s = new ArrayList<>(v);
        s.sort(null);
        return s.get((int) Math.min(s.size() - 1, Math.round(s.size() * 0.9)));
    }
}
