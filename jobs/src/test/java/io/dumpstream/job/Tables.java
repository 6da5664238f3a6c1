package io.dumpstream.job;

import io.dumpstream.table.DuckDb;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The three tables under a root as sorted multisets of rows (timestamps left out, binaries as hex). */
final class Tables {
    private Tables() {
    }

    static final String SNAPSHOTS = "SELECT * EXCLUDE (ingested_at, data), hex(data) AS data_hex FROM read_parquet(%s,"
            + " hive_partitioning=true, hive_types={'run': VARCHAR, 'rank': VARCHAR, 'stage': VARCHAR})";
    static final String DUMPS = "SELECT * EXCLUDE (completed_at) FROM read_parquet(%s,"
            + " hive_partitioning=true, hive_types={'run': VARCHAR, 'rank': VARCHAR})";
    static final String REJECTS = "SELECT * EXCLUDE (rejected_at, raw_record, payload), hex(raw_record) AS raw_hex,"
            + " hex(payload) AS payload_hex FROM read_parquet(%s,"
            + " hive_partitioning=true, hive_types={'run': VARCHAR, 'rank': VARCHAR})";

    static Map<String, List<String>> read(Path root) throws Exception {
        io.dumpstream.testing.TableLayout.assertLayout(root);
        Map<String, List<String>> t = new TreeMap<>();
        t.put("snapshots", rows(root, "snapshots", SNAPSHOTS));
        t.put("dumps", rows(root, "dumps", DUMPS));
        t.put("rejects", rows(root, "rejects", REJECTS));
        return t;
    }

    static List<String> rows(Path root, String table, String sql) throws Exception {
        List<String> out = new ArrayList<>();
        if (!Files.isDirectory(root.resolve(table))) {
            return out;
        }
        for (Map<String, Object> r : DuckDb.query(String.format(sql, DuckDb.glob(root, table + "/**/[!.]*.parquet")))) {
            out.add(new TreeMap<>(r).toString());
        }
        out.sort(null);
        return out;
    }

    static long count(Path root, String table, String where) throws Exception {
        String sql = "SELECT count(*) AS n FROM read_parquet(" + DuckDb.glob(root, table + "/**/[!.]*.parquet")
                + ", hive_partitioning=true, hive_types={'run': VARCHAR, 'rank': VARCHAR})"
                + (where == null ? "" : " WHERE " + where);
        return ((Number) DuckDb.query(sql).get(0).get("n")).longValue();
    }

    /** Distinct values of a column over the Parquet files directly in one partition directory. */
    static long distinctIn(Path partition, String column) throws Exception {
        String sql = "SELECT count(DISTINCT " + column + ") AS n FROM read_parquet("
                + DuckDb.glob(partition, "[!.]*.parquet") + ", hive_partitioning=false)";
        return ((Number) DuckDb.query(sql).get(0).get("n")).longValue();
    }
}
