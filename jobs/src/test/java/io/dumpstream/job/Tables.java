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

    /** The only places a committed file may be, per table (CONTRACT section 6). */
    static final Map<String, java.util.regex.Pattern> LAYOUT = Map.of(
            "snapshots", java.util.regex.Pattern.compile("snapshots/run=[^/]+/rank=[^/]+/stage=[^/]+/part-[^/]+\\.parquet"),
            "dumps", java.util.regex.Pattern.compile("dumps/run=[^/]+/rank=[^/]+/part-[^/]+\\.parquet"),
            "rejects", java.util.regex.Pattern.compile("rejects/run=[^/]+/rank=[^/]+/part-[^/]+\\.parquet"));

    /** Fails when a visible file under ROOT is not where the contract puts it. */
    static void assertLayout(Path root) throws Exception {
        try (java.util.stream.Stream<Path> s = Files.walk(root)) {
            for (Path f : s.filter(Files::isRegularFile).toList()) {
                String rel = root.relativize(f).toString().replace('\\', '/');
                if (rel.startsWith("_") || rel.startsWith(".") || rel.contains("/.")) {
                    continue; // state, markers, hidden in-progress files
                }
                String table = rel.substring(0, Math.max(0, rel.indexOf('/')));
                java.util.regex.Pattern p = LAYOUT.get(table);
                if (p == null || !p.matcher(rel).matches()) {
                    throw new AssertionError("file outside the table layout: " + rel);
                }
            }
        }
    }

    static Map<String, List<String>> read(Path root) throws Exception {
        assertLayout(root);
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
        for (Map<String, Object> r : DuckDb.query(String.format(sql, DuckDb.glob(root, table + "/**/*.parquet")))) {
            out.add(new TreeMap<>(r).toString());
        }
        out.sort(null);
        return out;
    }

    static long count(Path root, String table, String where) throws Exception {
        String sql = "SELECT count(*) AS n FROM read_parquet(" + DuckDb.glob(root, table + "/**/*.parquet")
                + ", hive_partitioning=true, hive_types={'run': VARCHAR, 'rank': VARCHAR})"
                + (where == null ? "" : " WHERE " + where);
        return ((Number) DuckDb.query(sql).get(0).get("n")).longValue();
    }
}
