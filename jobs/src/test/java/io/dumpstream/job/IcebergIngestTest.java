package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.decode.OfflineDecoder;
import io.dumpstream.iceberg.IcebergMaintenance;
import io.dumpstream.iceberg.IcebergSettings;
import io.dumpstream.iceberg.IcebergTables;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.table.TableWriter;
import io.dumpstream.testing.IcebergRead;
import io.dumpstream.testing.Landing;
import io.dumpstream.testing.Postgres;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.Traffic;
import io.dumpstream.testing.Vectors;

import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The ingest job with Iceberg on, on a MiniCluster against the real broker and a real PostgreSQL
 * (the JDBC catalog): the three Iceberg tables hold exactly the rows DuckDB reads from the same
 * Parquet files, and each committed file is in exactly one snapshot; with compaction, parts appended
 * then rewritten as their merged file, on local disk and on S3.
 */
class IcebergIngestTest {
    private static final LocalKafka kafka = SharedKafka.get();
    private static final Postgres pg = Postgres.get();

    @TempDir
    Path dir;

    static IcebergSettings settings(String namespace, Path out) {
        return settings(namespace, out.toString());
    }

    static IcebergSettings settings(String namespace, String out) {
        return new IcebergSettings(pg.url(), IcebergTables.location(out) + "/_iceberg", namespace).validate();
    }

    @Test
    void vectorsAndHostileRunIdsLandInIcebergExactlyAsDuckDbReadsTheFiles(@TempDir Path offlineDir) throws Exception {
        land("iceberg-vectors", "vectors", 0, offlineDir);
    }

    /**
     * With compaction (Flink's, after every checkpoint) each checkpoint's snapshot parts are appended to
     * the Iceberg table when it completes (hidden from Hive-layout readers), and each merge is one
     * {@code replace} snapshot: the merged parts out, the merged file in.
     */
    @Test
    void compactedSnapshotPartsAreAppendedThenRewrittenAsTheirMergedFile(@TempDir Path offlineDir) throws Exception {
        landCompacted("iceberg-compacted", "compacted", Landing.local(dir), offlineDir);
    }

    /** The same with the output root and the warehouse on the project's S3 server (Ceph's RADOS Gateway). */
    @Test
    void compactedOnS3AsOnLocalDisk(@TempDir Path offlineDir) throws Exception {
        landCompacted("iceberg-s3", "on_s3", Landing.s3(dir, "iceberg", "compacted"), offlineDir);
    }

    private void land(String topic, String namespace, int compactCheckpoints, Path offlineDir) throws Exception {
        kafka.createTopic(topic, 3);
        kafka.createTopic(topic + ".dlq", 1);
        Map<String, List<String>> offline = offline(offlineDir.resolve("offline"));
        try (RawSend send = new RawSend(kafka.bootstrapServers(), topic)) {
            for (List<RawSend.Msg> dump : IngestJobTest.vectorMessages()) {
                send.sendAll(dump);
            }
        }
        // a run id that needs every kind of escaping in a path
        Traffic hostile = new Traffic(kafka.bootstrapServers(), topic, "ice/berg 100%=ok:[x]", 2, 3, 2048, 4096, 5);
        hostile.join(hostile.publish(0, 2, 0), 60_000);

        IngestConfig c = JobRun.config(kafka.bootstrapServers(), topic, dir);
        c.iceberg = settings(namespace, Path.of(c.out));
        c.compactCheckpoints = compactCheckpoints;
        long dumps = offline.get("dumps").size() + hostile.dumpsSent();
        Catalog catalog = IcebergTables.open(c.iceberg, Map.of());
        try (JobRun run = JobRun.start(c)) {
            run.awaitDumps(dumps, Duration.ofSeconds(120));
            // the Iceberg commit of a checkpoint's files comes with the next checkpoint
            IcebergRead.awaitRows(catalog, c.iceberg, "dumps", dumps);
            IcebergRead.awaitRows(catalog, c.iceberg, "snapshots",
                    offline.get("snapshots").size() + hostile.recordsSent());
            Thread.sleep(2500);
            for (String table : IcebergTables.TABLES) {
                Table t = IcebergRead.load(catalog, c.iceberg, table);
                List<String> iceberg = IcebergRead.rows(t);
                List<String> duck = IcebergRead.duckDbRows(run.out, table);
                long want = offline.get(table).size() + (table.equals("snapshots") ? hostile.recordsSent()
                        : table.equals("dumps") ? hostile.dumpsSent() : 0);
                System.out.printf("iceberg %s: %d rows, DuckDB %d, offline decode + hostile run %d%n", table,
                        iceberg.size(), duck.size(), want);
                assertEquals(want, iceberg.size(), table + " rows");
                assertEquals(duck, iceberg, table + ": Iceberg's rows equal DuckDB's of the same files");
                IcebergRead.assertFilesOnce(t, run.out, table);
            }
            Table snapshots = IcebergRead.load(catalog, c.iceberg, "snapshots");
            assertTrue(IcebergRead.rows(snapshots).stream().anyMatch(r -> r.contains("run=ice/berg 100%=ok:[x]")),
                    "the hostile run id is the partition value as Hive readers see it");
            assertEquals(2, ((org.apache.iceberg.BaseTable) snapshots).operations().current().formatVersion());
            assertEquals(List.of("run", "rank", "stage"), snapshots.spec().fields().stream()
                    .map(f -> f.name()).toList());
        } finally {
            IcebergTables.close(catalog);
        }
    }

