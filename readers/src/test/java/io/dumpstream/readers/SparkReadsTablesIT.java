package io.dumpstream.readers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.table.HivePartition;
import io.dumpstream.testing.HostileNames;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real ingest run (the shaded {@code dumpstream.jar demo}: local Kafka broker, the Flink job on a
 * MiniCluster, synthetic ranks and the bundled examples, one of them rejected) read by a real local
 * Spark with its own partition discovery: the README's Spark lines, run verbatim, give exactly what
 * DuckDB reads from the same files.
 */
class SparkReadsTablesIT {
    private static Path root;
    private static SparkSession spark;

    @BeforeAll
    static void ingestAndStartSpark() throws Exception {
        root = Landed.demo();
        spark = SparkSession.builder().master("local[2]").appName("dumpstream-readers")
                .config("spark.ui.enabled", "false").config("spark.sql.warehouse.dir", root.getParent().resolve("warehouse").toString())
                .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.sql.shuffle.partitions", "2").getOrCreate();
    }

    @AfterAll
    static void stopSpark() {
        if (spark != null) {
            spark.stop();
        }
    }

    /** The README's Spark block: the views as {@code spark.read.parquet} makes them, then its SQL lines. */
    @Test
    void readmeSparkLinesGiveWhatDuckDbReads() throws Exception {
        List<String> sql = runPythonBlock("spark.read.parquet(\"ROOT/", Map.of("ROOT", root.toString()));
        compareWithDuckDb(sql, root);
    }

    /**
     * The README's Spark blocks for S3: the launch line's S3A settings ({@code --conf spark.hadoop.*},
     * into this session's Hadoop configuration as Spark puts them there at launch; its {@code --packages}
     * are the jars on this classpath), then its lines over the same tables under {@code s3a://BUCKET/ROOT}
     * on Ceph's RADOS Gateway: what DuckDB reads from their download.
     */
    @Test
    void readmeSparkS3LinesGiveWhatDuckDbReads() throws Exception {
        Landed.OnS3 onS3 = Landed.demoOnS3();
        Map<String, String> placeholders = Map.of("ENDPOINT", onS3.s3().endpoint(), "BUCKET", onS3.bucket(), "ROOT", onS3.root(),
                "$AWS_ACCESS_KEY_ID", onS3.s3().accessKey(), "$AWS_SECRET_ACCESS_KEY", onS3.s3().secretKey());
        List<String> words = Rows.pysparkWords("pyspark --packages org.apache.hadoop:");
        Set<String> packages = new TreeSet<>();
        Set<String> settings = new TreeSet<>();
        for (int i = 1; i < words.size(); i += 2) {
            String value = words.get(i + 1);
            switch (words.get(i)) {
                case "--packages" -> packages.addAll(List.of(value.split(",")));
                case "--exclude-packages" -> assertEquals("software.amazon.awssdk:bundle", value, words.toString());
                case "--conf" -> {
                    int eq = value.indexOf('=');
                    assertTrue(eq > 0 && value.startsWith("spark.hadoop.fs.s3a."), "README pyspark --conf the test does not set: " + value);
                    spark.sparkContext().hadoopConfiguration().set(value.substring("spark.hadoop.".length(), eq),
                            Rows.substitute(value.substring(eq + 1), placeholders));
                    settings.add(value.substring("spark.hadoop.".length(), eq));
                }
                default -> throw new AssertionError("README pyspark word the test does not run: " + words.get(i));
            }
        }
        String sdk = System.getProperty("awssdk.version");
        assertEquals(new TreeSet<>(List.of("org.apache.hadoop:hadoop-aws:" + System.getProperty("hadoop.version"),
                "software.amazon.awssdk:s3:" + sdk, "software.amazon.awssdk:s3-transfer-manager:" + sdk,
                "software.amazon.awssdk:sts:" + sdk)), packages, "README --packages are this test's jars");
        assertEquals(new TreeSet<>(List.of("fs.s3a.access.key", "fs.s3a.connection.ssl.enabled", "fs.s3a.endpoint",
                "fs.s3a.endpoint.region", "fs.s3a.path.style.access", "fs.s3a.secret.key")), settings, words.toString());
        List<String> sql = runPythonBlock("spark.read.parquet(\"s3a://", placeholders);
        compareWithDuckDb(sql, onS3.downloaded());
    }

