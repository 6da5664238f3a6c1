package io.dumpstream.table;

import static io.dumpstream.table.TableRows.assertSameValues;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.dumpstream.schema.DumpOutcome;
import io.dumpstream.schema.RejectedRecord;
import io.dumpstream.schema.TensorSnapshot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TableWriterTest {

    private static final String SNAPSHOT_TYPES = "hive_types={'run': VARCHAR, 'rank': INTEGER, 'stage': VARCHAR}";
    private static final String RUN_RANK_TYPES = "hive_types={'run': VARCHAR, 'rank': INTEGER}";

    @TempDir
    Path temp;

    @Test
    void snapshotsWithHostileNamesRoundTripThroughDuckDb() throws Exception {
        Path root = temp.resolve("out");
        Map<String, TensorSnapshot> expected = new HashMap<>();
        Map<String, Object[]> partitionOf = new HashMap<>();
        try (TableWriter writer = new TableWriter(root, TableWriter.Options.defaults())) {
            int index = 0;
            for (String name : TableRows.HOSTILE) {
                for (int copy = 0; copy < 2; copy++, index++) {
                    byte[] data = index == 0 ? TableRows.bytes(4 << 20, index)
                            : index == 1 ? new byte[0] : TableRows.bytes(64 + index, index);
                    TensorSnapshot row = TableRows.snapshot(index, name, name, data, index % 2 == 0);
                    int rank = index / 2 % 3; // both copies land in one partition
                    writer.write(row, name, rank, name);
                    expected.put(row.getDumpId(), row);
                    partitionOf.put(row.getDumpId(), new Object[] {name, rank, name});
                }
            }
            TensorSnapshot noStage = TableRows.snapshot(index, "plain", "", new byte[] {1, 2}, false);
            writer.write(noStage, "plain", 0, "");
            expected.put(noStage.getDumpId(), noStage);
            partitionOf.put(noStage.getDumpId(), new Object[] {"plain", 0, ""});

            assertTrue(parquetFiles(root).isEmpty(), "nothing visible before commit");
            assertFalse(inProgressFiles(root).isEmpty());
            assertEquals(0, DuckDb.query("SELECT * FROM glob(" + DuckDb.glob(root, "**/*.parquet") + ")").size());

            List<Path> committed = writer.commit();
            assertEquals(TableRows.HOSTILE.size() + 1, committed.size(), "one file per partition");
        }
        assertTrue(inProgressFiles(root).isEmpty());
        assertOnlyUnder(root);
        for (Path file : parquetFiles(root)) {
            assertTrue(file.getFileName().toString().matches("part-[0-9a-f-]{36}\\.parquet"), file.toString());
        }

        List<Map<String, Object>> rows = DuckDb.query("SELECT * FROM read_parquet("
                + DuckDb.glob(root, "snapshots/**/*.parquet") + ", hive_partitioning=true, " + SNAPSHOT_TYPES + ")");
        assertEquals(expected.size(), rows.size());
        Map<String, Map<String, Object>> byId = rows.stream()
                .collect(Collectors.toMap(r -> (String) r.get("dump_id"), Function.identity()));
        assertEquals(expected.keySet(), byId.keySet());
        for (Map.Entry<String, TensorSnapshot> entry : expected.entrySet()) {
            Map<String, Object> row = byId.get(entry.getKey());
            assertSameValues(entry.getValue(), row);
            Object[] partition = partitionOf.get(entry.getKey());
            assertEquals(HivePartition.readBackValue("run", (String) partition[0]), row.get("run"));
            assertEquals(partition[1], row.get("rank"));
            assertEquals(HivePartition.readBackValue("stage", (String) partition[2]), row.get("stage"));
        }

        String longName = TableRows.HOSTILE.get(9);
        Map<String, Object> longRow = rows.stream().filter(r -> longName.equals(r.get("stage_name"))).findFirst().orElseThrow();
        assertEquals(longName, longRow.get("run_id"));
        String shortened = (String) longRow.get("stage");
        assertTrue(shortened.matches("x{150}/y+~[0-9a-f]{16}"), shortened);
        assertTrue(shortened.length() < longName.length());
        assertNull(byId.get("plain/3/" + (1000 + TableRows.HOSTILE.size() * 2)).get("stage"));
        assertEquals("..", rows.stream().filter(r -> "..".equals(r.get("run_id"))).findFirst().orElseThrow().get("run"));

        assertEquals(List.of("ZSTD"), codecs(root, "snapshots/**/*.parquet"));
    }

    @Test
    void dumpsAndRejectsWithNullsAndDefaultRank() throws Exception {
        Path root = temp.resolve("out");
        List<DumpOutcome> dumps = new ArrayList<>();
        List<RejectedRecord> rejects = new ArrayList<>();
        try (TableWriter writer = new TableWriter(root, TableWriter.Options.defaults())) {
            for (int i = 0; i < 6; i++) {
                String run = TableRows.HOSTILE.get(i);
                Integer rank = i % 2 == 0 ? null : i;
                DumpOutcome dump = TableRows.dump(i, run, i % 2 == 0);
                RejectedRecord reject = TableRows.reject(i, run, i % 2 == 0);
                writer.write(dump, run, rank);
                writer.write(reject, run, rank);
                dumps.add(dump);
                rejects.add(reject);
            }
            assertTrue(parquetFiles(root).isEmpty());
        }
        assertOnlyUnder(root);

        List<Map<String, Object>> dumpRows = DuckDb.query("SELECT * FROM read_parquet("
                + DuckDb.glob(root, "dumps/**/*.parquet") + ", hive_partitioning=true, " + RUN_RANK_TYPES + ")"
                + " ORDER BY dump_id");
        assertEquals(dumps.size(), dumpRows.size());
        for (int i = 0; i < dumps.size(); i++) {
            assertSameValues(dumps.get(i), dumpRows.get(i));
            assertEquals(HivePartition.readBackValue("run", TableRows.HOSTILE.get(i)), dumpRows.get(i).get("run"));
            assertEquals(i % 2 == 0 ? null : i, dumpRows.get(i).get("rank"));
        }

        List<Map<String, Object>> rejectRows = DuckDb.query("SELECT * FROM read_parquet("
                + DuckDb.glob(root, "rejects/**/*.parquet") + ", hive_partitioning=true, " + RUN_RANK_TYPES + ")"
                + " ORDER BY dump_id");
        assertEquals(rejects.size(), rejectRows.size());
        for (int i = 0; i < rejects.size(); i++) {
            assertSameValues(rejects.get(i), rejectRows.get(i));
            assertEquals(i % 2 == 0 ? null : i, rejectRows.get(i).get("rank"));
        }
        assertEquals(List.of("ZSTD"), codecs(root, "**/*.parquet"));
    }

    @Test
    void overBudgetCommitsTheLargestOpenFile() throws Exception {
        Path root = temp.resolve("out");
        TableWriter.Options options = TableWriter.Options.defaults().withOpenBytesBudget(10L << 20);
        List<TensorSnapshot> written = new ArrayList<>();
        try (TableWriter writer = new TableWriter(root, options)) {
            String[] stages = {"a", "b", "a", "c", "b", "a"};
            int[] visibleAfter = {0, 0, 1, 1, 2, 2};
            for (int i = 0; i < stages.length; i++) {
                TensorSnapshot row = TableRows.snapshot(i, "run", stages[i], TableRows.bytes(4 << 20, i), false);
                writer.write(row, "run", 0, stages[i]);
                written.add(row);
                assertTrue(writer.openBytes() <= options.openBytesBudget(), "open bytes " + writer.openBytes());
                assertEquals(visibleAfter[i], parquetFiles(root).size(), "visible after row " + i);
            }
            // a: 2 rows committed at row 2, b: 2 rows at row 4, then a and c stay open
            assertEquals(2, writer.openFiles());
        }
        List<Map<String, Object>> rows = DuckDb.query("SELECT * FROM read_parquet("
                + DuckDb.glob(root, "snapshots/**/*.parquet") + ", hive_partitioning=true, " + SNAPSHOT_TYPES + ")"
                + " ORDER BY record_index");
        assertEquals(written.size(), rows.size());
        for (int i = 0; i < written.size(); i++) {
            assertSameValues(written.get(i), rows.get(i));
        }
        assertEquals(4, parquetFiles(root).size());
    }

    @Test
    void maxOpenFilesCommitsTheLeastRecentlyWritten() throws Exception {
        Path root = temp.resolve("out");
        try (TableWriter writer = new TableWriter(root, TableWriter.Options.defaults().withMaxOpenFiles(2))) {
            writer.write(TableRows.dump(0, "r", false), "r", 0);
            writer.write(TableRows.dump(1, "r", false), "r", 1);
            writer.write(TableRows.dump(2, "r", false), "r", 0);
            writer.write(TableRows.dump(3, "r", false), "r", 2);
            assertEquals(List.of(root.resolve("dumps/run=r/rank=1")),
                    parquetFiles(root).stream().map(Path::getParent).toList());
        }
        assertEquals(4, DuckDb.query("SELECT * FROM read_parquet(" + DuckDb.glob(root, "dumps/**/*.parquet") + ")").size());
    }

    @Test
    void abortDeletesInProgressFilesAndKeepsCommittedOnes() throws Exception {
        Path root = temp.resolve("out");
        TableWriter writer = new TableWriter(root, TableWriter.Options.defaults());
        writer.write(TableRows.dump(0, "r", false), "r", 0);
        List<Path> committed = writer.commit();
        writer.write(TableRows.dump(1, "r", false), "r", 0);
        writer.write(TableRows.reject(1, "r", true), "r", null);
        writer.write(TableRows.snapshot(1, "r", "s", TableRows.bytes(1 << 20, 1), false), "r", 0, "s");
        assertEquals(3, inProgressFiles(root).size());
        writer.abort();
        assertTrue(inProgressFiles(root).isEmpty());
        assertEquals(committed, parquetFiles(root));
        assertThrows(IllegalStateException.class, () -> writer.write(TableRows.dump(2, "r", false), "r", 0));
        writer.close();
        assertEquals(1, DuckDb.query("SELECT * FROM read_parquet(" + DuckDb.glob(root, "**/*.parquet") + ")").size());
    }

    private static List<Object> codecs(Path root, String pattern) throws Exception {
        return DuckDb.query("SELECT DISTINCT compression FROM parquet_metadata(" + DuckDb.glob(root, pattern) + ")")
                .stream().map(r -> r.get("compression")).toList();
    }

    private static List<Path> parquetFiles(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".parquet")).sorted().toList();
        }
    }

    private static List<Path> inProgressFiles(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(p -> {
                String name = p.getFileName().toString();
                return name.startsWith(".") && name.endsWith(".inprogress");
            }).toList();
        }
    }

    /** Every file under the test's temp folder is under the output root. */
    private void assertOnlyUnder(Path root) throws IOException {
        try (Stream<Path> files = Files.walk(temp)) {
            files.filter(Files::isRegularFile).forEach(f -> assertTrue(f.startsWith(root), "outside the root: " + f));
        }
    }
}
