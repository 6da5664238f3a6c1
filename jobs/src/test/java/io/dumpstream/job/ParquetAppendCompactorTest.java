package io.dumpstream.job;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.dumpstream.schema.TensorSnapshot;
import io.dumpstream.table.ChannelOutputFile;
import io.dumpstream.table.DuckDb;
import io.dumpstream.table.ParquetWriters;
import io.dumpstream.table.PartWriter;
import io.dumpstream.table.TableRows;
import org.apache.flink.core.fs.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.OutputStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The compactor merges parts written by the sink's part writer into one file with every row of every part. */
class ParquetAppendCompactorTest {
    @TempDir
    java.nio.file.Path temp;

    @Test
    void mergedFileHoldsEveryRowOfEveryPartInOrder() throws Exception {
        PartWriter.Factory factory = new PartWriter.Factory(TensorSnapshot.getClassSchema(),
                ParquetWriters.Settings.defaults().withPageBytes(64 << 10).withDictionary(false));
        List<Path> parts = new ArrayList<>();
        List<Long> expected = new ArrayList<>();
        for (int p = 0; p < 3; p++) {
            java.nio.file.Path file = temp.resolve("part-" + p + ".parquet");
            try (PartWriter<TensorSnapshot> w = factory.open(new ChannelOutputFile(file))) {
                for (int i = 0; i < 4 + p; i++) {
                    int index = 100 * p + i;
                    w.write(TableRows.snapshot(index, "r", "s", TableRows.bytes(1000 + i, index), i == 0));
                    expected.add(1000L + index);
                }
            }
            parts.add(new Path(file.toUri()));
        }
        java.nio.file.Path merged = temp.resolve("merged.parquet");
        try (OutputStream out = Files.newOutputStream(merged)) {
            new ParquetAppendCompactor().doCompact(parts, out);
        }
        List<Long> got = new ArrayList<>();
        for (Map<String, Object> r : DuckDb.query("SELECT launch_id FROM read_parquet("
                + DuckDb.literal(merged.toString()) + ")")) {
            got.add(((Number) r.get("launch_id")).longValue());
        }
        assertEquals(expected, got);

        // a part waiting for its merge is named like Flink's pending files, ".part-*.parquet": Spark, Trino
        // and LandedTables skip hidden files, DuckDB's "*" does not, so a DuckDB reader of a compacting
        // table globs "[!.]*.parquet" (README, compaction)
        java.nio.file.Path partition = temp.resolve("t/run=r/stage=s");
        Files.createDirectories(partition);
        Files.copy(merged, partition.resolve("compacted-part-x-0.parquet"));
        Files.copy(temp.resolve("part-0.parquet"), partition.resolve(".part-y-0.parquet"));
        assertEquals(expected.size() + 4, count(DuckDb.glob(temp, "t/**/*.parquet")));
        assertEquals(expected.size(), count(DuckDb.glob(temp, "t/**/[!.]*.parquet")));
        assertEquals(List.of(partition.resolve("compacted-part-x-0.parquet")),
                new io.dumpstream.table.LandedTables(temp.resolve("t")).files("run=r"));
    }

    @Test
    void aPartThatIsNotParquetIsNamedInTheError() throws Exception {
        java.nio.file.Path bad = temp.resolve("part-bad.parquet");
        Files.write(bad, "not parquet".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        RuntimeException e = assertThrows(RuntimeException.class, () -> new ParquetAppendCompactor().doCompact(
                List.of(new Path(bad.toUri())), OutputStream.nullOutputStream()));
        assertEquals(new Path(bad.toUri()) + " is not a Parquet file (length is too low: 11)", e.getMessage());
    }

    private static int count(String glob) throws Exception {
        return ((Number) DuckDb.query("SELECT count(*) AS n FROM read_parquet(" + glob + ")").get(0).get("n")).intValue();
    }
}
