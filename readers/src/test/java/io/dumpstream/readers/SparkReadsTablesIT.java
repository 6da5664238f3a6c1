package io.dumpstream.readers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
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
        root = Files.createTempDirectory("dumpstream-readers").resolve("out");
        Path jar = Path.of(System.getProperty("dumpstream.jar", "../jobs/target/dumpstream.jar"));
        assertTrue(Files.isRegularFile(jar), "no " + jar + ": build it first (mvn -B package -DskipTests)");
        Path log = root.getParent().resolve("demo.log");
        Process p = new ProcessBuilder(javaBin(), "-XX:+UseParallelGC", "-Xmx1g", "-jar", jar.toString(), "demo",
                "--out", root.toString(), "--ranks", "2", "--launches", "3", "--records", "8", "--parallelism", "2")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly().waitFor();
            throw new AssertionError("demo did not finish in 5 min; output in " + log);
        }
        assertEquals(0, p.exitValue(), () -> "demo failed: " + read(log));
        spark = SparkSession.builder().master("local[2]").appName("dumpstream-readers")
                .config("spark.ui.enabled", "false").config("spark.sql.warehouse.dir", root.getParent().resolve("warehouse").toString()).config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1").config("spark.sql.shuffle.partitions", "2")
                .getOrCreate();
    }

    @AfterAll
    static void stopSpark() throws IOException {
        if (spark != null) {
            spark.stop();
        }
        if (root != null) {
            try (var paths = Files.walk(root.getParent())) {
                for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** The README's Spark block: the views as {@code spark.read.parquet} makes them, then its SQL lines. */
    @Test
    void readmeSparkLinesGiveWhatDuckDbReads() throws Exception {
        List<String> readme = readmeSparkBlock();
        List<String> sql = new ArrayList<>();
        Pattern view = Pattern.compile("spark\\.read\\.parquet\\(\"ROOT/(\\w+)\"\\)\\.createOrReplaceTempView\\(\"(\\w+)\"\\)");
        Pattern query = Pattern.compile("spark\\.sql\\(\"(.*)\"\\)\\.show\\(\\)");
        int views = 0;
        for (String line : readme) {
            Matcher v = view.matcher(line);
            Matcher q = query.matcher(line);
            if (v.matches()) {
                spark.read().parquet(root.resolve(v.group(1)).toString()).createOrReplaceTempView(v.group(2));
                views++;
            } else if (q.matches()) {
                sql.add(q.group(1));
            } else if (!line.isBlank() && !line.startsWith("#")) {
                throw new AssertionError("README Spark line the test does not run: " + line);
            }
        }
        assertEquals(3, views, readme.toString());
        assertEquals(3, sql.size(), readme.toString());

        // partition discovery: run and stage strings, rank an integer
        StructType s = spark.table("snapshots").schema();
        assertEquals(DataTypes.StringType, s.apply("run").dataType());
        assertEquals(DataTypes.IntegerType, s.apply("rank").dataType());
        assertEquals(DataTypes.StringType, s.apply("stage").dataType());
        assertEquals(DataTypes.IntegerType, spark.table("dumps").schema().apply("rank").dataType());

        String hive = "hive_partitioning = true, hive_types = {'run': VARCHAR, 'rank': INTEGER, 'stage': VARCHAR}";
        String hive2 = "hive_partitioning = true, hive_types = {'run': VARCHAR, 'rank': INTEGER}";
        try (Connection duck = DriverManager.getConnection("jdbc:duckdb:"); Statement st = duck.createStatement()) {
            st.execute("CREATE VIEW snapshots AS SELECT * FROM read_parquet(" + glob("snapshots") + ", " + hive + ")");
            st.execute("CREATE VIEW dumps AS SELECT * FROM read_parquet(" + glob("dumps") + ", " + hive2 + ")");
            st.execute("CREATE VIEW rejects AS SELECT * FROM read_parquet(" + glob("rejects") + ", " + hive2 + ")");
            long total = 0;
            for (String q : sql) {
                List<String> bySpark = rows(spark.sql(q));
                List<String> byDuck = rows(st, q);
                assertEquals(byDuck, bySpark, q);
                assertTrue(!bySpark.isEmpty(), q);
                total += bySpark.size();
                System.out.printf("spark = duckdb: %d rows for %s%n", bySpark.size(), q);
            }
            // the rejected example is there: rejects is not empty, and a dump is REJECTED or PARTIAL
            assertTrue(count(st, "SELECT count(*) FROM rejects") > 0);
            assertEquals(count(st, "SELECT count(*) FROM snapshots"), spark.table("snapshots").count());
            assertEquals(count(st, "SELECT count(*) FROM dumps"), spark.table("dumps").count());
            assertEquals(count(st, "SELECT count(*) FROM rejects"), spark.table("rejects").count());
            // every snapshot column, with the same names and the partition columns, on both sides
            assertEquals(columns(st, "snapshots"), List.of(s.fieldNames()).stream().sorted().toList());
            assertTrue(total > 3);
        }
    }

    private static long count(Statement st, String q) throws Exception {
        try (ResultSet rs = st.executeQuery(q)) {
            rs.next();
            return rs.getLong(1);
        }
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

    private static List<String> rows(Dataset<Row> d) {
        List<String> out = new ArrayList<>();
        for (Row r : d.collectAsList()) {
            List<String> cells = new ArrayList<>();
            for (int i = 0; i < r.length(); i++) {
                cells.add(cell(r.get(i)));
            }
            out.add(String.join("|", cells));
        }
        return out;
    }

    private static List<String> rows(Statement st, String q) throws Exception {
        List<String> out = new ArrayList<>();
        try (ResultSet rs = st.executeQuery(q)) {
            int n = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<String> cells = new ArrayList<>();
                for (int i = 1; i <= n; i++) {
                    cells.add(cell(rs.getObject(i)));
                }
                out.add(String.join("|", cells));
            }
        }
        return out;
    }

    /** One cell, numbers normalised (Spark and DuckDB pick different integer widths for count and sum). */
    private static String cell(Object o) {
        if (o == null) {
            return "null";
        }
        if (o instanceof Double || o instanceof Float) {
            return String.format("%.12g", ((Number) o).doubleValue());
        }
        if (o instanceof Number n) {
            return new BigDecimal(n.toString()).stripTrailingZeros().toPlainString();
        }
        return o.toString();
    }

    private static String glob(String table) {
        return "'" + root.resolve(table).toString().replace("'", "''") + "/**/*.parquet'";
    }

    static List<String> readmeSparkBlock() throws IOException {
        Path readme = Path.of(System.getProperty("dumpstream.readme", "../README.md"));
        List<String> lines = Files.readAllLines(readme, StandardCharsets.UTF_8);
        int start = lines.indexOf("```python");
        assertTrue(start >= 0, "no ```python block (the Spark lines) in " + readme);
        int end = lines.subList(start + 1, lines.size()).indexOf("```") + start + 1;
        return lines.subList(start + 1, end);
    }

    private static String javaBin() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            return "(cannot read " + p + ": " + e + ")";
        }
    }
}