    /**
     * Runs the README python block whose first line starts with {@code first}: each view as
     * {@code spark.read.parquet} makes it (placeholders in its location replaced); returns its
     * {@code spark.sql} queries.
     */
    private static List<String> runPythonBlock(String first, Map<String, String> placeholders) throws Exception {
        List<String> readme = Rows.readmeBlock("```python", first);
        List<String> sql = new ArrayList<>();
        Pattern view = Pattern.compile("spark\\.read\\.parquet\\(\"([^\"]+)/(\\w+)\"\\)\\.createOrReplaceTempView\\(\"(\\w+)\"\\)");
        Pattern query = Pattern.compile("spark\\.sql\\(\"(.*)\"\\)\\.show\\(\\)");
        int views = 0;
        for (String line : readme) {
            Matcher v = view.matcher(line);
            Matcher q = query.matcher(line);
            if (v.matches()) {
                assertEquals(v.group(2), v.group(3), line);
                spark.read().parquet(Rows.substitute(v.group(1), placeholders) + "/" + v.group(2)).createOrReplaceTempView(v.group(3));
                views++;
            } else if (q.matches()) {
                sql.add(q.group(1));
            } else if (!line.isBlank() && !line.startsWith("#")) {
                throw new AssertionError("README Spark line the test does not run: " + line);
            }
        }
        assertEquals(3, views, readme.toString());
        assertEquals(3, sql.size(), readme.toString());
        return sql;
    }

