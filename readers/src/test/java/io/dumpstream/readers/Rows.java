package io.dumpstream.readers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.table.HivePartition;
import io.dumpstream.testing.HostileNames;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Result rows as comparable strings (JDBC's and Spark's), DuckDB's views of the three tables, the README's
 * blocks, and the rows the hostile names give. Spark's classes are the caller's (4.2 in readers, 4.1 in
 * readers-iceberg): only {@code Dataset.collectAsList} and {@code Row.get} are used.
 */
final class Rows {
    private Rows() {
    }

    /** One cell, numbers normalised (the engines pick different integer widths for count and sum). */
    static String cell(Object o) {
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

    /** Every row of a JDBC query, cells joined by {@code |}, in the order the query returns them. */
    static List<String> rows(Statement st, String q) throws SQLException {
        return retryingNoNodes(q, () -> rowsOnce(st, q));
    }

    private static List<String> rowsOnce(Statement st, String q) throws SQLException {
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

    /** Every row of a Spark result, cells joined by {@code |}, as {@link #rows(Statement, String)} gives JDBC's. */
    static List<String> rows(Dataset<Row> d) {
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

    /**
     * The rows each hostile name (the pairs {@link Landed#pairs()} writes) gives in {@code SELECT run, rank,
     * stage, run_id, stage_name, count(*), sum(numel) ... GROUP BY} over snapshots: as a run id (its Hive
     * partition value as read back) and as a stage name.
     */
    static List<String> hostileSnapshotRows() {
        List<String> want = new ArrayList<>();
        for (String name : HostileNames.NAMES) {
            want.add(String.join("|", HivePartition.readBackValue(HivePartition.RUN, name), "5",
                    HostileNames.PLAIN_STAGE, name, HostileNames.PLAIN_STAGE, "2", "128"));
            want.add(String.join("|", HostileNames.STAGES_RUN, "5", HivePartition.readBackValue(HivePartition.STAGE, name),
                    HostileNames.STAGES_RUN, name, "2", "128"));
        }
        return want;
    }

    /**
     * The words of the README's {@code pyspark} launch block whose first line starts with {@code first},
     * its line continuations joined; the first word is {@code pyspark}, then option and value pairs.
     */
    static List<String> pysparkWords(String first) throws IOException {
        List<String> launch = readmeBlock("```bash", first);
        List<String> words = List.of(String.join(" ", launch.stream().map(l -> l.endsWith("\\") ? l.substring(0, l.length() - 1) : l)
                .toList()).trim().split("\\s+"));
        assertEquals("pyspark", words.get(0), launch.toString());
        assertTrue(words.size() % 2 == 1, "README pyspark option without a value: " + launch);
        return words;
    }

    static long count(Statement st, String q) throws SQLException {
        return retryingNoNodes(q, () -> {
            try (ResultSet rs = st.executeQuery(q)) {
                rs.next();
                return rs.getLong(1);
            }
        });
    }

    /** A JDBC call that returns a value. */
    private interface SqlCall<T> {
        T call() throws SQLException;
    }

    /**
     * Runs {@code call}, again (every 0.5 s, 60 s at most) while a freshly started Trino answers "No nodes
     * available to run query": seen twice on CI on the first SELECT over a catalog's table, after
     * {@link TrinoServer} had seen its node active in {@code system.runtime.nodes} (the scheduler's view of the
     * nodes serving a catalog lags the node list). Any other failure, and this one after 60 s, is the caller's.
     * DuckDB never says it.
     */
    private static <T> T retryingNoNodes(String q, SqlCall<T> call) throws SQLException {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        for (int retries = 0; ; retries++) {
            try {
                T result = call.call();
                if (retries > 0) {
                    System.out.printf("trino had no node for the query for %d retries of 0.5 s: %s%n", retries, q);
                }
                return result;
            } catch (SQLException e) {
                if (!String.valueOf(e.getMessage()).contains("No nodes available to run query")
                        || System.nanoTime() > deadline) {
                    throw e;
                }
            }
            try {
                Thread.sleep(500);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SQLException("interrupted while waiting for a Trino node: " + q, e);
            }
        }
    }

    /**
     * DuckDB views {@code snapshots}, {@code dumps}, {@code rejects} over ROOT, partition types declared;
     * a table with no directory (nothing rejected) gets no view.
     */
    static void duckViews(Statement st, Path root) throws SQLException {
        String hive = "hive_partitioning = true, hive_types = {'run': VARCHAR, 'rank': INTEGER, 'stage': VARCHAR}";
        String hive2 = "hive_partitioning = true, hive_types = {'run': VARCHAR, 'rank': INTEGER}";
        for (String table : List.of("snapshots", "dumps", "rejects")) {
            if (Files.isDirectory(root.resolve(table))) {
                st.execute("CREATE OR REPLACE VIEW " + table + " AS SELECT * FROM read_parquet(" + glob(root, table) + ", "
                        + (table.equals("snapshots") ? hive : hive2) + ")");
            }
        }
    }

    private static String glob(Path root, String table) {
        return "'" + root.resolve(table).toString().replace("'", "''") + "/**/*.parquet'";
    }

    /** {@code text} with each placeholder (a README word such as ROOT or BUCKET) replaced by its value. */
    static String substitute(String text, Map<String, String> placeholders) {
        String out = text;
        for (Map.Entry<String, String> p : placeholders.entrySet()) {
            out = out.replace(p.getKey(), p.getValue());
        }
        return out;
    }

    /** The lines of the README's first fenced block that opens with {@code fence} and whose first line starts with {@code first}. */
    static List<String> readmeBlock(String fence, String first) throws IOException {
        Path readme = Path.of(System.getProperty("dumpstream.readme", "../README.md"));
        List<String> lines = Files.readAllLines(readme, StandardCharsets.UTF_8);
        for (int i = 0; i < lines.size() - 1; i++) {
            if (lines.get(i).equals(fence) && lines.get(i + 1).startsWith(first)) {
                int end = lines.subList(i + 1, lines.size()).indexOf("```") + i + 1;
                assertTrue(end > i, "unterminated " + fence + " block in " + readme);
                return lines.subList(i + 1, end);
            }
        }
        throw new AssertionError("no " + fence + " block starting with '" + first + "' in " + readme);
    }
}