    /**
     * Two stages of traffic with compaction on; after each, once the job has merged every part, Iceberg's
     * rows equal DuckDB's of the Hive layout (no row twice), the snapshots table's history is appends of
     * parts and rewrites of merges (each file added once, each part merged once), the other tables each
     * file once. Then snapshot expiry: the merged parts leave storage, every file the current snapshot
     * references stays, and the rows are unchanged.
     */
    private void landCompacted(String topic, String namespace, Landing landing, Path offlineDir) throws Exception {
        kafka.createTopic(topic, 3);
        kafka.createTopic(topic + ".dlq", 1);
        Map<String, List<String>> offline = offline(offlineDir.resolve("offline"));
        try (RawSend send = new RawSend(kafka.bootstrapServers(), topic)) {
            for (List<RawSend.Msg> dump : IngestJobTest.vectorMessages()) {
                send.sendAll(dump);
            }
        }
        Traffic hostile = new Traffic(kafka.bootstrapServers(), topic, "ice/berg 100%=ok:[x]", 2, 3, 2048, 4096, 5);
        hostile.join(hostile.publish(0, 2, 0), 60_000);

        IngestConfig c = JobRun.config(kafka.bootstrapServers(), topic, dir);
        c.out = landing.out();
        c.checkpoints = landing.checkpoints();
        io.dumpstream.storage.FlinkSettings.install(landing.flinkConfig());
        c.iceberg = settings(namespace, c.out);
        c.compactCheckpoints = 1;
        String base = IcebergTables.location(c.out);
        Catalog catalog = IcebergTables.open(c.iceberg, Map.of());
        List<String> merged;
        try {
            try (JobRun run = JobRun.start(c)) {
                settle(catalog, c, landing, offline, hostile, run);
                assertStage(catalog, c, landing, base, "stage 1");
                hostile.join(hostile.publish(2, 3, 0), 60_000);
                settle(catalog, c, landing, offline, hostile, run);
                merged = assertStage(catalog, c, landing, base, "stage 2");
            }
            assertFalse(merged.isEmpty(), "no part was merged");
            Map<String, List<String>> before = new java.util.HashMap<>();
            List<String> current = new java.util.ArrayList<>();
            for (String table : IcebergTables.TABLES) {
                Table t = IcebergRead.load(catalog, c.iceberg, table);
                before.put(table, IcebergRead.rows(t));
                current.addAll(IcebergRead.currentFiles(t));
            }
            assertTrue(merged.stream().allMatch(IcebergIngestTest::exists), "the merged parts stay until expiry");
            // the parts the current snapshot removed stay until it is expired too (its manifests name them)
            Table snapshots = IcebergRead.load(catalog, c.iceberg, "snapshots");
            List<String> removedByCurrent = new java.util.ArrayList<>();
            snapshots.currentSnapshot().removedDataFiles(snapshots.io()).forEach(f -> removedByCurrent.add(f.location()));
            // and a metadata file no metadata names (a cut-short commit's), old enough to go
            String orphan = snapshots.location() + "/metadata/orphan-of-a-cut-short-commit.avro";
            try (var o = snapshots.io().newOutputFile(orphan).create()) {
                o.write(new byte[] {1, 2, 3});
            }
            Thread.sleep(1100);
            List<IcebergMaintenance.Result> results = IcebergMaintenance.run(catalog, c.iceberg, c.out, Duration.ZERO,
                    1, Duration.ofSeconds(1), false, System.out);
            assertEquals(List.of(IcebergMaintenance.key(orphan)), results.get(0).orphansDeleted().stream()
                    .map(IcebergMaintenance::key).toList(), "the orphan metadata file, and no other, deleted");
            assertFalse(exists(orphan), "orphan deleted");
            for (IcebergMaintenance.Result r : results) {
                assertEquals(List.of(), r.referencedMissing(), r.table() + ": referenced files missing");
                assertEquals(List.of(), r.dataNotInTable(), r.table() + ": published files not in the table");
            }
            List<String> left = merged.stream().filter(IcebergIngestTest::exists).sorted().toList();
            assertEquals(removedByCurrent.stream().sorted().toList(), left,
                    "expiry deletes the merged parts, but those the current snapshot removed");
            assertEquals(List.of(), current.stream().filter(f -> !exists(f)).toList(),
                    "expiry deletes no file the current snapshot references");
            for (String table : IcebergTables.TABLES) {
                Table t = IcebergRead.load(catalog, c.iceberg, table);
                assertEquals(1, java.util.stream.StreamSupport.stream(t.snapshots().spliterator(), false).count(),
                        table + ": one snapshot left");
                assertEquals(before.get(table), IcebergRead.rows(t), table + ": rows after expiry");
                assertEquals(IcebergRead.duckDbRows(landing.tables(), table), IcebergRead.rows(t), table
                        + ": Iceberg's rows equal DuckDB's after expiry");
            }
            System.out.printf("iceberg on %s: expiry deleted %d merged parts (%d left, removed by the current"
                    + " snapshot), kept %d current files%n", landing, merged.size() - left.size(), left.size(),
                    current.size());
        } finally {
            IcebergTables.close(catalog);
        }
    }

