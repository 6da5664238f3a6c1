package io.dumpstream.readers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.table.HivePartition;
import io.dumpstream.testing.HostileNames;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * A real ingest run ({@link Landed#demo()}: synthetic ranks, the bundled examples, the hostile names)
 * read by a real Trino 368 server with the Hive connector: the README's Trino block, run statement by
 * statement (the tables over ROOT, their partitions synced from the directories, the queries), gives
 * exactly what DuckDB reads from the same files, and the hostile run ids and stage names come back as
 * the partition values Hive's escaping gives.
 */
class TrinoReadsTablesIT {
    private static Path root;
    private static TrinoServer trino;
    private static Connection connection;

    @BeforeAll
    static void ingestAndStartTrino() throws Exception {
        root = Landed.demo();
        trino = TrinoServer.start();
        connection = trino.connect();
    }

    @AfterAll
    static void stopTrino() throws Exception {
        if (connection != null) {
            connection.close();
        }
        if (trino != null) {
            trino.close();
        }
    }

    @Test
    void readmeTrinoBlockGivesWhatDuckDbReads() throws Exception {
        List<String> block = Rows.readmeBlock("```sql", "-- Trino");
        List<String> queries = new ArrayList<>();
        int creates = 0;
        int syncs = 0;
        try (Statement trinoSt = connection.createStatement()) {
            for (String line : block) {
                if (line.isBlank() || line.startsWith("--")) {
                    continue;
                }
                assertTrue(line.endsWith(";"), "README Trino line is not one statement: " + line);
                String sql = line.substring(0, line.length() - 1).replace("ROOT", root.toString());
                if (sql.startsWith("SELECT ")) {
                    queries.add(sql);
                } else if (sql.startsWith("CREATE TABLE ") || sql.startsWith("CALL hive.system.sync_partition_metadata(")) {
                    trinoSt.execute(sql);
                    creates += sql.startsWith("CREATE") ? 1 : 0;
                    syncs += sql.startsWith("CALL") ? 1 : 0;
                } else {
                    throw new AssertionError("README Trino line the test does not run: " + line);
                }
            }
            assertEquals(3, creates, block.toString());
            assertEquals(3, syncs, block.toString());
            assertEquals(3, queries.size(), block.toString());
            try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement duckSt = duck.createStatement()) {
                Rows.duckViews(duckSt, root);
                for (String q : queries) {
                    List<String> byTrino = Rows.rows(trinoSt, q);
                    assertFalse(byTrino.isEmpty(), q);
                    assertEquals(Rows.rows(duckSt, q), byTrino, q);
                    System.out.printf("trino = duckdb: %d rows for %s%n", byTrino.size(), q);
                }
                for (String table : List.of("snapshots", "dumps", "rejects")) {
                    String count = "SELECT count(*) FROM " + table;
                    assertEquals(Rows.count(duckSt, count), Rows.count(trinoSt, count), count);
                }
                assertTrue(Rows.count(trinoSt, "SELECT count(*) FROM rejects") > 0, "the rejected example is there");

                // the hostile names: partition values as Hive unescapes them, full names in the columns
                String names = "SELECT run, rank, stage, run_id, stage_name, count(*) AS n, sum(numel) AS elements"
                        + " FROM snapshots GROUP BY run, rank, stage, run_id, stage_name";
                List<String> byTrino = Rows.rows(trinoSt, names).stream().sorted().toList();
                assertEquals(Rows.rows(duckSt, names).stream().sorted().toList(), byTrino, names);
                List<String> want = new ArrayList<>();
                for (String name : Landed.DEMO_NAMES) {
                    want.add(String.join("|", HivePartition.readBackValue(HivePartition.RUN, name), "5",
                            HostileNames.PLAIN_STAGE, name, HostileNames.PLAIN_STAGE, "2", "128"));
                    want.add(String.join("|", HostileNames.STAGES_RUN, "5", HivePartition.readBackValue(HivePartition.STAGE, name),
                            HostileNames.STAGES_RUN, name, "2", "128"));
                }
                List<String> missing = want.stream().filter(w -> !byTrino.contains(w)).toList();
                assertTrue(missing.isEmpty(), "hostile-name rows Trino does not give: " + missing);
                System.out.printf("trino = duckdb = the names: %d hostile names as run and as stage%n", Landed.DEMO_NAMES.size());
            }
        }
    }
}
