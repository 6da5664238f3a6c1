package io.dumpstream.readers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Iceberg tables of a running ingest ({@link IcebergLake}) read by a real local Spark 4.1 with
 * Iceberg's Spark runtime through the same JDBC catalog (PostgreSQL): the session is made with the
 * README's {@code pyspark} settings, its python lines run verbatim give exactly what DuckDB reads from
 * the same Parquet files, hostile names included; a run that lands while the session is open is in its
 * next query.
 */
class IcebergSparkReadsIT {
    private static IcebergLake lake;
    private static SparkSession spark;

    /** The session as the README's pyspark line makes it: each {@code --conf}, placeholders replaced. */
    @BeforeAll
    static void landAndStartSpark() throws Exception {
        lake = IcebergLake.get();
        spark = session("pyspark --packages org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0,"
                + "org.postgresql:postgresql:42.7.14 ", lake, List.of());
    }

    @AfterAll
    static void stopSpark() {
        if (spark != null) {
            spark.stop();
        }
    }

    /**
     * A local Spark session made as the README's pyspark block whose first line starts with {@code first} makes it:
     * each {@code --conf} ({@code spark.sql.catalog.dumpstream*}, and {@code spark.hadoop.fs.*} for S3), placeholders
     * replaced by {@code lake}'s; its {@code --packages} must be this test's jars (Iceberg's Spark runtime, the
     * PostgreSQL driver, then {@code more}), an {@code --exclude-packages} only the AWS SDK bundle.
     */
    static SparkSession session(String first, IcebergLake lake, List<String> more) throws Exception {
        List<String> words = Rows.pysparkWords(first);
        Set<String> packages = new TreeSet<>();
        Map<String, String> conf = new TreeMap<>();
        for (int i = 1; i < words.size(); i += 2) {
            String value = words.get(i + 1);
            switch (words.get(i)) {
                case "--packages" -> packages.addAll(List.of(value.split(",")));
                case "--exclude-packages" -> assertEquals("software.amazon.awssdk:bundle", value, words.toString());
                case "--conf" -> {
                    int eq = value.indexOf('=');
                    assertTrue(eq > 0 && (value.startsWith("spark.sql.catalog.dumpstream") || value.startsWith("spark.hadoop.fs.")),
                            "README pyspark --conf the test does not set: " + value);
                    conf.put(value.substring(0, eq), Rows.substitute(value.substring(eq + 1), lake.placeholders()));
                }
                default -> throw new AssertionError("README pyspark word the test does not run: " + words.get(i));
            }
        }
        Set<String> jars = new TreeSet<>(List.of("org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:" + System.getProperty("iceberg.version"),
                "org.postgresql:postgresql:" + System.getProperty("postgresql.version")));
        jars.addAll(more);
        assertEquals(jars, packages, "README --packages are this test's jars");
        assertTrue(org.apache.spark.package$.MODULE$.SPARK_VERSION().startsWith("4.1."), org.apache.spark.package$.MODULE$.SPARK_VERSION());
        // no password in the settings: the driver reads it from the pgpass file (here the one Postgres wrote)
        assertFalse(conf.keySet().stream().anyMatch(k -> k.contains("password")), conf.keySet().toString());
        SparkSession.Builder b = SparkSession.builder().master("local[2]").appName("dumpstream-readers-iceberg")
                .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1").config("spark.sql.shuffle.partitions", "2");
        conf.forEach(b::config);
        SparkSession made = b.getOrCreate();
        // getOrCreate hands back a session still open with other settings: this one must have the block's
        conf.forEach((k, v) -> assertEquals(v, made.sparkContext().getConf().get(k), k));
        return made;
    }

    @Test
    void readmeIcebergLinesGiveWhatDuckDbReadsAndANewRunWithNoDdl() throws Exception {
        readsAsDuckDb(spark, lake, "late-for-spark");
    }

    /**
     * The README's python lines on Iceberg in {@code spark} over {@code lake}: every query and count as DuckDB reads
     * the lake's files, hostile names included; then {@code run} lands and is in the next query.
     */
    static void readsAsDuckDb(SparkSession spark, IcebergLake lake, String run) throws Exception {
        List<String> readme = Rows.readmeBlock("```python", "spark.sql(\"USE dumpstream.");
        Pattern use = Pattern.compile("spark\\.sql\\(\"(USE \\w+\\.\\w+)\"\\)");
        Pattern query = Pattern.compile("spark\\.sql\\(\"(SELECT .*)\"\\)\\.show\\(\\)");
        List<String> queries = new ArrayList<>();
        for (String line : readme) {
            Matcher u = use.matcher(line);
            Matcher q = query.matcher(line);
            if (u.matches()) {
                assertTrue(queries.isEmpty(), line);
                spark.sql(u.group(1));
            } else if (q.matches()) {
                queries.add(q.group(1));
            } else if (!line.isBlank() && !line.startsWith("#")) {
                throw new AssertionError("README Spark line on Iceberg the test does not run: " + line);
            }
        }
        assertEquals(3, queries.size(), readme.toString());
        StructType s = spark.table("snapshots").schema();
        assertEquals(DataTypes.StringType, s.apply("run").dataType());
        assertEquals(DataTypes.IntegerType, s.apply("rank").dataType());
        assertEquals(DataTypes.StringType, s.apply("stage").dataType());

        try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement duckSt = duck.createStatement()) {
            sameAsDuckDb(spark, lake, duckSt, queries);
            assertTrue(spark.table("rejects").count() > 0, "the rejected example is there");
            String names = "SELECT run, rank, stage, run_id, stage_name, count(*) AS n, sum(numel) AS elements"
                    + " FROM snapshots GROUP BY run, rank, stage, run_id, stage_name";
            List<String> bySpark = Rows.rows(spark.sql(names)).stream().sorted().toList();
            assertEquals(Rows.rows(duckSt, names).stream().sorted().toList(), bySpark, names);
            IcebergLake.assertHostileNames(bySpark);

            // a run that lands while the session is open: its next query has it, with no DDL or refresh in between
            String runs = "SELECT run, count(*) AS n FROM snapshots GROUP BY run ORDER BY run";
            assertFalse(Rows.rows(spark.sql(runs)).stream().anyMatch(r -> r.startsWith(run + "|")));
            double seconds = lake.landNewRun(run);
            List<String> after = Rows.rows(spark.sql(runs));
            assertTrue(after.stream().anyMatch(r -> r.startsWith(run + "|")), run + " is in Spark's next query: " + after);
            Rows.duckViews(duckSt, lake.out);
            assertEquals(Rows.rows(duckSt, runs), after, runs);
            sameAsDuckDb(spark, lake, duckSt, queries);
            System.out.printf("spark = duckdb on Iceberg (%s), and run %s in the next query (published to committed in %.1f s)%n",
                    lake.location(), run, seconds);
        }
    }

    /** Each query and each table's count: Spark's rows equal DuckDB's over the lake's files, as they are now. */
    private static void sameAsDuckDb(SparkSession spark, IcebergLake lake, Statement duckSt, List<String> queries)
            throws Exception {
        Rows.duckViews(duckSt, lake.out);
        for (String q : queries) {
            List<String> bySpark = Rows.rows(spark.sql(q));
            assertFalse(bySpark.isEmpty(), q);
            assertEquals(Rows.rows(duckSt, q), bySpark, q);
            System.out.printf("spark = duckdb on Iceberg: %d rows for %s%n", bySpark.size(), q);
        }
        for (String table : IcebergLake.TABLES) {
            assertEquals(Rows.count(duckSt, "SELECT count(*) FROM " + table), spark.table(table).count(), table);
        }
    }
}
