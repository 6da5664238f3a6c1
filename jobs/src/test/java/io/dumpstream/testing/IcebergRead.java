package io.dumpstream.testing;

import io.dumpstream.iceberg.IcebergSettings;
import io.dumpstream.iceberg.IcebergTables;
import io.dumpstream.table.DuckDb;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Types;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The Iceberg tables read back for tests: rows through Iceberg's own generic reader, the files of the
 * current snapshot and of every snapshot; and the same rows of the Hive layout read by DuckDB, in one
 * canonical text form (binaries as hex, timestamps as epoch microseconds, lists as lists).
 */
public final class IcebergRead {
    private IcebergRead() {
    }

    public static Table load(Catalog catalog, IcebergSettings s, String table) {
        return catalog.loadTable(IcebergTables.id(s, table));
    }

    /** Every row of the table's current snapshot, canonical, sorted. */
    public static List<String> rows(Table t) throws Exception {
        List<String> out = new ArrayList<>();
        if (t.currentSnapshot() == null) {
            return out;
        }
        try (CloseableIterable<Record> records = IcebergGenerics.read(t).build()) {
            for (Record r : records) {
                Map<String, String> row = new TreeMap<>();
                for (Types.NestedField f : t.schema().columns()) {
                    row.put(f.name(), canonical(r.getField(f.name())));
                }
                out.add(row.toString());
            }
        }
        out.sort(null);
        return out;
    }

    /** Every row of {@code table} in the Hive layout under {@code root}, read by DuckDB, canonical, sorted. */
    public static List<String> duckDbRows(Path root, String table) throws Exception {
        List<String> out = new ArrayList<>();
        if (!Files.isDirectory(root.resolve(table))) {
            return out;
        }
        String types = table.equals("snapshots")
                ? "{'run': VARCHAR, 'rank': INTEGER, 'stage': VARCHAR}" : "{'run': VARCHAR, 'rank': INTEGER}";
        for (Map<String, Object> r : DuckDb.query("SELECT * FROM read_parquet("
                + DuckDb.glob(root, table + "/**/[!.]*.parquet") + ", hive_partitioning=true, hive_types=" + types + ")")) {
            Map<String, String> row = new TreeMap<>();
            r.forEach((k, v) -> row.put(k, canonical(v)));
            out.add(row.toString());
        }
        out.sort(null);
        return out;
    }

