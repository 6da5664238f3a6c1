package io.dumpstream.readers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.testing.HostileNames;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.S3Exception;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * A real ingest run ({@link Landed#demo()}: synthetic ranks, the bundled examples, every hostile name)
 * read by a real Trino 476 server with the Hive connector, on local disk and on a real S3 server (the
 * same files on Ceph's RADOS Gateway), set up by the README's catalog files: for each, the
 * README's Trino block, run statement by statement (the schema, the tables over ROOT, their partitions
 * synced from the directories, the queries), gives exactly what DuckDB reads from the same files, and
 * the hostile run ids and stage names come back as the partition values Hive's escaping gives.
 */
class TrinoReadsTablesIT {
    private static Path root;
    private static Landed.OnS3 onS3;
    private static Path metastore;
    private static TrinoServer trino;

    /** One server, two catalogs from the README: {@code hive} over the local tables, {@code s3} over the same files on S3. */
    @BeforeAll
    static void ingestAndStartTrino() throws Exception {
        TrinoServer.javaHome(); // no JDK for Trino's server: one line before a minute of ingest
        root = Landed.demo();
        onS3 = Landed.demoOnS3();
        metastore = Files.createTempDirectory("dumpstream-trino-metastore");
        Map<String, String> catalogs = new LinkedHashMap<>();
        catalog(catalogs, "# etc/catalog/hive.properties", Map.of("METASTORE", metastore.toString()));
        catalog(catalogs, "# etc/catalog/s3.properties", Map.of("BUCKET", onS3.bucket(), "ENDPOINT", onS3.s3().endpoint()));
        // the S3 catalog reads its keys as ${ENV:...}: they reach Trino's process environment only
        trino = TrinoServer.start(catalogs, Map.of("AWS_ACCESS_KEY_ID", onS3.s3().accessKey(),
                "AWS_SECRET_ACCESS_KEY", onS3.s3().secretKey()));
    }

    @AfterAll
    static void stopTrino() throws Exception {
        if (trino != null) {
            trino.close();
        }
        if (metastore != null) {
            Landed.delete(metastore);
        }
    }

    @Test
    void readmeTrinoBlockGivesWhatDuckDbReads() throws Exception {
        runAndCompare("-- Trino: ", Map.of("ROOT", root.toString()), root);
    }

    /**
     * The README's Trino block for S3 (catalog {@code s3}: native S3 against Ceph's RADOS Gateway, the
     * file metastore in the bucket too) over the same tables under {@code s3://BUCKET/ROOT}: what DuckDB
     * reads from their download.
     */
    @Test
    void readmeTrinoS3BlockGivesWhatDuckDbReads() throws Exception {
        runAndCompare("-- Trino on S3: ", Map.of("BUCKET", onS3.bucket(), "ROOT", onS3.root()), onS3.downloaded());
        List<String> metastoreKeys = onS3.s3().listKeys(onS3.bucket(), "trino-metastore/default/snapshots/");
        assertTrue(metastoreKeys.stream().anyMatch(k -> k.endsWith("/.trinoSchema")),
                "the S3 catalog's file metastore is in the bucket: " + metastoreKeys.size() + " keys");

        // the catalog keeps Trino's exclusive create (no s3.exclusive-create=false): the gateway refuses a
        // second If-None-Match: * write of a key, so two writers of one metastore file cannot both win
        String key = "trino-metastore/exclusive-create-check";
        onS3.s3().client().putObject(b -> b.bucket(onS3.bucket()).key(key).ifNoneMatch("*"), RequestBody.fromString("first"));
        S3Exception refused = assertThrows(S3Exception.class, () -> onS3.s3().client().putObject(
                b -> b.bucket(onS3.bucket()).key(key).ifNoneMatch("*"), RequestBody.fromString("second")));
        assertEquals(412, refused.statusCode(), refused.getMessage());
        assertEquals("first", new String(onS3.s3().get(onS3.bucket(), key), StandardCharsets.UTF_8));
    }

    /**
     * Runs the README's Trino SQL block whose first line starts with {@code first} (placeholders
     * replaced), on the catalog and schema that line names, and checks its queries, the tables' counts
     * and the hostile names against DuckDB's read of {@code local}, a local copy of the same tables.
     */
    static void runAndCompare(String first, Map<String, String> placeholders, Path local) throws Exception {
        List<String> block = Rows.readmeBlock("```sql", first);
        Matcher session = Pattern.compile("-- Trino(?: on S3)?: trino --server HOST:8080 --catalog (\\w+) --schema (\\w+)").matcher(block.get(0));
        assertTrue(session.matches(), "README Trino block's first line names no catalog and schema: " + block.get(0));
        List<String> queries = new ArrayList<>();
        int schemas = 0;
        int creates = 0;
        int syncs = 0;
        try (Connection connection = trino.connect(session.group(1), session.group(2));
                Statement trinoSt = connection.createStatement()) {
            for (String line : block) {
                if (line.isBlank() || line.startsWith("--")) {
                    continue;
                }
                assertTrue(line.endsWith(";"), "README Trino line is not one statement: " + line);
                String sql = Rows.substitute(line.substring(0, line.length() - 1), placeholders);
                if (sql.startsWith("SELECT ")) {
                    queries.add(sql);
                } else if (sql.startsWith("CREATE SCHEMA IF NOT EXISTS ") || sql.startsWith("CREATE TABLE ")
                        || sql.startsWith("CALL " + session.group(1) + ".system.sync_partition_metadata(")) {
                    trinoSt.execute(sql);
                    schemas += sql.startsWith("CREATE SCHEMA") ? 1 : 0;
                    creates += sql.startsWith("CREATE TABLE") ? 1 : 0;
                    syncs += sql.startsWith("CALL") ? 1 : 0;
                } else {
                    throw new AssertionError("README Trino line the test does not run: " + line);
                }
            }
            assertEquals(1, schemas, block.toString());
            assertEquals(3, creates, block.toString());
            assertEquals(3, syncs, block.toString());
            assertEquals(3, queries.size(), block.toString());
            try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement duckSt = duck.createStatement()) {
                Rows.duckViews(duckSt, local);
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
                List<String> missing = Rows.hostileSnapshotRows().stream().filter(w -> !byTrino.contains(w)).toList();
                assertTrue(missing.isEmpty(), "hostile-name rows Trino does not give: " + missing);
                long beyondBmp = HostileNames.NAMES.stream().filter(HostileNames.SUPPLEMENTARY).count();
                assertTrue(beyondBmp >= 2, "names beyond the Basic Multilingual Plane among them: " + beyondBmp);
                System.out.printf("trino = duckdb = the names: %d hostile names as run and as stage, %d beyond the BMP%n",
                        HostileNames.NAMES.size(), beyondBmp);
            }
        }
    }

    /** The README's catalog file whose first line starts with {@code first}, placeholders replaced, as {@code NAME -> text}. */
    static void catalog(Map<String, String> catalogs, String first, Map<String, String> placeholders) throws Exception {
        List<String> block = Rows.readmeBlock("```properties", first);
        Matcher name = Pattern.compile("# etc/catalog/(\\w+)\\.properties\\b.*").matcher(block.get(0));
        assertTrue(name.matches(), "README catalog block names no etc/catalog/NAME.properties: " + block.get(0));
        catalogs.put(name.group(1), Rows.substitute(String.join("\n", block), placeholders) + "\n");
    }
}
