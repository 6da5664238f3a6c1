package io.dumpstream.iceberg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.local.LocalKafka;
import io.dumpstream.testing.IcebergRead;
import io.dumpstream.testing.IngestProc;
import io.dumpstream.testing.Postgres;
import io.dumpstream.testing.SharedKafka;
import io.dumpstream.testing.Traffic;

import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The {@code ingest} command with Iceberg on, as a separate process, killed with SIGKILL while an
 * Iceberg commit is held up in PostgreSQL (the catalog's table locked by the test): files the FileSink
 * had already published are then in the Hive layout but in no Iceberg snapshot. Started again with
 * the same arguments, it completes that commit from its restored state; after the traffic, every
 * record is in the Iceberg tables exactly once and every published file in exactly one snapshot.
 */
class IcebergCrashTest {
    private static final LocalKafka kafka = SharedKafka.get();
    private static final Postgres pg = Postgres.get();
    private static final int RANKS = 2;

    @TempDir
    Path dir;

    @Test
    void sigkillWithAnIcebergCommitHeldUpIsCompletedOnRestartExactlyOnce() throws Exception {
        String topic = "iceberg-crash";
        kafka.createTopic(topic, 2);
        kafka.createTopic(topic + ".dlq", 1);
        Traffic traffic = new Traffic(kafka.bootstrapServers(), topic, "crash/run%1", RANKS, 8, 8 * 1024, 32 * 1024, 33);
        Path out = dir.resolve("out");
        List<String> args = List.of("ingest", "--bootstrap", kafka.bootstrapServers(), "--topic", topic,
                "--group", "iceberg-crash", "--out", out.toString(), "--checkpoints", dir.resolve("ck").toString(),
                "--checkpoint-interval", "1s", "--parallelism", "2",
                "--iceberg-catalog", pg.bareUrl(), "--iceberg-namespace", "crash");
        IcebergSettings s = new IcebergSettings(pg.url(), IcebergTables.location(out.toString()) + "/_iceberg",
                "crash");
        Catalog catalog = IcebergTables.open(s, Map.of());
        List<String> jvm = List.of("-Xmx768m");

        Thread publisher = traffic.publish(0, 30, 3.0); // about 20 s: the crash comes while ranks publish
        int missing;
        try (IngestProc p1 = IngestProc.start(jvm, args, dir.resolve("p1"), pg.env())) {
            p1.awaitLanded(out, 8, Duration.ofSeconds(180));
            IcebergRead.awaitRows(catalog, s, "dumps", 4);
            try (Connection lock = pg.connect()) {
                lock.setAutoCommit(false);
                try (Statement st = lock.createStatement()) {
                    // every commit (and table load) of the catalog now waits for this transaction
                    st.execute("LOCK TABLE iceberg_tables IN ACCESS EXCLUSIVE MODE");
                }
                Thread.sleep(3000); // the files of the next checkpoints are published, their Iceberg commit waits
                p1.process().destroyForcibly();
                assertTrue(p1.process().waitFor(30, TimeUnit.SECONDS));
                lock.rollback();
            }
            missing = 0;
            for (String table : IcebergTables.TABLES) {
                Set<String> in = new HashSet<>(IcebergRead.currentFiles(IcebergRead.load(catalog, s, table)));
                missing += (int) IcebergRead.visibleFiles(out, table).stream().filter(f -> !in.contains(f)).count();
            }
            System.out.printf("SIGKILL with an Iceberg commit held up: %d published files in no snapshot,"
                    + " publishing still under way: %s%n", missing, publisher.isAlive());
            assertTrue(missing > 0, "published files were left out of Iceberg by the crash");
        }

        try (IngestProc p2 = IngestProc.start(jvm, args, dir.resolve("p2"), pg.env())) {
            assertTrue(p2.stdout().contains("resumed from"), p2.stdout());
            traffic.join(publisher, 120_000);
            p2.awaitLanded(out, traffic.dumpsSent(), Duration.ofSeconds(180));
            IcebergRead.awaitRows(catalog, s, "dumps", traffic.dumpsSent());
            IcebergRead.awaitRows(catalog, s, "snapshots", traffic.recordsSent());
            Thread.sleep(2500); // two more checkpoints: anything doubled would have been committed by now
            p2.process().destroy();
            assertTrue(p2.process().waitFor(150, TimeUnit.SECONDS), "SIGTERM ends the process");
            assertEquals(0, p2.process().exitValue(), p2.stderr());
        }
        traffic.assertExactlyOnce("Iceberg on, SIGKILL with an Iceberg commit held up", out);
        Set<String> jobs = new HashSet<>();
        for (String table : IcebergTables.TABLES) {
            Table t = IcebergRead.load(catalog, s, table);
            IcebergRead.assertFilesOnce(t, out, table);
            assertEquals(IcebergRead.duckDbRows(out, table), IcebergRead.rows(t), table + ": Iceberg's rows are DuckDB's");
            jobs.addAll(assertCheckpointsAscend(t, table));
        }
        assertEquals(2, jobs.size(), "both processes committed, each under its own job id: " + jobs);
        IcebergTables.close(catalog);
    }

    /**
     * The committer's snapshots in order: each names a job and the committer, and for each job its
     * checkpoint ids strictly ascend (a checkpoint committed twice would repeat one). Returns the jobs.
     */
    static Set<String> assertCheckpointsAscend(Table t, String table) {
        List<Snapshot> all = new ArrayList<>();
        t.snapshots().forEach(all::add);
        all.sort(java.util.Comparator.comparingLong(Snapshot::sequenceNumber));
        Map<String, Long> last = new HashMap<>();
        for (Snapshot snap : all) {
            Map<String, String> summary = snap.summary();
            String job = summary.get(IcebergCommitter.JOB_ID);
            assertEquals(IcebergFileSink.uid(table), summary.get(IcebergCommitter.OPERATOR_ID), table + " " + summary);
            long id = Long.parseLong(summary.get(IcebergCommitter.MAX_COMMITTED_CHECKPOINT_ID));
            Long before = last.put(job, id);
            assertTrue(before == null || id > before, table + ": checkpoint " + id + " after " + before + " of job " + job);
        }
        return last.keySet();
    }
}
