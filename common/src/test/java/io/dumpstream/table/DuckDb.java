package io.dumpstream.table;

import java.nio.file.Path;
import java.sql.Array;
import java.sql.Blob;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Test helper: runs SQL in an in-memory DuckDB and returns the rows as maps (column label to
 * value, in column order). BLOBs come back as {@code byte[]}, lists as {@code List}.
 */
public final class DuckDb implements AutoCloseable {

    private final Connection connection;

    private DuckDb(Connection connection) {
        this.connection = connection;
    }

    /** A fresh in-memory database. */
    public static DuckDb open() throws SQLException {
        return new DuckDb(DriverManager.getConnection("jdbc:duckdb:"));
    }

    /** Runs one query in a fresh in-memory database. */
    public static List<Map<String, Object>> query(String sql) throws SQLException {
        try (DuckDb db = open()) {
            return db.rows(sql);
        }
    }

    /** The rows of {@code sql}. */
    public List<Map<String, Object>> rows(String sql) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet rs = statement.executeQuery(sql)) {
            ResultSetMetaData meta = rs.getMetaData();
            List<Map<String, Object>> rows = new ArrayList<>();
            while (rs.next()) {
                Map<String, Object> row = new LinkedHashMap<>();
                for (int i = 1; i <= meta.getColumnCount(); i++) {
                    row.put(meta.getColumnLabel(i), plain(rs.getObject(i)));
                }
                rows.add(row);
            }
            return rows;
        }
    }

    /** A SQL string literal. */
    public static String literal(String text) {
        return "'" + text.replace("'", "''") + "'";
    }

    /** A SQL string literal of a glob under {@code root}, e.g. {@code glob(root, "snapshots/**}{@code /*.parquet")}. */
    public static String glob(Path root, String pattern) {
        return literal(root.toAbsolutePath().normalize() + "/" + pattern);
    }

    /** The underlying connection, for statements this helper does not cover. */
    public Connection connection() {
        return connection;
    }

    @Override
    public void close() throws SQLException {
        connection.close();
    }

    private static Object plain(Object value) throws SQLException {
        if (value instanceof Blob blob) {
            try {
                return blob.getBytes(1, (int) blob.length());
            } finally {
                blob.free();
            }
        }
        if (value instanceof Array array) {
            Object[] items = (Object[]) array.getArray();
            List<Object> list = new ArrayList<>(items.length);
            for (Object item : items) {
                list.add(plain(item));
            }
            return list;
        }
        if (value instanceof Object[] items) {
            return plain(Arrays.asList(items));
        }
        return value;
    }

    private static Object plain(List<Object> items) throws SQLException {
        List<Object> list = new ArrayList<>(items.size());
        for (Object item : items) {
            list.add(plain(item));
        }
        return list;
    }
}
