package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.decode.OfflineDecoder;
import io.dumpstream.iceberg.IcebergSettings;
import io.dumpstream.iceberg.IcebergTables;
import io.dumpstream.local.LocalKafka;
import io.dumpstream.table.TableWriter;
import io.dumpstream.testing.IcebergRead;
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
 * Parquet files, and each committed file is in exactly one snapshot.
 */
class IcebergIngestTest {
    private static final LocalKafka kafka = SharedKafka.get();
    private static final Postgres pg = Postgres.get();

    @TempDir
    Path dir;

    static IcebergSettings settings(String namespace, Path out) {
        return new IcebergSettings(pg.url(), IcebergTables.location(out.toString()) + "/_iceberg", namespace)
                .validate();
    }

    @Test
    void vectorsAndHostileRunIdsLandInIcebergExactlyAsDuckDbReadsTheFiles(@TempDir Path offlineDir) throws Exception {
        land("iceberg-vectors", "vectors", 0, offlineDir);
    }

    /**
     * With compaction (Flink's, after every checkpoint) a snapshot partition's parts stay hidden until
     * merged: the Iceberg table gets the merged file in one append and never a part.
     */
    @Test
    void compactedSnapshotPartsAreCommittedAsTheirMergedFileOnly(@TempDir Path offlineDir) throws Exception {
        land("iceberg-compacted", "compacted", 1, offlineDir);
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
            if (compactCheckpoints > 0) {
                List<String> files = IcebergRead.currentFiles(snapshots);
                assertTrue(!files.isEmpty() && files.stream().allMatch(f -> f.substring(f.lastIndexOf('/') + 1)
                        .startsWith("compacted-")), "only merged files: " + files);
            }
            assertTrue(IcebergRead.rows(snapshots).stream().anyMatch(r -> r.contains("run=ice/berg 100%=ok:[x]")),
                    "the hostile run id is the partition value as Hive readers see it");
            assertEquals(2, ((org.apache.iceberg.BaseTable) snapshots).operations().current().formatVersion());
            assertEquals(List.of("run", "rank", "stage"), snapshots.spec().fields().stream()
                    .map(f -> f.name()).toList());
        } finally {
            if (catalog instanceof AutoCloseable a) {
                a.close();
            }
        }
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