    private static boolean exists(String location) {
        try {
            org.apache.flink.core.fs.Path p = new org.apache.flink.core.fs.Path(location);
            return p.getFileSystem().exists(p);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /**
     * Waits (two minutes at most) until every row sent is in the Hive layout and in Iceberg, and the snapshots
     * table holds no part (every part merged and rewritten).
     */
    private static void settle(Catalog catalog, IngestConfig c, Landing landing, Map<String, List<String>> offline,
                               Traffic hostile, JobRun run) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        String state = "";
        while (System.nanoTime() < deadline) {
            if (run.client.getJobStatus().get().isGloballyTerminalState()) {
                run.client.getJobExecutionResult().get();
                throw new AssertionError("the job ended");
            }
            boolean done = true;
            StringBuilder sb = new StringBuilder();
            Path tables = null;
            for (String table : IcebergTables.TABLES) {
                long want = offline.get(table).size() + (table.equals("snapshots") ? hostile.recordsSent()
                        : table.equals("dumps") ? hostile.dumpsSent() : 0);
                Table t = IcebergRead.load(catalog, c.iceberg, table);
                long iceberg = IcebergRead.totalRecords(t);
                long parts = IcebergRead.currentFiles(t).stream().filter(f -> IcebergRead.name(f).startsWith("."))
                        .count();
                long duck = -1;
                if (iceberg == want && parts == 0) { // the Hive layout read (an S3 copy) only then
                    tables = tables == null ? landing.tables() : tables;
                    try {
                        duck = IcebergRead.duckDbRows(tables, table).size();
                    } catch (java.sql.SQLException noFilesYet) {
                        duck = -1;
                    }
                }
                sb.append(table).append(": ").append(iceberg).append(" in Iceberg, ").append(duck)
                        .append(" in DuckDB, want ").append(want).append(", ").append(parts).append(" parts; ");
                done &= iceberg == want && duck == want && parts == 0;
            }
            state = sb.toString();
            if (done) {
                return;
            }
            Thread.sleep(500);
        }
        throw new AssertionError("not settled after 120 s: " + state);
    }

    /** Iceberg's rows equal DuckDB's, the histories as they should be; returns the parts merged. */
    private static List<String> assertStage(Catalog catalog, IngestConfig c, Landing landing, String base,
                                            String stage) throws Exception {
        List<String> merged = List.of();
        for (String table : IcebergTables.TABLES) {
            Table t = IcebergRead.load(catalog, c.iceberg, table);
            List<String> iceberg = IcebergRead.rows(t);
            List<String> duck = IcebergRead.duckDbRows(landing.tables(), table);
            System.out.printf("iceberg on %s, %s, %s: %d rows, DuckDB %d%n", landing, stage, table, iceberg.size(),
                    duck.size());
            assertEquals(duck, iceberg, stage + ", " + table + ": Iceberg's rows equal DuckDB's of the same files");
            if (table.equals("snapshots")) {
                merged = IcebergRead.assertCompactedHistory(t, landing.tables(), table, base);
            } else {
                IcebergRead.assertFilesOnce(t, landing.tables(), table, base);
            }
        }
        return merged;
    }

    /** The offline decoder's tables of the public vectors (row counts per table). */
    static Map<String, List<String>> offline(Path root) throws Exception {
        try (TableWriter w = new TableWriter(root, TableWriter.Options.defaults())) {
            OfflineDecoder d = new OfflineDecoder(w, Clock.systemUTC());
            for (String name : Vectors.names()) {
                d.decode(Vectors.manifest(name), Vectors.buffer(name));
            }
            w.commit();
        }
        return Tables.read(root);
    }
}
