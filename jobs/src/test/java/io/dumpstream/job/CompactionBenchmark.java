package io.dumpstream.job;

import io.dumpstream.local.LocalKafka;
import io.dumpstream.table.DuckDb;
import io.dumpstream.table.HivePartition;
import io.dumpstream.table.LandedTables;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Small files for the readers, before and after compaction, in one run: the same steady stream of
 * 1 MiB dumps (4 ranks, the simulator's stage mix) is ingested twice, with 2 s checkpoints, once without
 * compaction and once with {@code --compact-checkpoints N}; per run it prints the visible snapshot files,
 * the partitions, files per partition (median, max), the job's process CPU per MiB, and the median of 5
 * full DuckDB scans of the snapshots (count, sum of payload bytes, min/max of the statistics). Both
 * runs must land the same rows (the scan's figures are compared exactly).
 *
 * <pre>
 * mvn -B -o -q -pl jobs verify -Dtest=CompactionBenchmark -Dsurefire.failIfNoSpecifiedTests=false -DexcludedTags=none -DskipITs
 * # knobs: -Dbench.compactSeconds=40 -Dbench.compactN=5 -Dbench.compactInterval=2
 * </pre>
 */
@Tag("benchmark")
class CompactionBenchmark {
    private static final long SECONDS = Long.getLong("bench.compactSeconds", 40);
    private static final int N = Integer.getInteger("bench.compactN", 5);
    private static final Duration INTERVAL = Duration.ofSeconds(Long.getLong("bench.compactInterval", 2));
    private static final double RATE = 8; // dumps per second
    private static final double MIB = 1024.0 * 1024.0;
    static final String SCAN = "SELECT count(*) AS n, sum(octet_length(data)) AS bytes, min(\"min\") AS lo,"
            + " max(\"max\") AS hi, count(mean) AS means, count(DISTINCT stage) AS stages FROM read_parquet(%s, hive_partitioning=true,"
            + " hive_types={'run': VARCHAR, 'rank': INTEGER, 'stage': VARCHAR})";

    @Test
    void filesAndScanWithoutAndWithCompaction() throws Exception {
        IngestThroughputBenchmark.Shape shape = new IngestThroughputBenchmark.Shape("1 MiB", 16, 48 << 10);
        List<String> report = new ArrayList<>();
        Map<String, Object> first = null;
        try (LocalKafka kafka = LocalKafka.startEphemeral()) {
            for (int n : new int[] {0, N}) {
                Path dir = Files.createTempDirectory("compaction-bench-");
                String topic = "compaction-" + n;
                kafka.createTopic(topic, 2);
                kafka.createTopic(topic + ".dlq", 1);
                try {
                    IngestConfig c = IngestThroughputBenchmark.config(kafka, topic, dir, INTERVAL);
                    c.compactCheckpoints = n;
                    LandedTables tables = new LandedTables(dir.resolve("out"));
                    double cpuMsPerMib;
                    IngestThroughputBenchmark.Backlog b;
                    try (LocalIngest job = LocalIngest.start(c.validate(), new Configuration())) {
                        Thread.sleep(3000); // up and polling
                        long cpu0 = IngestThroughputBenchmark.processCpuNanos();
                        b = IngestThroughputBenchmark.publish(kafka, topic, shape, 5,
                                (long) (SECONDS * RATE * shape.records() * shape.payloadBytes()), RATE);
                        long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
                        while (tables.rowCount(HivePartition.SNAPSHOTS) < b.records() && System.nanoTime() < deadline) {
                            Thread.sleep(200);
                        }
                        cpuMsPerMib = (IngestThroughputBenchmark.processCpuNanos() - cpu0) / 1e6 / (b.bytes() / MIB);
                    }
                    List<Path> files = tables.files(HivePartition.SNAPSHOTS);
                    Map<Path, Integer> perPartition = new TreeMap<>();
                    files.forEach(f -> perPartition.merge(f.getParent(), 1, Integer::sum));
                    List<Integer> counts = new ArrayList<>(perPartition.values());
                    counts.sort(null);
                    String glob = DuckDb.glob(dir.resolve("out"), "snapshots/**/[!.]*.parquet");
                    List<Double> scans = new ArrayList<>();
                    Map<String, Object> result = null;
                    for (int i = 0; i < 5; i++) {
                        long t0 = System.nanoTime();
                        result = DuckDb.query(String.format(SCAN, glob)).get(0);
                        scans.add((System.nanoTime() - t0) / 1e6);
                    }
                    scans.sort(null);
                    if (first == null) {
                        first = result;
                    } else if (!first.toString().equals(result.toString())) {
                        throw new AssertionError("compacted tables differ: " + first + " vs " + result);
                    }
                    report.add(String.format(Locale.ROOT, "compaction compact_checkpoints=%d snapshot_files=%d partitions=%d"
                                    + " files_per_partition_median=%d max=%d duckdb_full_scan_ms=%.0f job_cpu_ms_per_mib=%.2f"
                                    + " (%d dumps, %.0f MiB, %d records, checkpoint %ds; scan %s)", n, files.size(),
                            perPartition.size(), counts.get(counts.size() / 2), counts.get(counts.size() - 1),
                            scans.get(2), cpuMsPerMib, b.dumps(), b.bytes() / MIB, b.records(), INTERVAL.toSeconds(),
                            result));
                } finally {
                    IngestThroughputBenchmark.delete(dir);
                    try (var admin = kafka.admin()) {
                        admin.deleteTopics(List.of(topic, topic + ".dlq")).all().get();
                    }
                }
            }
        }
        System.out.println();
        report.forEach(System.out::println);
    }
}
