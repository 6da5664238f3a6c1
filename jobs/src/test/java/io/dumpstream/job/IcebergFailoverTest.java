package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dumpstream.iceberg.IcebergTables;
import io.dumpstream.testing.IcebergRead;
import io.dumpstream.testing.Postgres;

import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.junit.jupiter.api.AfterEach;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@link FailoverTest}'s failures (an operator that throws once, a stop-with-savepoint, a TaskManager
 * lost) with Iceberg on: besides the exact multiset of the Hive layout, after each, every published
 * file is in exactly one Iceberg snapshot (none twice, none missing) and the three Iceberg tables hold
 * exactly DuckDB's rows of the same files. Files still waiting for their Iceberg commit when the test
 * cancelled the job are committed by a start from the retained checkpoint, as a user's restart would.
 */
class IcebergFailoverTest extends FailoverTest {
    private static final AtomicInteger RUNS = new AtomicInteger();
    private IngestConfig config;

    @Override
    String topic(String name) {
        return "failover-iceberg-" + name;
    }

    @Override
    void configure(IngestConfig c) {
        if (config == null) { // a test that starts the job twice keeps its tables
            c.iceberg = IcebergIngestTest.settings("failover_" + RUNS.incrementAndGet(), Path.of(c.out));
            config = c;
        } else {
            c.iceberg = config.iceberg;
        }
        Postgres.get();
    }

    /**
     * Not run with Iceberg on: a broker outage fails the job over as the injected failure does, which
     * this class covers, and its 20 s outage would only add CI time (FailoverTest runs it).
     */
    @Override
    void theBrokerDownForTwentySecondsMidStreamTheJobRecoversByItself() {
        config = null;
    }

    /** Parts (hidden names) in the table's current snapshot: appended, not merged yet. */
    static long parts(Table t) throws Exception {
        return IcebergRead.currentFiles(t).stream().filter(f -> IcebergRead.name(f).startsWith(".")).count();
    }

    @AfterEach
    void everyPublishedFileIsInExactlyOneIcebergSnapshot() throws Exception {
        if (config == null) {
            return; // the broker test, not run here
        }
        Path out = Path.of(config.out);
        Catalog catalog = IcebergTables.open(config.iceberg, Map.of());
        try {
            Map<String, List<String>> hive = new java.util.HashMap<>();
            long behind = 0;
            for (String table : IcebergTables.TABLES) {
                hive.put(table, IcebergRead.duckDbRows(out, table));
                behind += hive.get(table).size()
                        - IcebergRead.totalRecords(IcebergRead.load(catalog, config.iceberg, table));
            }
            boolean compacting = config.compactCheckpoints > 0;
            long parts = compacting ? parts(IcebergRead.load(catalog, config.iceberg, "snapshots")) : 0;
            if (behind > 0 || parts > 0) {
                // the test cancelled the job while its last files waited for their Iceberg commit (or, with
                // compaction, merged parts for their rewrite): a start from the retained checkpoint completes it
                // (and lands nothing twice in the Hive layout)
                try (LocalIngest again = LocalIngest.start(config, new org.apache.flink.configuration.Configuration())) {
                    for (String table : IcebergTables.TABLES) {
                        IcebergRead.awaitRows(catalog, config.iceberg, table, hive.get(table).size());
                    }
                    long deadline = System.nanoTime() + java.time.Duration.ofSeconds(120).toNanos();
                    while (compacting && parts(IcebergRead.load(catalog, config.iceberg, "snapshots")) > 0
                            && System.nanoTime() < deadline) {
                        Thread.sleep(300);
                    }
                    again.stop(java.time.Duration.ofSeconds(120));
                }
                System.out.printf("iceberg: %d rows waited for their commit when the job was cancelled; the"
                        + " restart from the retained checkpoint committed them%n", behind);
            }
            for (String table : IcebergTables.TABLES) {
                assertEquals(hive.get(table), IcebergRead.duckDbRows(out, table), table + ": the restart landed nothing twice");
                Table t = IcebergRead.load(catalog, config.iceberg, table);
                if (compacting && table.equals("snapshots")) {
                    IcebergRead.assertCompactedHistory(t, out, table, IcebergTables.location(out.toString()));
                } else {
                    IcebergRead.assertFilesOnce(t, out, table);
                }
                assertEquals(IcebergRead.duckDbRows(out, table), IcebergRead.rows(t), table + ": Iceberg's rows");
                System.out.printf("iceberg %s after the failure: %d rows in %d snapshots, each file once%n", table,
                        IcebergRead.totalRecords(t), IcebergRead.addedPerSnapshot(t).size());
            }
        } finally {
            IcebergTables.close(catalog);
        }
    }
}
