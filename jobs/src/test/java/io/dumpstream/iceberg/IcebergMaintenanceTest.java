package io.dumpstream.iceberg;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.decode.OfflineDecoder;
import io.dumpstream.table.TableWriter;
import io.dumpstream.testing.IcebergRead;
import io.dumpstream.testing.Postgres;
import io.dumpstream.testing.Vectors;

import org.apache.iceberg.HasTableOperations;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Snapshot expiry and orphan cleanup on tables of real files in a real catalog: the rows stay exactly
 * as they were, every file the live snapshot references stays, an unreferenced metadata file goes, a
 * published data file the table does not reference stays.
 */
class IcebergMaintenanceTest {
    private static final Postgres pg = Postgres.get();

    @TempDir
    Path dir;

    /** The public vectors decoded into Hive-layout tables under {@code dir/out}, committed; returns that root. */
    static Path vectorTables(Path dir) throws Exception {
        Path out = dir.resolve("out");
        try (TableWriter w = new TableWriter(out, TableWriter.Options.defaults())) {
            OfflineDecoder d = new OfflineDecoder(w, Clock.systemUTC());
            for (String name : Vectors.names()) {
                d.decode(Vectors.manifest(name), Vectors.buffer(name));
            }
            w.commit();
        }
        return out;
    }

    @Test
    void expiryAndOrphanCleanupNeverDeleteAReferencedFileAndKeepTheRows() throws Exception {
        Path out = vectorTables(dir);
        String root = IcebergTables.location(out.toString());
        IcebergSettings s = new IcebergSettings(pg.url(), root + "/_iceberg", "maintain").validate();
        Catalog catalog = IcebergTables.open(s, Map.of());
        IcebergTables.ensure(catalog, s, root);

        // each table's files in three appends (three snapshots), one file held back as "published, not committed"
        Map<String, String> heldBack = new java.util.HashMap<>();
        Map<String, Integer> appends = new java.util.HashMap<>();
        for (String table : IcebergTables.TABLES) {
            Table t = IcebergRead.load(catalog, s, table);
            List<CommittedFile> files = files(out, table);
            heldBack.put(table, files.remove(files.size() - 1).location(root));
            appends.put(table, Math.min(3, files.size()));
            for (int i = 0; i < 3; i++) {
                List<CommittedFile> part = new ArrayList<>();
                for (int j = i; j < files.size(); j += 3) {
                    part.add(files.get(j));
                }
                IcebergCommitter.append(t, IcebergTables.mapping(t), table, root, part, i + 1, "test-job", "test-op");
            }
        }
        Map<String, List<String>> rowsBefore = new java.util.HashMap<>();
        for (String table : IcebergTables.TABLES) {
            Table t = IcebergRead.load(catalog, s, table);
            rowsBefore.put(table, IcebergRead.rows(t));
            assertEquals(appends.get(table), count(t.snapshots()), table + ": an append per non-empty share");
        }
        // an orphan: a manifest-like file no metadata names, as a commit cut short leaves; everything made "old"
        Table dumps = IcebergRead.load(catalog, s, "dumps");
        Path metadata = local(dumps.location() + "/metadata");
        Path orphan = metadata.resolve("cut-short-m0.avro");
        Files.write(orphan, new byte[] {1, 2, 3});
        age(out, Duration.ofDays(30));

        ByteArrayOutputStream dry = new ByteArrayOutputStream();
        IcebergMaintenance.run(catalog, s, out.toString(), Duration.ZERO, 1, Duration.ofDays(3), true,
                new PrintStream(dry, true, StandardCharsets.UTF_8));
        assertTrue(Files.exists(orphan), "a dry run deletes nothing");
        assertTrue(dry.toString(StandardCharsets.UTF_8).contains("dumps: 3 snapshots, would expire 2; would delete 1"),
                dry.toString(StandardCharsets.UTF_8));

        ByteArrayOutputStream report = new ByteArrayOutputStream();
        List<IcebergMaintenance.Result> results = IcebergMaintenance.run(catalog, s, out.toString(),
                Duration.ZERO, 1, Duration.ofDays(3), false, new PrintStream(report, true, StandardCharsets.UTF_8));
        System.out.print(report.toString(StandardCharsets.UTF_8));
        for (IcebergMaintenance.Result r : results) {
            Table t = IcebergRead.load(catalog, s, r.table());
            assertEquals(appends.get(r.table()), r.snapshotsBefore(), r.toString());
            assertEquals(1, r.snapshotsAfter(), r.toString());
            assertEquals(List.of(heldBack.get(r.table())), r.dataNotInTable(), "the held-back file is reported");
            assertTrue(Files.exists(local(heldBack.get(r.table()))),
                    "and kept");
            assertEquals(List.of(), r.referencedMissing(), r.table());
            assertEquals(rowsBefore.get(r.table()), IcebergRead.rows(t), r.table() + ": the same rows after upkeep");
            for (String f : referenced(t)) {
                assertTrue(Files.exists(local(f)),
                        r.table() + ": a file the live snapshot references is there: " + f);
            }
        }
        assertEquals(List.of(IcebergMaintenance.key(orphan.toString())),
                results.stream().filter(r -> r.table().equals("dumps")).findFirst().orElseThrow().orphansDeleted()
                        .stream().map(IcebergMaintenance::key).toList());
        assertFalse(Files.exists(orphan), "the orphan is deleted");
        IcebergTables.close(catalog);
    }

    /** Every file the table's current metadata reaches: metadata, manifest lists, manifests, data files. */
    static List<String> referenced(Table t) throws Exception {
        List<String> out = new ArrayList<>();
        var m = ((HasTableOperations) t).operations().current();
        out.add(m.metadataFileLocation());
        for (var snap : m.snapshots()) {
            out.add(snap.manifestListLocation());
            snap.allManifests(t.io()).forEach(mf -> out.add(mf.path()));
        }
        out.addAll(IcebergRead.currentFiles(t));
        return out;
    }

    /** The committed Parquet files of a table under the root, as the committer receives them. */
    static List<CommittedFile> files(Path out, String table) throws Exception {
        List<CommittedFile> files = new ArrayList<>();
        try (Stream<Path> s = Files.walk(out.resolve(table))) {
            for (Path f : s.filter(p -> p.toString().endsWith(".parquet")).sorted().toList()) {
                String bucket = out.relativize(f.getParent()).toString();
                files.add(new CommittedFile(bucket, f.getFileName().toString(), Files.size(f), 0));
            }
        }
        return files;
    }

    /** The local path of a {@code file:} location (taken literally, as Iceberg's locations are). */
    static Path local(String location) {
        String p = location.startsWith("file://") ? location.substring("file://".length())
                : location.startsWith("file:") ? location.substring("file:".length()) : location;
        return Path.of(p);
    }

    private static void age(Path root, Duration by) throws Exception {
        FileTime old = FileTime.fromMillis(System.currentTimeMillis() - by.toMillis());
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.filter(Files::isRegularFile).toList()) {
                Files.setLastModifiedTime(p, old);
            }
        }
    }

    private static int count(Iterable<?> it) {
        int n = 0;
        for (Object o : it) {
            n++;
        }
        return n;
    }
}
