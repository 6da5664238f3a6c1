package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.format.DumpBuilder;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.manifest.ManifestParser;
import io.dumpstream.manifest.Manifests;
import io.dumpstream.table.DuckDb;
import io.dumpstream.table.HivePartition;
import io.dumpstream.testing.SharedKafka;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Hostile run ids and stage names through the broker and the job: every file lands under the
 * output root in the table layout, each directory name fits the file system's segment limit, and
 * DuckDB reads back the full names from the rows and the partition values Hive-decoded exactly
 * (the shortened form, with its digest, for names too long for one segment).
 */
class PartitionPathsTest {
    private static final LocalKafka kafka = SharedKafka.get();

    static final List<String> NAMES = io.dumpstream.testing.HostileNames.NAMES;

    @TempDir
    Path dir;

    @Test
    void hostileNamesNeverLeaveTheRootAndRoundTripThroughDuckDb() throws Exception {
        String topic = "ingest-names";
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".dlq", 1);
        // each name as a run id (with a plain stage) and as a stage name (in a plain run)
        Map<String, String[]> byDump = new HashMap<>(); // dump id -> {run id, stage}
        long launch = 0;
        try (RawSend send = new RawSend(kafka.bootstrapServers(), topic)) {
            for (String name : NAMES) {
                for (boolean asRun : new boolean[] {true, false}) {
                    String run = asRun ? name : "names-run";
                    String stage = asRun ? "layer0.attn" : name;
                    DumpBuilder b = new DumpBuilder(run, 1, launch++);
                    b.add(new DumpBuilder.RecordSpec().stage(stage).tensorName("t").dtype("float32").actualShape(2)
                            .payload(new byte[8]));
                    DumpBuilder.Dump d = b.build();
                    String id = Manifests.dumpId(d.manifest());
                    byDump.put(id, new String[] {run, stage});
                    send.sendAll(RawSend.messages(id, ManifestParser.toJson(d.manifest()), d.buffer(),
                            d.manifest().getChunkBytes()));
                }
            }
        }
        try (JobRun run = JobRun.start(JobRun.config(kafka.bootstrapServers(), topic, dir))) {
            run.awaitDumps(byDump.size(), Duration.ofSeconds(120));
            Thread.sleep(2500);

            // 1. every file under the root, in the layout, no segment over the limit
            Path root = run.out.toRealPath();
            io.dumpstream.testing.TableLayout.assertLayout(run.out);
            for (Path f : walkWhileRunning(dir)) {
                Path real;
                try {
                    real = f.toRealPath();
                } catch (NoSuchFileException gone) {
                    continue;
                }
                if (!real.startsWith(root)) {
                    assertTrue(real.startsWith(dir.resolve("checkpoints").toRealPath()) || real.equals(dir.toRealPath()),
                            "outside the output root: " + real);
                }
                assertTrue(f.getFileName().toString().getBytes(StandardCharsets.UTF_8).length
                        <= HivePartition.MAX_SEGMENT_BYTES, "segment too long: " + f);
            }

            // 2. DuckDB: full names from the rows, Hive-decoded partition values
            Map<String, String> got = new TreeMap<>();
            for (Map<String, Object> r : DuckDb.query("SELECT dump_id, run_id, run, stage_name, stage FROM read_parquet("
                    + DuckDb.glob(run.out, "snapshots/**/*.parquet") + ", hive_partitioning=true,"
                    + " hive_types={'run': VARCHAR, 'rank': VARCHAR, 'stage': VARCHAR})")) {
                got.put((String) r.get("dump_id"), List.of(r.get("run_id"), r.get("run"), r.get("stage_name"),
                        r.get("stage")).toString());
            }
            Map<String, String> want = new TreeMap<>();
            byDump.forEach((id, rs) -> want.put(id, List.of(rs[0], HivePartition.readBackValue("run", rs[0]), rs[1],
                    HivePartition.readBackValue("stage", rs[1])).toString()));
            assertEquals(want, got);
            List<String> shortened = new ArrayList<>();
            for (String n : NAMES) {
                if (!n.equals(HivePartition.readBackValue("run", n))) {
                    shortened.add(n.length() > 12 ? n.substring(0, 12) + "...(" + n.length() + " chars)" : n);
                }
            }
            // the short names round-trip exactly; only the overlong ones are cut (with a digest)
            assertEquals(4, shortened.size(), shortened.toString());
            Map<String, Object> dumpsByRun = DuckDb.query("SELECT count(DISTINCT run_id) AS n FROM read_parquet("
                    + DuckDb.glob(run.out, "dumps/**/*.parquet") + ")").get(0);
            assertEquals((long) NAMES.size() + 1, ((Number) dumpsByRun.get("n")).longValue());
            System.out.printf("partition paths: %d hostile names as run ids and stages landed under the root; shortened"
                    + " with a digest: %s%n", NAMES.size(), shortened);
        }
    }

    /**
     * Every path under {@code dir} while the job still runs: checkpoint directories and files, and
     * in-progress part files, may be renamed or deleted between being listed and being read, and are
     * then left out (the caller skips those that vanish after the walk the same way).
     */
    private static List<Path> walkWhileRunning(Path dir) throws IOException {
        List<Path> paths = new ArrayList<>();
        Files.walkFileTree(dir, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) {
                paths.add(d);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) {
                paths.add(f);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path f, IOException e) throws IOException {
                if (e instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE;
                }
                throw e;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                if (e != null && !(e instanceof NoSuchFileException)) {
                    throw e;
                }
                return FileVisitResult.CONTINUE;
            }
        });
        return paths;
    }
}
