package io.dumpstream.readers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Iceberg tables of a running ingest ({@link IcebergLake}) read by a real Trino 476 server with its
 * Iceberg connector on the same JDBC catalog (PostgreSQL), set up by the README's catalog file: the
 * README's Trino block on Iceberg, queries only (no DDL, no partition sync), gives exactly what DuckDB
 * reads from the same Parquet files, hostile run ids and stage names included; a run that lands while
 * the server is up is in its next query. The same server reads the lake on S3 ({@link IcebergLake#onS3()})
 * through the README's S3 catalog file (native S3 on Ceph's RADOS Gateway), as DuckDB reads its download.
 */
class IcebergTrinoReadsIT {
    private static IcebergLake lake;
    private static IcebergLake lakeOnS3;
    private static TrinoServer trino;

    /** One server, two catalogs from the README: {@code dumpstream} over the local lake, {@code dumpstream_s3} over the one on S3. */
    @BeforeAll
    static void landAndStartTrino() throws Exception {
        TrinoServer.javaHome(); // no JDK for Trino's server: one line before a minute of ingest
        lake = IcebergLake.get();
        lakeOnS3 = IcebergLake.onS3();
        Map<String, String> catalogs = new LinkedHashMap<>();
        TrinoReadsTablesIT.catalog(catalogs, "# etc/catalog/dumpstream.properties", lake.placeholders());
        TrinoReadsTablesIT.catalog(catalogs, "# etc/catalog/dumpstream_s3.properties", lakeOnS3.placeholders());
        assertEquals(List.of(IcebergLake.NAMESPACE, "dumpstream_s3"), List.copyOf(catalogs.keySet()));
        // the catalog files read the password (the same for both PostgreSQL servers) and the S3 keys as ${ENV:...}:
        // only the server's environment has them
        Map<String, String> env = new LinkedHashMap<>(lake.readerEnv());
        env.putAll(lakeOnS3.readerEnv());
        assertEquals(lake.pg.env(), lakeOnS3.pg.env());
        trino = TrinoServer.start(catalogs, env);
    }

    @AfterAll
    static void stopTrino() throws Exception {
        if (trino != null) {
            trino.close();
        }
    }

    @Test
    void readmeIcebergBlockGivesWhatDuckDbReadsAndANewRunWithNoDdl() throws Exception {
        readsAsDuckDb(lake, null, "late-for-trino");
    }

    /** The same queries through the README's S3 catalog file, over the lake on S3: DuckDB's rows of its download. */
    @Test
    void readmeIcebergS3CatalogGivesWhatDuckDbReadsAndANewRunWithNoDdl() throws Exception {
        readsAsDuckDb(lakeOnS3, "dumpstream_s3", "late-for-trino-on-s3");
    }

    /**
     * The README's Trino block on Iceberg over {@code lake} (in {@code catalog} instead of the block's own when not
     * null): every query and count as DuckDB reads the lake's files, hostile names included; then {@code run} lands
     * and is in the next query.
     */
    private static void readsAsDuckDb(IcebergLake lake, String catalog, String run) throws Exception {
        List<String> block = Rows.readmeBlock("```sql", "-- Trino on Iceberg: ");
        Matcher session = Pattern.compile("-- Trino on Iceberg: trino --server HOST:8080 --catalog (\\w+) --schema (\\w+)")
                .matcher(block.get(0));
        assertTrue(session.matches(), "README Trino block's first line names no catalog and schema: " + block.get(0));
        List<String> queries = new ArrayList<>();
        for (String line : block) {
            if (line.isBlank() || line.startsWith("--")) {
                continue;
            }
            assertTrue(line.startsWith("SELECT ") && line.endsWith(";"), "README Trino line on Iceberg is not one query: " + line);
            queries.add(line.substring(0, line.length() - 1));
        }
        assertEquals(3, queries.size(), block.toString());
        try (Connection connection = trino.connect(catalog == null ? session.group(1) : catalog, session.group(2));
                Statement trinoSt = connection.createStatement();
                Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement duckSt = duck.createStatement()) {
            sameAsDuckDb(lake, trinoSt, duckSt, queries);
            assertTrue(Rows.count(trinoSt, "SELECT count(*) FROM rejects") > 0, "the rejected example is there");
            String names = "SELECT run, rank, stage, run_id, stage_name, count(*) AS n, sum(numel) AS elements"
                    + " FROM snapshots GROUP BY run, rank, stage, run_id, stage_name";
            List<String> byTrino = Rows.rows(trinoSt, names).stream().sorted().toList();
            assertEquals(Rows.rows(duckSt, names).stream().sorted().toList(), byTrino, names);
            IcebergLake.assertHostileNames(byTrino);

            // a run that lands while the server is up: its next query has it, with no DDL in between
            String runs = "SELECT run, count(*) AS n FROM snapshots GROUP BY run ORDER BY run";
            assertFalse(Rows.rows(trinoSt, runs).stream().anyMatch(r -> r.startsWith(run + "|")));
            double seconds = lake.landNewRun(run);
            List<String> after = Rows.rows(trinoSt, runs);
            assertTrue(after.stream().anyMatch(r -> r.startsWith(run + "|")), run + " is in Trino's next query: " + after);
            Rows.duckViews(duckSt, lake.out);
            assertEquals(Rows.rows(duckSt, runs), after, runs);
            sameAsDuckDb(lake, trinoSt, duckSt, queries);
            System.out.printf("trino = duckdb on Iceberg (%s), and run %s in the next query (published to committed in %.1f s)%n",
                    lake.location(), run, seconds);
        }
    }

    /** Each query and each table's count: Trino's rows equal DuckDB's over the lake's files, as they are now. */
    private static void sameAsDuckDb(IcebergLake lake, Statement trinoSt, Statement duckSt, List<String> queries)
            throws Exception {
        Rows.duckViews(duckSt, lake.out);
        for (String q : queries) {
            List<String> byTrino = Rows.rows(trinoSt, q);
            assertFalse(byTrino.isEmpty(), q);
            assertEquals(Rows.rows(duckSt, q), byTrino, q);
            System.out.printf("trino = duckdb on Iceberg: %d rows for %s%n", byTrino.size(), q);
        }
        for (String table : IcebergLake.TABLES) {
            String count = "SELECT count(*) FROM " + table;
            assertEquals(Rows.count(duckSt, count), Rows.count(trinoSt, count), count);
        }
    }
}
