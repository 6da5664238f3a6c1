package io.dumpstream.iceberg;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.dumpstream.testing.IcebergRead;
import io.dumpstream.testing.Postgres;

import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The committer's rewrite on a real table in a real catalog: the merged parts out and the merged files in,
 * in one {@code replace} snapshot recording its checkpoint; the same rewrite again (a restart that did not
 * find its record) and a rewrite of a part the table does not hold are skipped, and the rows are unchanged.
 */
class IcebergRewriteTest {
    private static final Postgres pg = Postgres.get();

    @TempDir
    Path dir;

    @Test
    void aRewriteReplacesThePartsOnceAndIsSkippedWhenDoneOrItsPartsAreGone() throws Exception {
        Path out = IcebergMaintenanceTest.vectorTables(dir);
        String root = IcebergTables.location(out.toString());
        IcebergSettings s = new IcebergSettings(pg.url(), root + "/_iceberg", "rewrite").validate();
        Catalog catalog = IcebergTables.open(s, Map.of());
        try {
            IcebergTables.ensure(catalog, s, root);
            Table t = IcebergRead.load(catalog, s, "snapshots");
            // each vector file as a part (a hidden copy) and as its merged file (a copy named as the compactor does)
            List<CommittedFile> parts = new ArrayList<>();
            List<CommittedFile> merged = new ArrayList<>();
            for (CommittedFile f : IcebergMaintenanceTest.files(out, "snapshots")) {
                Path src = out.resolve(f.bucket).resolve(f.name);
                Files.copy(src, src.resolveSibling("." + f.name));
                Files.move(src, src.resolveSibling("compacted-" + f.name));
                parts.add(new CommittedFile(f.bucket, "." + f.name, f.size, 1, CommittedFile.APPEND));
                merged.add(new CommittedFile(f.bucket, "compacted-" + f.name, f.size, 2, CommittedFile.MERGED));
            }
            IcebergCommitter.append(t, IcebergTables.mapping(t), "snapshots", root, parts, 1, "job", "op");
            List<String> rows = IcebergRead.rows(t);
            assertEquals(parts.size(), merged.size());

            String rewriteOp = "op" + IcebergCommitter.REWRITE_SUFFIX;
            assertEquals(merged.size(), IcebergCommitter.rewrite(t, IcebergTables.mapping(t), "snapshots", root, parts,
                    merged, 2, "job", rewriteOp));
            t.refresh();
            assertEquals("replace", t.currentSnapshot().operation());
            assertEquals("2", t.currentSnapshot().summary().get(IcebergCommitter.MAX_COMMITTED_CHECKPOINT_ID));
            assertEquals(2, IcebergCommitter.maxCommittedCheckpointId(t, "job", rewriteOp));
            assertEquals(1, IcebergCommitter.maxCommittedCheckpointId(t, "job", "op"));
            List<String> want = new ArrayList<>();
            merged.forEach(f -> want.add(f.location(root)));
            want.sort(null);
            assertEquals(want, IcebergRead.currentFiles(t), "the merged files only");
            assertEquals(rows, IcebergRead.rows(t), "the same rows");

            long snapshot = t.currentSnapshot().snapshotId();
            assertEquals(0, IcebergCommitter.rewrite(t, IcebergTables.mapping(t), "snapshots", root, parts, merged, 2,
                    "job", rewriteOp), "the same rewrite again: skipped");
            List<CommittedFile> other = List.of(new CommittedFile(parts.get(0).bucket, "compacted-other.parquet",
                    parts.get(0).size, 3, CommittedFile.MERGED));
            Files.copy(out.resolve(parts.get(0).bucket).resolve(parts.get(0).name),
                    out.resolve(parts.get(0).bucket).resolve("compacted-other.parquet"));
            assertEquals(IcebergCommitter.PARTS_NOT_YET, IcebergCommitter.rewrite(t, IcebergTables.mapping(t),
                    "snapshots", root, List.of(parts.get(0)), other, 3, "job", rewriteOp),
                    "a part not in the table: not done (the committer tries again, then gives up)");
            t.refresh();
            assertEquals(snapshot, t.currentSnapshot().snapshotId(), "no snapshot for a skipped rewrite");
            assertEquals(rows, IcebergRead.rows(t), "the same rows");
        } finally {
            IcebergTables.close(catalog);
        }
    }
}