    /** The views {@code snapshots}, {@code dumps}, {@code rejects} and the queries give what DuckDB reads from {@code local}. */
    private static void compareWithDuckDb(List<String> sql, Path local) throws Exception {
        // partition discovery: run and stage strings, rank an integer
        StructType s = spark.table("snapshots").schema();
        assertEquals(DataTypes.StringType, s.apply("run").dataType());
        assertEquals(DataTypes.IntegerType, s.apply("rank").dataType());
        assertEquals(DataTypes.StringType, s.apply("stage").dataType());
        assertEquals(DataTypes.IntegerType, spark.table("dumps").schema().apply("rank").dataType());

        try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement st = duck.createStatement()) {
            Rows.duckViews(st, local);
            long total = 0;
            for (String q : sql) {
                List<String> bySpark = Rows.rows(spark.sql(q));
                List<String> byDuck = Rows.rows(st, q);
                assertEquals(byDuck, bySpark, q);
                assertTrue(!bySpark.isEmpty(), q);
                total += bySpark.size();
                System.out.printf("spark = duckdb: %d rows for %s%n", bySpark.size(), q);
            }
            // the rejected example is there: rejects is not empty, and a dump is REJECTED or PARTIAL
            assertTrue(Rows.count(st, "SELECT count(*) FROM rejects") > 0);
            assertEquals(Rows.count(st, "SELECT count(*) FROM snapshots"), spark.table("snapshots").count());
            assertEquals(Rows.count(st, "SELECT count(*) FROM dumps"), spark.table("dumps").count());
            assertEquals(Rows.count(st, "SELECT count(*) FROM rejects"), spark.table("rejects").count());
            // every snapshot column, with the same names and the partition columns, on both sides
            assertEquals(columns(st, "snapshots"), List.of(s.fieldNames()).stream().sorted().toList());
            // the hostile names as partition values and columns, on both sides
            String names = "SELECT run, rank, stage, run_id, stage_name, count(*) AS n FROM snapshots GROUP BY run, rank, stage, run_id, stage_name";
            assertEquals(sorted(Rows.rows(st, names)), sorted(Rows.rows(spark.sql(names))), names);
            assertTrue(total > 3);
        }
    }

    /**
     * Every hostile name (PartitionPathsTest's list, run ids and stage names; the offline decoder writes
     * the same layout as the job): Spark's partition discovery Hive-unescapes each {@code run} and
     * {@code stage} to what DuckDB reads and to the name itself (its shortened form, with a digest, when
     * the name is too long for one path segment), and the full names come back in the columns.
     */
    @Test
    void hostileNamesAreThePartitionValuesSparkDiscovers() throws Exception {
        Path hostile = Landed.hostile();
        spark.read().parquet(hostile.resolve("snapshots").toString()).createOrReplaceTempView("hostile_snapshots");
        spark.read().parquet(hostile.resolve("dumps").toString()).createOrReplaceTempView("hostile_dumps");
        StructType s = spark.table("hostile_snapshots").schema();
        assertEquals(DataTypes.StringType, s.apply("run").dataType());
        assertEquals(DataTypes.IntegerType, s.apply("rank").dataType());
        assertEquals(DataTypes.StringType, s.apply("stage").dataType());
        String snapshots = "SELECT run, rank, stage, run_id, stage_name, count(*) AS n, sum(numel) AS elements FROM %s"
                + " GROUP BY run, rank, stage, run_id, stage_name";
        String dumps = "SELECT run, rank, run_id, outcome, accepted FROM %s";
        List<String> wantSnapshots = new ArrayList<>();
        List<String> wantDumps = new ArrayList<>();
        for (String name : HostileNames.NAMES) {
            String run = HivePartition.readBackValue(HivePartition.RUN, name);
            String stage = HivePartition.readBackValue(HivePartition.STAGE, name);
            wantSnapshots.add(String.join("|", run, "5", HostileNames.PLAIN_STAGE, name, HostileNames.PLAIN_STAGE, "2", "128"));
            wantSnapshots.add(String.join("|", HostileNames.STAGES_RUN, "5", stage, HostileNames.STAGES_RUN, name, "2", "128"));
            wantDumps.add(String.join("|", run, "5", name, "COMPLETE", "2"));
            wantDumps.add(String.join("|", HostileNames.STAGES_RUN, "5", HostileNames.STAGES_RUN, "COMPLETE", "2"));
        }
        try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement st = duck.createStatement()) {
            Rows.duckViews(st, hostile);
            assertEquals(sorted(wantSnapshots), sorted(Rows.rows(st, String.format(snapshots, "snapshots"))), "duckdb snapshots");
            assertEquals(sorted(wantSnapshots), sorted(Rows.rows(spark.sql(String.format(snapshots, "hostile_snapshots")))),
                    "spark snapshots");
            assertEquals(sorted(wantDumps), sorted(Rows.rows(st, String.format(dumps, "dumps"))), "duckdb dumps");
            assertEquals(sorted(wantDumps), sorted(Rows.rows(spark.sql(String.format(dumps, "hostile_dumps")))), "spark dumps");
        }
        long shortened = HostileNames.NAMES.stream()
                .filter(n -> !n.equals(HivePartition.readBackValue(HivePartition.RUN, n))).count();
        System.out.printf("spark = duckdb = the names: %d hostile names as run and as stage, %d of them shortened%n",
                HostileNames.NAMES.size(), shortened);
        assertTrue(shortened >= 3, "the long names are shortened: " + shortened);
    }

    private static List<String> sorted(List<String> rows) {
        return rows.stream().sorted().toList();
    }

    private static List<String> columns(Statement st, String table) throws Exception {
        List<String> names = new ArrayList<>();
        try (ResultSet rs = st.executeQuery("SELECT * FROM " + table + " LIMIT 0")) {
            for (int i = 1; i <= rs.getMetaData().getColumnCount(); i++) {
                names.add(rs.getMetaData().getColumnLabel(i));
            }
        }
        return names.stream().sorted().toList();
    }

}