    static String canonical(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof ByteBuffer b) {
            byte[] bytes = new byte[b.remaining()];
            b.duplicate().get(bytes);
            return "0x" + HexFormat.of().formatHex(bytes);
        }
        if (v instanceof byte[] b) {
            return "0x" + HexFormat.of().formatHex(b);
        }
        if (v instanceof java.time.OffsetDateTime t) {
            return "t" + micros(t.toInstant());
        }
        if (v instanceof java.time.LocalDateTime t) {
            return "t" + micros(t.toInstant(java.time.ZoneOffset.UTC));
        }
        if (v instanceof java.sql.Timestamp t) {
            return "t" + micros(t.toInstant());
        }
        if (v instanceof java.util.List<?> l) {
            List<String> items = new ArrayList<>();
            l.forEach(i -> items.add(canonical(i)));
            return items.toString();
        }
        return v.toString();
    }

    private static long micros(java.time.Instant i) {
        return i.getEpochSecond() * 1_000_000L + i.getNano() / 1000;
    }

    /** Locations of the data files of the current snapshot. */
    public static List<String> currentFiles(Table t) throws Exception {
        List<String> out = new ArrayList<>();
        if (t.currentSnapshot() == null) {
            return out;
        }
        try (CloseableIterable<FileScanTask> tasks = t.newScan().planFiles()) {
            for (FileScanTask task : tasks) {
                out.add(task.file().location());
            }
        }
        out.sort(null);
        return out;
    }

    /** Locations of the data files each snapshot added, oldest snapshot first. */
    public static List<List<String>> addedPerSnapshot(Table t) {
        List<List<String>> out = new ArrayList<>();
        List<Snapshot> snapshots = new ArrayList<>();
        t.snapshots().forEach(snapshots::add);
        snapshots.sort(java.util.Comparator.comparingLong(Snapshot::sequenceNumber));
        for (Snapshot s : snapshots) {
            List<String> added = new ArrayList<>();
            for (DataFile f : s.addedDataFiles(t.io())) {
                added.add(f.location());
            }
            added.sort(null);
            out.add(added);
        }
        return out;
    }

    /** The visible (committed) Parquet files of {@code table} under {@code root}, as Iceberg locations. */
    public static List<String> visibleFiles(Path root, String table) throws Exception {
        return visibleFiles(root, table, IcebergTables.location(root.toString()));
    }

    /**
     * The visible Parquet files of {@code table} under {@code root} (a local copy, e.g. an S3 mirror), as
     * Iceberg locations under {@code base} (the root the job wrote to).
     */
    public static List<String> visibleFiles(Path root, String table, String base) throws Exception {
        List<String> out = new ArrayList<>();
        Path dir = root.resolve(table);
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path f : s.filter(Files::isRegularFile).toList()) {
                String name = f.getFileName().toString();
                if (name.endsWith(".parquet") && !name.startsWith(".")) {
                    out.add(base + "/" + root.toAbsolutePath().normalize().relativize(f.toAbsolutePath().normalize()));
                }
            }
        }
        out.sort(null);
        return out;
    }

    /** Rows of the table's current snapshot, from its summary (0 before the first). */
    public static long totalRecords(Table t) {
        return t.currentSnapshot() == null ? 0
                : Long.parseLong(t.currentSnapshot().summary().getOrDefault("total-records", "0"));
    }

    /** Waits (two minutes at most) until the Iceberg table has {@code rows} rows. */
    public static void awaitRows(Catalog catalog, IcebergSettings s, String table, long rows) throws Exception {
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(120).toNanos();
        long n = 0;
        while (System.nanoTime() < deadline) {
            n = totalRecords(load(catalog, s, table));
            if (n >= rows) {
                return;
            }
            Thread.sleep(300);
        }
        throw new AssertionError("Iceberg table " + table + " has " + n + " rows, waited for " + rows);
    }

    /** The file name of a location. */
    public static String name(String location) {
        return location.substring(location.lastIndexOf('/') + 1);
    }

    /**
     * The table's history with compaction on: every file in exactly one snapshot's added files; the
     * {@code append} snapshots add parts (hidden names) only, the {@code replace} snapshots remove parts
     * only and add merged files only, each part removed by at most one; the merged files added are
     * exactly the visible ones; the current snapshot holds the visible files and the parts not merged yet.
     * Returns the parts merged (removed by a rewrite).
     */
    public static List<String> assertCompactedHistory(Table t, Path out, String table, String base) throws Exception {
        List<String> visible = visibleFiles(out, table, base);
        List<Snapshot> snapshots = new ArrayList<>();
        t.snapshots().forEach(snapshots::add);
        snapshots.sort(java.util.Comparator.comparingLong(Snapshot::sequenceNumber));
        List<String> added = new ArrayList<>();
        List<String> merged = new ArrayList<>();
        List<String> parts = new ArrayList<>();
        List<String> removed = new ArrayList<>();
        int appends = 0;
        int replaces = 0;
        for (Snapshot s : snapshots) {
            List<String> in = new ArrayList<>();
            s.addedDataFiles(t.io()).forEach(f -> in.add(f.location()));
            List<String> gone = new ArrayList<>();
            s.removedDataFiles(t.io()).forEach(f -> gone.add(f.location()));
            added.addAll(in);
            removed.addAll(gone);
            if (s.operation().equals("append")) {
                appends++;
                org.junit.jupiter.api.Assertions.assertEquals(List.of(), gone, table + ": an append removes nothing");
                for (String f : in) {
                    org.junit.jupiter.api.Assertions.assertTrue(name(f).startsWith("."), table
                            + ": an append adds parts only, not " + f);
                    parts.add(f);
                }
            } else {
                replaces++;
                org.junit.jupiter.api.Assertions.assertEquals("replace", s.operation(), table + ": " + s.summary());
                org.junit.jupiter.api.Assertions.assertFalse(in.isEmpty() || gone.isEmpty(), table
                        + ": a rewrite adds and removes files: " + s.summary());
                for (String f : in) {
                    org.junit.jupiter.api.Assertions.assertTrue(name(f).startsWith("compacted-"), table
                            + ": a rewrite adds merged files only, not " + f);
                    merged.add(f);
                }
                for (String f : gone) {
                    org.junit.jupiter.api.Assertions.assertTrue(name(f).startsWith("."), table
                            + ": a rewrite removes parts only, not " + f);
                }
            }
        }
        java.util.Set<String> once = new java.util.HashSet<>();
        org.junit.jupiter.api.Assertions.assertEquals(List.of(), added.stream().filter(f -> !once.add(f)).toList(),
                table + ": files added by more than one snapshot");
        java.util.Set<String> onceRemoved = new java.util.HashSet<>();
        org.junit.jupiter.api.Assertions.assertEquals(List.of(), removed.stream().filter(f -> !onceRemoved.add(f))
                .toList(), table + ": parts removed by more than one rewrite");
        org.junit.jupiter.api.Assertions.assertTrue(parts.containsAll(removed), table + ": a rewrite removed a part"
                + " no append added");
        merged.sort(null);
        org.junit.jupiter.api.Assertions.assertEquals(visible, merged, table
                + ": the merged files the rewrites added are the visible files");
        List<String> current = new ArrayList<>(visible);
        parts.stream().filter(p -> !onceRemoved.contains(p)).forEach(current::add);
        current.sort(null);
        org.junit.jupiter.api.Assertions.assertEquals(current, currentFiles(t), table
                + ": the current snapshot holds the merged files and the parts not merged yet");
        System.out.printf("iceberg %s: %d appends of %d parts, %d rewrites of %d parts into %d merged files%n", table,
                appends, parts.size(), replaces, removed.size(), merged.size());
        removed.sort(null);
        return removed;
    }

    /**
     * Every visible file of the table in exactly one snapshot's added files, none twice, none missing,
     * and the current snapshot's files exactly the visible ones.
     */
    public static void assertFilesOnce(Table t, Path out, String table) throws Exception {
        assertFilesOnce(t, out, table, IcebergTables.location(out.toString()));
    }

    /** As {@link #assertFilesOnce(Table, Path, String)}, for files under {@code base} read from the copy {@code out}. */
    public static void assertFilesOnce(Table t, Path out, String table, String base) throws Exception {
        List<String> visible = visibleFiles(out, table, base);
        List<String> added = new ArrayList<>();
        addedPerSnapshot(t).forEach(added::addAll);
        java.util.Set<String> once = new java.util.HashSet<>();
        List<String> twice = added.stream().filter(f -> !once.add(f)).toList();
        org.junit.jupiter.api.Assertions.assertEquals(List.of(), twice, table + ": files added by more than one snapshot");
        added.sort(null);
        org.junit.jupiter.api.Assertions.assertEquals(visible, added,
                table + ": the files the snapshots added are the committed files");
        org.junit.jupiter.api.Assertions.assertEquals(visible, currentFiles(t), table + ": the current snapshot's files");
    }
}
